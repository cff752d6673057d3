// Every accepted device spelling parses to the right (type, index); everything else is a
// ValueError that quotes the input and lists the accepted forms.
#include <gtest/gtest.h>

#include "core/device_name.h"
#include "core/errors.h"

namespace gpuaccel {
namespace {

struct Case {
  const char* text;
  DeviceType type;
  std::optional<int> index;
};

TEST(DeviceName, AcceptedForms) {
  const Case cases[] = {
      {"/CPU:0", DeviceType::kCPU, 0},
      {"/GPU:1", DeviceType::kGPU, 1},
      {"/gpu:0", DeviceType::kGPU, 0},
      {"/GPU", DeviceType::kGPU, std::nullopt},
      {"/device:GPU:0", DeviceType::kGPU, 0},
      {"/physical_device:GPU:0", DeviceType::kGPU, 0},
      {"/job:localhost/replica:0/task:0/device:CPU:0", DeviceType::kCPU, 0},
      {"/job:localhost/device:GPU:3", DeviceType::kGPU, 3},
      {"cpu", DeviceType::kCPU, std::nullopt},
      {"cuda", DeviceType::kGPU, std::nullopt},
      {"cuda:1", DeviceType::kGPU, 1},
      {"CUDA:12", DeviceType::kGPU, 12},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    const DeviceSpec spec = parse_device_name(c.text);
    EXPECT_EQ(spec.type, c.type);
    EXPECT_EQ(spec.index, c.index);
  }
}

TEST(DeviceName, RejectedFormsQuoteTheInputAndListAcceptedForms) {
  for (const char* text : {"", "gpu0", "/XPU:0", "/GPU:-1", "/GPU:a", "cuda:", "cuda:1:2",
                           "/job:localhost/device:GPU:0/replica:0", "/", "tpu", " /GPU:0",
                           "/device:GPU:0/device:GPU:1", "/job:", "/GPU:99999999"}) {
    SCOPED_TRACE(text);
    try {
      parse_device_name(text);
      FAIL() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kValue);
      const std::string what = e.what();
      EXPECT_NE(what.find(std::string("'") + text + "'"), std::string::npos) << what;
      EXPECT_NE(what.find("'/job:localhost/replica:0/task:0/device:CPU:0'"), std::string::npos);
    }
  }
}

TEST(DeviceName, CanonicalNames) {
  EXPECT_EQ(physical_device_name(DeviceType::kGPU, 0), "/physical_device:GPU:0");
  EXPECT_EQ(logical_device_name(DeviceType::kCPU, 1), "/device:CPU:1");
  EXPECT_EQ(full_device_name(DeviceType::kCPU, 0), "/job:localhost/replica:0/task:0/device:CPU:0");
}

}  // namespace
}  // namespace gpuaccel
