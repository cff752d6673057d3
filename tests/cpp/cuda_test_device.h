// The fixture of the GoogleTests that run ops on a real GPU (compiled with the CUDA backend;
// skipped where there is no device): the CUDA library under test is the one this build made
// (GPUACCEL_TEST_CUDA_BACKEND), found through the loader like gpuaccel finds it, and its GPU 0's
// Backend is the one op frontends get. Raw device memory comes from the library.
// A GPUACCEL_CUDA_BACKEND set by the caller wins over the build folder's path compiled in here:
// the GPU kit (.ci/gpu_kit) runs this binary on another machine, where that path does not
// exist and the backend is the kit's installed copy.
#pragma once

#ifdef GPUACCEL_TEST_CUDA_BACKEND

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/device_registry.h"

namespace gpuaccel {

// Points the loader at this build's CUDA backend unless GPUACCEL_CUDA_BACKEND is already set
// (an override must win: overwriting it made a binary run from another path report every GPU
// test as skipped). Before the loader's first use: it caches its status per process.
inline void use_test_cuda_backend_unless_overridden() {
  setenv("GPUACCEL_CUDA_BACKEND", GPUACCEL_TEST_CUDA_BACKEND, /*overwrite=*/0);
}

class CudaDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    use_test_cuda_backend_unless_overridden();
    const auto gpus = DeviceRegistry::instance().logical_devices(DeviceType::kGPU);
    if (gpus.empty() || cuda_library() == nullptr) {
      GTEST_SKIP() << "no CUDA device: " << cuda_backend_status().reason;
    }
    library_ = cuda_library();
    backend_ = &backend_for(gpus[0]);
    ordinal_ = gpus[0].physical_index;
    GpuInfo info;
    std::string err;
    ASSERT_EQ(library_->device_properties(ordinal_, &info, &err), CudaStatus::kOk) << err;
    cc_ = info.major * 10 + info.minor;
  }
  void TearDown() override {
    std::string err;
    for (void* p : allocations_) library_->free_device(ordinal_, p, &err);
  }
  // Device memory of `bytes` (at least 1), freed at the end of the test.
  void* device_alloc(size_t bytes) {
    void* p = nullptr;
    std::string err;
    EXPECT_EQ(library_->malloc_device(ordinal_, bytes == 0 ? 1 : bytes, &p, &err), CudaStatus::kOk) << err;
    allocations_.push_back(p);
    return p;
  }

  CudaLibrary* library_ = nullptr;
  Backend* backend_ = nullptr;
  int ordinal_ = 0;
  int cc_ = 0;
  std::vector<void*> allocations_;
};

}  // namespace gpuaccel

#endif  // GPUACCEL_TEST_CUDA_BACKEND
