// The tf.config state machine, driven by a simulated GPU provider so every GPU rule (growth
// must match, limits, splitting, modification after init, placement) runs without a GPU.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

#include "core/device_registry.h"
#include "core/device_scope.h"
#include "core/errors.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

GpuInfo t4() { return {"Tesla T4", int64_t{15} << 30, 7, 5, 40, 256, 5001000, ""}; }

std::unique_ptr<DeviceRegistry> make_registry(int gpus) {
  return std::make_unique<DeviceRegistry>(
      std::make_unique<SimulatedGpuProvider>(std::vector<GpuInfo>(gpus, t4())));
}

using test::expect_error;

const PhysicalDevice kCpu{DeviceType::kCPU, 0};
const PhysicalDevice kGpu0{DeviceType::kGPU, 0};
const PhysicalDevice kGpu1{DeviceType::kGPU, 1};

TEST(DeviceRegistry, ListsOneCpuAndEverySimulatedGpu) {
  auto r = make_registry(2);
  auto all = r->physical_devices();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].name(), "/physical_device:CPU:0");
  EXPECT_EQ(all[2].name(), "/physical_device:GPU:1");
  EXPECT_EQ(r->physical_devices(DeviceType::kGPU).size(), 2u);
  EXPECT_EQ(r->gpu_info(1).name, "Tesla T4");
  EXPECT_NEAR(r->gpu_info(0).memory_bandwidth_gbps(), 320.0, 0.1);
  expect_error(ErrorCode::kValue, "out of range", [&] { r->gpu_info(2); });
  EXPECT_FALSE(r->initialized());
}

TEST(DeviceRegistry, NoGpusReportsTheProvidersReason) {
  auto r = make_registry(0);
  EXPECT_TRUE(r->physical_devices(DeviceType::kGPU).empty());
  EXPECT_NE(r->gpu_unavailable_reason().find("no GPUs"), std::string::npos);
}

TEST(DeviceRegistry, MemoryGrowthRules) {
  auto r = make_registry(2);
  EXPECT_EQ(r->memory_growth(kGpu0), std::nullopt);
  r->set_memory_growth(kGpu0, true);
  EXPECT_EQ(r->memory_growth(kGpu0), true);
  expect_error(ErrorCode::kValue, "non-GPU", [&] { r->set_memory_growth(kCpu, true); });
  expect_error(ErrorCode::kValue, "Unrecognized device",
               [&] { r->set_memory_growth({DeviceType::kGPU, 5}, true); });
  // Only one of two GPUs has growth: start-up fails in TF's words, and stays uninitialized.
  expect_error(ErrorCode::kValue, "Memory growth cannot differ between GPU devices",
               [&] { r->ensure_initialized(); });
  EXPECT_FALSE(r->initialized());
  r->set_memory_growth(kGpu1, true);
  r->ensure_initialized();
  for (const auto& d : r->logical_devices(DeviceType::kGPU)) EXPECT_TRUE(d.memory_growth);
  r->set_memory_growth(kGpu0, true);  // unchanged: allowed after init
  expect_error(ErrorCode::kRuntime, "Physical devices cannot be modified after being initialized",
               [&] { r->set_memory_growth(kGpu0, false); });
}

TEST(DeviceRegistry, HiddenGpuDoesNotTakePartInGrowthCheck) {
  auto r = make_registry(2);
  r->set_memory_growth(kGpu0, true);
  r->set_visible_devices({kGpu0}, DeviceType::kGPU);
  r->ensure_initialized();
  ASSERT_EQ(r->logical_devices(DeviceType::kGPU).size(), 1u);
}

TEST(DeviceRegistry, ForcedGrowthFromEnvironment) {
  auto r = make_registry(1);
  ::setenv("GPUACCEL_FORCE_GPU_ALLOW_GROWTH", "true", 1);
  r->ensure_initialized();
  ::unsetenv("GPUACCEL_FORCE_GPU_ALLOW_GROWTH");
  EXPECT_TRUE(r->logical_devices(DeviceType::kGPU).at(0).memory_growth);
}

TEST(DeviceRegistry, VisibilityRules) {
  auto r = make_registry(2);
  r->set_visible_devices({}, DeviceType::kGPU);
  EXPECT_TRUE(r->visible_devices(DeviceType::kGPU).empty());
  EXPECT_EQ(r->visible_devices().size(), 1u);
  EXPECT_EQ(r->physical_devices().size(), 3u);  // physical list is unchanged
  expect_error(ErrorCode::kValue, "Unrecognized device",
               [&] { r->set_visible_devices({kCpu}, DeviceType::kGPU); });
  expect_error(ErrorCode::kValue, "CPU cannot be hidden",
               [&] { r->set_visible_devices({kGpu0}); });
  r->set_visible_devices({kGpu1}, DeviceType::kGPU);
  r->ensure_initialized();
  auto gpus = r->logical_devices(DeviceType::kGPU);
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].physical_index, 1);
  r->set_visible_devices({kGpu1}, DeviceType::kGPU);  // unchanged: fine
  expect_error(ErrorCode::kRuntime, "Visible devices cannot be modified after being initialized",
               [&] { r->set_visible_devices({kGpu0}, DeviceType::kGPU); });
}

TEST(DeviceRegistry, LogicalDevicesSplitGpusAndCpu) {
  auto r = make_registry(2);
  r->set_logical_device_configuration(kGpu0, {{1024, {}, {}}, {2048, {}, {}}});
  r->set_logical_device_configuration(kCpu, {{}, {}, {}});
  expect_error(ErrorCode::kValue, "Setting memory limit is required for GPU virtual devices",
               [&] { r->set_logical_device_configuration(kGpu1, {{}}); });
  expect_error(ErrorCode::kValue, "positive",
               [&] { r->set_logical_device_configuration(kGpu1, {{0, {}, {}}}); });
  expect_error(ErrorCode::kValue, "when virtual devices configured",
               [&] { r->set_memory_growth(kGpu0, true); });
  ASSERT_TRUE(r->logical_device_configuration(kGpu0).has_value());
  EXPECT_EQ(r->logical_device_configuration(kGpu0)->size(), 2u);
  EXPECT_FALSE(r->logical_device_configuration(kGpu1).has_value());

  auto gpus = r->logical_devices(DeviceType::kGPU);
  ASSERT_EQ(gpus.size(), 3u);
  EXPECT_EQ(gpus[0].name(), "/device:GPU:0");
  EXPECT_EQ(gpus[1].memory_limit_bytes, int64_t{2048} << 20);
  EXPECT_EQ(gpus[2].physical_index, 1);
  EXPECT_EQ(gpus[2].memory_limit_bytes, std::nullopt);
  EXPECT_EQ(r->logical_devices(DeviceType::kCPU).size(), 3u);
  expect_error(ErrorCode::kRuntime, "Virtual devices cannot be modified after being initialized",
               [&] { r->set_logical_device_configuration(kCpu, {{}}); });
  r->set_logical_device_configuration(kCpu, {{}, {}, {}});  // unchanged: fine
}

TEST(DeviceRegistry, CpuLogicalDevicesMayCarryAMemoryLimit) {
  auto r = make_registry(0);
  r->set_logical_device_configuration(kCpu, {{64, {}, {}}});
  EXPECT_EQ(r->logical_devices().at(0).memory_limit_bytes, int64_t{64} << 20);
}

TEST(DeviceRegistry, PlacementPrefersGpuAndFallsBackUnderSoftPlacement) {
  auto r = make_registry(1);
  std::vector<std::string> log;
  r->set_placement_logger([&](const std::string& line) { log.push_back(line); });
  r->set_log_device_placement(true);
  EXPECT_EQ(r->place_op("MatMul", std::nullopt).name(), "/device:GPU:0");
  EXPECT_EQ(r->place_op("MatMul", DeviceSpec{DeviceType::kCPU, 0}).name(), "/device:CPU:0");
  EXPECT_EQ(r->place_op("MatMul", DeviceSpec{DeviceType::kGPU, 3}).name(), "/device:CPU:0");
  ASSERT_EQ(log.size(), 3u);
  EXPECT_EQ(log[0], "Executing op MatMul in device /job:localhost/replica:0/task:0/device:GPU:0");
  r->set_soft_device_placement(false);
  expect_error(ErrorCode::kInvalidArgument,
               "Could not satisfy device specification '/job:localhost/replica:0/task:0/device:GPU:3'",
               [&] { r->place_op("MatMul", DeviceSpec{DeviceType::kGPU, 3}); });
  EXPECT_TRUE(r->initialized());
}

TEST(DeviceRegistry, DefaultPlacementWithoutGpuIsCpu) {
  auto r = make_registry(0);
  EXPECT_EQ(r->place_op("Add", std::nullopt).full_name(),
            "/job:localhost/replica:0/task:0/device:CPU:0");
}

TEST(DeviceScope, NestsPerThread) {
  EXPECT_EQ(current_device_scope(), std::nullopt);
  {
    DeviceScope outer(DeviceSpec{DeviceType::kGPU, 0});
    {
      DeviceScope inner(DeviceSpec{DeviceType::kCPU, 0});
      EXPECT_EQ(current_device_scope()->type, DeviceType::kCPU);
    }
    EXPECT_EQ(current_device_scope()->type, DeviceType::kGPU);
  }
  EXPECT_EQ(current_device_scope(), std::nullopt);
  expect_error(ErrorCode::kRuntime, "exited more often", [] { pop_device_scope(); });
}

}  // namespace
}  // namespace gpuaccel
