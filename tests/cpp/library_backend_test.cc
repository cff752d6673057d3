// A backend made by another shared library (backends/library/library_backend.h) with the fake CUDA
// library (fake_cuda_library.h, built with hidden symbols like libgpuaccel_cuda.so): each way an
// op can fail inside the library reaches the core as its typed Error, workspaces come from the
// lent pool and show in its stats, and the backend is made once per device.
#include "backends/library/library_backend.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include <cmath>
#include <string>
#include <vector>

#include "core/device_registry.h"
#include "core/errors.h"
#include "fake_cuda_library.h"
#include "test_helpers.h"
#include "memory/memory_manager.h"

namespace gpuaccel {
namespace {

using test::cpu;
using test::f32_view;

class LibraryBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv(GPUACCEL_FAKE_CUDA_FAULTS_ENV, "1", 1);
    fake_ = open_fake_cuda();
    ASSERT_NE(fake_.library, nullptr);
    ASSERT_NE(fake_.counters, nullptr);
    device_ = std::make_unique<LibraryBackend>(*fake_.library, 0, cpu());
  }
  // The Error `body` throws (fails the test when it throws nothing or something else).
  template <typename Body>
  Error error_of(Body&& body) {
    try {
      body();
    } catch (const Error& e) {
      return e;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not the core's Error: " << e.what();
      return Error(ErrorCode::kValue, "", "");
    }
    ADD_FAILURE() << "nothing thrown";
    return Error(ErrorCode::kValue, "", "");
  }

  void TearDown() override { unsetenv(GPUACCEL_FAKE_CUDA_FAULTS_ENV); }

  FakeCuda fake_;
  std::unique_ptr<LibraryBackend> device_;
};

TEST_F(LibraryBackendTest, OpsRunInTheLibrary) {
  unsetenv(GPUACCEL_FAKE_CUDA_FAULTS_ENV);
  std::vector<float> x = {0.0f, 1.0f, -2.0f}, y(3, -1.0f);
  const int64_t ops = fake_.counters->ops;
  device_->backend().unary(UnaryOp::kExp, f32_view(x.data(), 3), f32_view(y.data(), 3));
  EXPECT_EQ(fake_.counters->ops, ops + 1);
  EXPECT_FLOAT_EQ(y[1], std::exp(1.0f));
  EXPECT_FLOAT_EQ(y[2], std::exp(-2.0f));
  device_->backend().unary(UnaryOp::kTanh, f32_view(x.data(), 3), f32_view(y.data(), 3));  // no fault now
  EXPECT_FLOAT_EQ(y[1], std::tanh(1.0f));
  EXPECT_STREQ(device_->backend().name(), "cuda");
}

TEST_F(LibraryBackendTest, TheLibrarysTypedErrorBecomesTheCoresError) {
  std::vector<float> x(3), y(3);
  const Error e = error_of([&] {
    device_->backend().unary(UnaryOp::kLog, f32_view(x.data(), 3), f32_view(y.data(), 3));
  });
  EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(e.op(), "unary");
  EXPECT_EQ(std::string(e.what()), "[unary] fake: log refused");

  const Error u = error_of([&] {
    device_->backend().softmax_forward(f32_view(x.data(), 3), false, f32_view(y.data(), 3));
  });
  EXPECT_EQ(u.code(), ErrorCode::kUnimplemented);
  EXPECT_EQ(u.op(), "softmax_forward");  // the op list's name, in every backend
}

TEST_F(LibraryBackendTest, AnyOtherExceptionBecomesAnInternalError) {
  std::vector<float> x(3), y(3);
  const Error e = error_of([&] {
    device_->backend().unary(UnaryOp::kSqrt, f32_view(x.data(), 3), f32_view(y.data(), 3));
  });
  EXPECT_EQ(e.code(), ErrorCode::kInternal);
  EXPECT_EQ(std::string(e.what()), "[unary] fake: a plain std::runtime_error");
}

TEST_F(LibraryBackendTest, WorkspacesComeFromThePoolAndItsOutOfMemoryPassesThrough) {
  // kAbs asks the lent pool for 1 MiB per element and gives it back.
  std::vector<float> x(4), y(4);
  auto pool = MemoryManager::instance().allocator_for(cpu());
  const MemoryStats before = pool->stats();
  device_->backend().unary(UnaryOp::kAbs, f32_view(x.data(), 4), f32_view(y.data(), 4));
  const MemoryStats after = pool->stats();
  EXPECT_EQ(after.requested_bytes.allocated - before.requested_bytes.allocated, int64_t{4} << 20);
  EXPECT_EQ(after.requested_bytes.current, before.requested_bytes.current);  // given back

  // 2^40 elements: 2^60 bytes, more than any pool has: the pool's own ResourceExhaustedError,
  // thrown by the core inside the library's op, leaves it unchanged but for the op's name.
  TensorView huge = f32_view(x.data(), int64_t{1} << 40);
  const Error e = error_of([&] { device_->backend().unary(UnaryOp::kAbs, huge, huge); });
  EXPECT_EQ(e.code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(e.op(), "unary");
  EXPECT_NE(std::string(e.what()).find("workspace of"), std::string::npos) << e.what();
}

TEST_F(LibraryBackendTest, ADeviceTheLibraryDoesNotHaveIsAnError) {
  try {
    LibraryBackend missing(*fake_.library, 7, cpu());
    ADD_FAILURE() << "a backend for device 7";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("no device 7"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace gpuaccel
