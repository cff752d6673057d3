// Where the CUDA backend sends a batch norm (backends/cuda/batch_norm_route.h) and what a cuDNN
// refusal teaches it, without cuDNN: cuDNN gets x as NHWC with N the real batch, within
// cuDNN's bounds on N (a 64-image batch of 32x32 is 65536 rows, but N = 64); (rows, C) inputs
// and batches beyond the bounds go to the backend's own kernels; a size refusal of a 16-bit call
// never switches the dtype to float32 for good, a dtype refusal does. And the own kernels'
// per-element arithmetic (kernels/batch_norm_functors.h) against a float64 batch norm.
#include "backends/cuda/batch_norm_route.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/batch_norm_functors.h"

namespace gpuaccel::cuda {
namespace {

// cuDNN 9's statuses (cudnn_graph.h).
constexpr int kSuccess = 0, kBadParam = 2000, kNotSupported = 3000, kNotSupportedDataType = 3003,
              kExecutionFailed = 5000;

BatchNormRoute route(std::vector<int64_t> shape, BatchNormPass pass) {
  return batch_norm_route(static_cast<int>(shape.size()), shape.data(), pass);
}

TEST(CudaBatchNormRoute, AFourDimensionalInputIsDescribedWithItsRealBatchAsN) {
  // The course CNN at batch 64 on 32x32 images: 65536 rows, but cuDNN sees N = 64.
  for (BatchNormPass pass : {BatchNormPass::kInference, BatchNormPass::kTraining, BatchNormPass::kBackward}) {
    const BatchNormRoute r = route({64, 32, 32, 16}, pass);
    EXPECT_TRUE(r.cudnn) << r.reason;
    EXPECT_EQ(r.n, 64);
    EXPECT_EQ(r.h, 32);
    EXPECT_EQ(r.w, 32);
    EXPECT_EQ(r.c, 16);
  }
  // 3-D (N, L, C) and 5-D (N, D, H, W, C): the dimensions between N and C as H x W.
  const BatchNormRoute r3 = route({8, 100, 4}, BatchNormPass::kTraining);
  EXPECT_TRUE(r3.cudnn);
  EXPECT_EQ(r3.n * r3.h * r3.w, 800);
  EXPECT_EQ(r3.n, 8);
  const BatchNormRoute r5 = route({2, 3, 5, 7, 4}, BatchNormPass::kInference);
  EXPECT_TRUE(r5.cudnn);
  EXPECT_EQ(r5.n, 2);
  EXPECT_EQ(r5.h * r5.w, 3 * 5 * 7);
  EXPECT_EQ(r5.c, 4);
}

TEST(CudaBatchNormRoute, ABatchBeyondCudnnsBoundsGoesToTheOwnKernels) {
  // Inference: N <= 65535.
  EXPECT_TRUE(route({65535, 1, 1, 8}, BatchNormPass::kInference).cudnn);
  const BatchNormRoute big = route({65536, 1, 1, 8}, BatchNormPass::kInference);
  EXPECT_FALSE(big.cudnn);
  EXPECT_NE(std::string(big.reason).find("65536"), std::string::npos) << big.reason;
  // Training and backward: N <= 880801.
  EXPECT_TRUE(route({65536, 1, 1, 8}, BatchNormPass::kTraining).cudnn);
  EXPECT_TRUE(route({880801, 1, 1, 8}, BatchNormPass::kBackward).cudnn);
  EXPECT_FALSE(route({880802, 1, 1, 8}, BatchNormPass::kTraining).cudnn);
  EXPECT_FALSE(route({880802, 1, 1, 8}, BatchNormPass::kBackward).cudnn);
  // 2^31 elements or more: cuDNN indexes in 32 bits.
  EXPECT_FALSE(route({1024, 1024, 1024, 2}, BatchNormPass::kTraining).cudnn);
}

TEST(CudaBatchNormRoute, RowsAndSingleRowTrainingGoToTheOwnKernels) {
  for (BatchNormPass pass : {BatchNormPass::kInference, BatchNormPass::kTraining, BatchNormPass::kBackward}) {
    EXPECT_FALSE(route({65536, 10}, pass).cudnn);
    EXPECT_FALSE(route({4, 10}, pass).cudnn);
  }
  EXPECT_FALSE(route({1, 1, 1, 3}, BatchNormPass::kTraining).cudnn);
  EXPECT_FALSE(route({1, 1, 1, 3}, BatchNormPass::kBackward).cudnn);
  EXPECT_TRUE(route({1, 1, 1, 3}, BatchNormPass::kInference).cudnn);  // no variance computed
  EXPECT_TRUE(route({1, 2, 1, 3}, BatchNormPass::kTraining).cudnn);   // two values per channel
}

// A cuDNN stand-in: the status it answers in x's dtype and in float32, and what was asked.
struct FakeCudnn {
  int status_in_dtype = kSuccess;
  int status_in_float32 = kSuccess;
  std::vector<bool> asked;  // in_float32 of each call
  int own_runs = 0;
  int operator()(bool in_float32) {
    asked.push_back(in_float32);
    return in_float32 ? status_in_float32 : status_in_dtype;
  }
};

BatchNormRan run(const BatchNormRoute& r, const BatchNormRefusals& refused, FakeCudnn& cudnn) {
  return run_batch_norm(
      r, refused, [&](bool in_float32) { return cudnn(in_float32); }, [&] { ++cudnn.own_runs; },
      [](int status) { throw std::runtime_error("cuDNN failed: " + std::to_string(status)); });
}

TEST(CudaBatchNormRoute, ASizeRefusalOfA16BitCallNeverSwitchesTheDtypeToFloat32) {
  // cuDNN refuses this shape in every dtype (as it does N >= 65536 in inference).
  std::atomic<bool> dtype_refused{false}, shape_refused{false};
  const BatchNormRefusals refused{&dtype_refused, &shape_refused};
  const BatchNormRoute r = route({64, 32, 32, 16}, BatchNormPass::kInference);
  for (int status : {kNotSupported, kBadParam}) {
    dtype_refused = false;
    shape_refused = false;
    FakeCudnn cudnn;
    cudnn.status_in_dtype = cudnn.status_in_float32 = status;
    EXPECT_EQ(run(r, refused, cudnn), BatchNormRan::kOwnKernels);
    EXPECT_EQ(cudnn.asked, (std::vector<bool>{false, true}));  // float32 asked to tell size from dtype
    EXPECT_EQ(cudnn.own_runs, 1);
    EXPECT_FALSE(dtype_refused.load()) << status;
    EXPECT_TRUE(shape_refused.load()) << status;
    // The shape's later calls go to the own kernels without asking cuDNN again.
    EXPECT_EQ(run(r, refused, cudnn), BatchNormRan::kOwnKernels);
    EXPECT_EQ(cudnn.asked.size(), 2u);
    EXPECT_EQ(cudnn.own_runs, 2);
  }
  // Another shape of the same 16-bit dtype still goes to cuDNN in its own dtype.
  std::atomic<bool> other_shape{false};
  FakeCudnn cudnn;
  EXPECT_EQ(run(r, {&dtype_refused, &other_shape}, cudnn), BatchNormRan::kCudnn);
  EXPECT_EQ(cudnn.asked, (std::vector<bool>{false}));
}

TEST(CudaBatchNormRoute, ADtypeRefusalSendsEveryLater16BitCallToFloat32) {
  std::atomic<bool> dtype_refused{false}, shape_refused{false}, other_shape{false};
  const BatchNormRoute r = route({8, 4, 4, 16}, BatchNormPass::kTraining);
  FakeCudnn cudnn;
  cudnn.status_in_dtype = kNotSupportedDataType;
  EXPECT_EQ(run(r, {&dtype_refused, &shape_refused}, cudnn), BatchNormRan::kCudnnInFloat32);
  EXPECT_TRUE(dtype_refused.load());
  EXPECT_FALSE(shape_refused.load());
  EXPECT_EQ(cudnn.own_runs, 0);
  FakeCudnn later;
  later.status_in_dtype = kNotSupportedDataType;
  EXPECT_EQ(run(route({2, 3, 3, 5}, BatchNormPass::kInference), {&dtype_refused, &other_shape}, later),
            BatchNormRan::kCudnnInFloat32);
  EXPECT_EQ(later.asked, (std::vector<bool>{true}));  // straight to float32
}

TEST(CudaBatchNormRoute, Float32RefusalsGoToTheOwnKernelsAndFailuresAreRaised) {
  std::atomic<bool> shape_refused{false};
  const BatchNormRoute r = route({8, 4, 4, 16}, BatchNormPass::kBackward);
  FakeCudnn refusing;
  refusing.status_in_dtype = kNotSupported;
  EXPECT_EQ(run(r, {nullptr, &shape_refused}, refusing), BatchNormRan::kOwnKernels);
  EXPECT_EQ(refusing.asked, (std::vector<bool>{false}));
  EXPECT_TRUE(shape_refused.load());
  // A failed execution is not a refusal: raised, nothing remembered, nothing else run.
  std::atomic<bool> dtype_refused{false}, fresh{false};
  FakeCudnn failing;
  failing.status_in_dtype = kExecutionFailed;
  EXPECT_THROW(run(r, {&dtype_refused, &fresh}, failing), std::runtime_error);
  EXPECT_EQ(failing.asked, (std::vector<bool>{false}));
  EXPECT_EQ(failing.own_runs, 0);
  EXPECT_FALSE(dtype_refused.load());
  EXPECT_FALSE(fresh.load());
  // Routed to the own kernels: cuDNN is never asked.
  FakeCudnn unasked;
  EXPECT_EQ(run(route({65536, 1, 1, 4}, BatchNormPass::kInference), {&dtype_refused, nullptr}, unasked),
            BatchNormRan::kOwnKernels);
  EXPECT_TRUE(unasked.asked.empty());
  EXPECT_EQ(unasked.own_runs, 1);
}

// The own kernels' arithmetic over a (rows, C) batch, statistics summed in float as the kernels
// do, against float64 throughout: forward in training, then backward.
TEST(CudaBatchNormRoute, TheOwnKernelsArithmeticMatchesAFloat64BatchNorm) {
  const int64_t rows = 300, channels = 3;
  const float eps = 1e-3f;
  std::vector<float> x(rows * channels), dy(rows * channels);
  for (int64_t i = 0; i < rows * channels; ++i) {
    x[i] = static_cast<float>((i * 37) % 101) / 17.0f - 2.0f + static_cast<float>(i % channels);
    dy[i] = static_cast<float>((i * 53) % 89) / 40.0f - 1.0f;
  }
  const float gamma[channels] = {1.5f, -0.5f, 2.0f}, beta[channels] = {0.25f, 1.0f, -3.0f};
  for (int64_t c = 0; c < channels; ++c) {
    double sum = 0, sq = 0;
    for (int64_t r = 0; r < rows; ++r) sum += x[r * channels + c];
    const double mean64 = sum / rows;
    for (int64_t r = 0; r < rows; ++r) sq += (x[r * channels + c] - mean64) * (x[r * channels + c] - mean64);
    const double var64 = sq / rows;  // biased
    const double inv64 = 1.0 / std::sqrt(var64 + eps);
    float fsum = 0.0f, fsq = 0.0f;
    for (int64_t r = 0; r < rows; ++r) fsum += x[r * channels + c];
    const float mean = fsum / static_cast<float>(rows);
    for (int64_t r = 0; r < rows; ++r) fsq += (x[r * channels + c] - mean) * (x[r * channels + c] - mean);
    const float var = fsq / static_cast<float>(rows);
    const float inv = kernels::batch_norm_inv_std(var, eps);
    EXPECT_NEAR(inv, inv64, 1e-5 * inv64);
    double sdy = 0, sdyx = 0;
    float fdy = 0.0f, fdyx = 0.0f;
    for (int64_t r = 0; r < rows; ++r) {
      const double xhat64 = (x[r * channels + c] - mean64) * inv64;
      const float got = kernels::BatchNormOutputFunctor{}(x[r * channels + c], mean, inv, gamma[c], beta[c]);
      EXPECT_NEAR(got, gamma[c] * xhat64 + beta[c], 1e-4);
      sdy += dy[r * channels + c];
      sdyx += dy[r * channels + c] * xhat64;
      fdy += dy[r * channels + c];
      fdyx += dy[r * channels + c] * (x[r * channels + c] - mean) * inv;
    }
    for (int64_t r = 0; r < rows; ++r) {
      const double xhat64 = (x[r * channels + c] - mean64) * inv64;
      const double want = gamma[c] * inv64 * (dy[r * channels + c] - sdy / rows - xhat64 * sdyx / rows);
      const float got = kernels::BatchNormInputGradientFunctor{}(dy[r * channels + c], x[r * channels + c], mean, inv,
                                                                 gamma[c], fdy / rows, fdyx / rows);
      EXPECT_NEAR(got, want, 1e-4 * std::max(1.0, std::fabs(want)));
    }
  }
}

// Over one row, the own kernels' outputs are exact: y = beta, dx = 0.
TEST(CudaBatchNormRoute, OverOneRowTheOwnKernelsGiveBetaAndAZeroInputGradient) {
  const float x = 3.7f, dy = -1.25f, gamma = 2.0f, beta = 0.5f;
  const float inv = kernels::batch_norm_inv_std(0.0f, 1e-3f);  // mean = x, biased variance 0
  EXPECT_EQ(kernels::BatchNormOutputFunctor{}(x, x, inv, gamma, beta), beta);
  // mean(dy) = dy and mean(dy * xhat) = 0.
  EXPECT_EQ(kernels::BatchNormInputGradientFunctor{}(dy, x, x, inv, gamma, dy, 0.0f), 0.0f);
}

}  // namespace
}  // namespace gpuaccel::cuda
