// NCCL's wheel found beside the wheel cuBLASLt came from (backends/cuda/nccl_wheel_path.h):
// the CUDA 12 layout (one package per library) and the CUDA 13 one (one folder), nothing for a
// cuBLASLt outside a wheel; and the candidate that exists in a wheel layout is a loadable NCCL.
#include "backends/cuda/nccl_wheel_path.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

namespace gpuaccel::cuda {
namespace {

TEST(CudaNcclWheelPath, BesideACuda12OrCuda13WheelsCublasLt) {
  const std::string site = "/usr/local/lib/python3.12/dist-packages";
  EXPECT_EQ(nccl_wheel_candidates(site + "/nvidia/cublas/lib/libcublasLt.so.12"),
            (std::vector<std::string>{site + "/nvidia/cublas/lib/libnccl.so.2",
                                      site + "/nvidia/nccl/lib/libnccl.so.2"}));
  EXPECT_EQ(nccl_wheel_candidates(site + "/nvidia/cu13/lib/libcublasLt.so.13"),
            (std::vector<std::string>{site + "/nvidia/cu13/lib/libnccl.so.2",
                                      site + "/nvidia/nccl/lib/libnccl.so.2"}));
}

TEST(CudaNcclWheelPath, NothingForACublasLtOutsideAWheel) {
  EXPECT_TRUE(nccl_wheel_candidates("/usr/local/cuda/lib64/libcublasLt.so.13").empty());
  EXPECT_TRUE(nccl_wheel_candidates("/usr/lib/x86_64-linux-gnu/libcublasLt.so.12").empty());
  EXPECT_TRUE(nccl_wheel_candidates("libcublasLt.so.12").empty());
  EXPECT_TRUE(nccl_wheel_candidates("").empty());
  EXPECT_TRUE(nccl_wheel_candidates("/opt/nvidia/cublas/libcublasLt.so.12").empty());  // not .../lib
}

#ifdef GPUACCEL_TEST_FAKE_NCCL_LIBRARY
TEST(CudaNcclWheelPath, TheCandidateInACuda12WheelLayoutLoads) {
  char pattern[] = "/tmp/gpuaccel_nccl_wheel_XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::filesystem::path site = pattern;
  std::filesystem::create_directories(site / "nvidia/cublas/lib");
  std::filesystem::create_directories(site / "nvidia/nccl/lib");
  std::filesystem::copy_file(GPUACCEL_TEST_FAKE_NCCL_LIBRARY, site / "nvidia/nccl/lib/libnccl.so.2");
  void* loaded = nullptr;
  for (const std::string& candidate : nccl_wheel_candidates((site / "nvidia/cublas/lib/libcublasLt.so.12").string())) {
    loaded = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (loaded != nullptr) break;
  }
  ASSERT_NE(loaded, nullptr);
  EXPECT_NE(dlsym(loaded, "ncclGetVersion"), nullptr);
  dlclose(loaded);
  std::filesystem::remove_all(site);
}
#endif

}  // namespace
}  // namespace gpuaccel::cuda
