// The loader's choice between the release wheel's two CUDA backends (libgpuaccel_cuda.so built
// with CUDA 13, libgpuaccel_cuda12.so with CUDA 12) over (driver's CUDA version, which files are
// installed, which CUDA runtime the process already loaded) -> file and reason: Colab's CUDA 12
// driver with PyTorch cu12 loaded, a CUDA 13 machine, no driver, a driver too old for both.
#include "core/cuda_loader/cuda_backend_choice.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace gpuaccel {
namespace {

constexpr const char* kCuda13 = "libgpuaccel_cuda.so";
constexpr const char* kCuda12 = "libgpuaccel_cuda12.so";

std::vector<CudaBackendCandidate> wheel(bool with13 = true, bool with12 = true) {
  return {{kCuda13, 13000, with13}, {kCuda12, 12000, with12}};
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string refusal_of(const CudaBackendChoice& c, const std::string& file) {
  for (const std::string& r : c.refused) {
    if (r.rfind(file + ":", 0) == 0) return r;
  }
  return "";
}

TEST(CudaBackendChoice, ColabDriverOfCuda12PicksTheCuda12BackendAndSaysTheOtherNeedsANewerDriver) {
  const CudaBackendChoice c = choose_cuda_backend(wheel(), 12040, 0);
  EXPECT_EQ(c.file, kCuda12);
  EXPECT_EQ(c.cuda_version, 12000);
  EXPECT_TRUE(contains(c.reason, "CUDA 12.4")) << c.reason;
  EXPECT_TRUE(contains(refusal_of(c, kCuda13), "driver too old for CUDA 13.0")) << refusal_of(c, kCuda13);
}

TEST(CudaBackendChoice, Cuda13DriverPicksTheNewestBackend) {
  const CudaBackendChoice c = choose_cuda_backend(wheel(), 13000, 0);
  EXPECT_EQ(c.file, kCuda13);
  EXPECT_TRUE(contains(c.reason, "newest backend it can run")) << c.reason;
  EXPECT_TRUE(contains(refusal_of(c, kCuda12), "was preferred")) << refusal_of(c, kCuda12);
}

TEST(CudaBackendChoice, ALoadedCuda12RuntimeWinsOnACuda13Driver) {
  // PyTorch cu12 imported first on a CUDA 13 machine: its libcudnn.so.9 (CUDA 12's) is the one
  // the process has, so the CUDA 12 backend is the one that can share it.
  const CudaBackendChoice c = choose_cuda_backend(wheel(), 13000, 12);
  EXPECT_EQ(c.file, kCuda12);
  EXPECT_TRUE(contains(c.reason, "libcudart.so.12")) << c.reason;
  EXPECT_TRUE(contains(refusal_of(c, kCuda13), "already loaded CUDA 12's runtime")) << refusal_of(c, kCuda13);
}

TEST(CudaBackendChoice, ALoadedRuntimeTheDriverCannotRunDoesNotDecide) {
  // A CUDA 13 runtime loaded under a CUDA 12 driver cannot work either; the driver decides.
  const CudaBackendChoice c = choose_cuda_backend(wheel(), 12020, 13);
  EXPECT_EQ(c.file, kCuda12);
  EXPECT_TRUE(contains(c.reason, "CUDA 12.2")) << c.reason;
}

TEST(CudaBackendChoice, ALoadedRuntimeWithoutItsBackendFallsBackToTheDriver) {
  const CudaBackendChoice c = choose_cuda_backend(wheel(true, false), 13000, 12);
  EXPECT_EQ(c.file, kCuda13);
  EXPECT_TRUE(contains(refusal_of(c, kCuda12), "not installed")) << refusal_of(c, kCuda12);
}

TEST(CudaBackendChoice, NoDriverPicksTheNewestSoItsLoadReportsNoDriver) {
  const CudaBackendChoice c = choose_cuda_backend(wheel(), 0, 0);
  EXPECT_EQ(c.file, kCuda13);
  EXPECT_TRUE(contains(c.reason, "no driver version is known")) << c.reason;
}

TEST(CudaBackendChoice, ADriverOlderThanEveryBackendGetsTheOldestWhoseUpdateIsSmallest) {
  const CudaBackendChoice c = choose_cuda_backend(wheel(), 11080, 0);
  EXPECT_EQ(c.file, kCuda12);
  EXPECT_TRUE(contains(c.reason, "older than every installed backend")) << c.reason;
  EXPECT_TRUE(contains(refusal_of(c, kCuda13), "driver too old")) << refusal_of(c, kCuda13);
}

TEST(CudaBackendChoice, OnlyTheCuda13BackendOnACuda12DriverIsStillChosenForItsDriverTooOldReport) {
  const CudaBackendChoice c = choose_cuda_backend(wheel(true, false), 12040, 0);
  EXPECT_EQ(c.file, kCuda13);
  EXPECT_TRUE(contains(c.reason, "older than every installed backend")) << c.reason;
}

TEST(CudaBackendChoice, NoBackendInstalledChoosesNothingAndNamesEachMissingFile) {
  const CudaBackendChoice c = choose_cuda_backend(wheel(false, false), 13000, 0);
  EXPECT_TRUE(c.file.empty());
  EXPECT_EQ(c.refused.size(), 2u);
  EXPECT_TRUE(contains(refusal_of(c, kCuda13), "not installed"));
}

TEST(CudaBackendChoice, CandidatesAddTheCuda12BackendOnlyBesideAPrimaryOfAnotherCuda) {
  std::set<std::string> asked;
  auto present = [&](const std::string& file) { asked.insert(file); return file == kCuda13; };
  const auto release = cuda_backend_candidates(kCuda13, 13000, present);
  ASSERT_EQ(release.size(), 2u);
  EXPECT_TRUE(release[0].present);
  EXPECT_EQ(release[1].file, kCuda12);
  EXPECT_EQ(release[1].cuda_version, 12000);
  EXPECT_FALSE(release[1].present);
  EXPECT_EQ(asked, (std::set<std::string>{kCuda13, kCuda12}));
  // A source build on Colab (nvcc 12): its own libgpuaccel_cuda.so is the CUDA 12 backend.
  EXPECT_EQ(cuda_backend_candidates(kCuda13, 12060, present).size(), 1u);
  EXPECT_TRUE(cuda_backend_candidates("", 0, present).empty());
}

}  // namespace
}  // namespace gpuaccel
