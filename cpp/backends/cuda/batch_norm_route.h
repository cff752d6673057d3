// Which code runs a batch norm on the GPU, decided apart from cuDNN so that the CPU tests check
// it (tests/cpp/cuda_batch_norm_route_test.cc). cuDNN's spatial batch norm takes an NHWC tensor
// whose N must stay small: PyTorch sends batch norm to cuDNN only for N <= 65535 in inference and
// N <= 880801 in training, with at least 3 dimensions and fewer than 2^31 elements
// (aten/src/ATen/native/Normalization.cpp), and OneFlow and onnxruntime hit cuDNN's refusal of
// larger N. So x (N, ..., C) is described with its real batch as N and its spatial dimensions as
// H and W (never N·H·W rows as N, which a 64-image batch of 32x32 already makes 65536), and what
// cuDNN would refuse, (rows, C) inputs, and training over a single row (whose unbiased variance
// divides by 0) run in the backend's own kernels (batch_norm.cu).
//
// A refusal cuDNN still makes at run time is handled by run_batch_norm() below, which also owns
// the rule that only a refusal of the 16-bit dtype itself sends later 16-bit calls to float32.
#pragma once

#include <atomic>
#include <cstdint>

#include "backends/cuda/cudnn_status.h"

namespace gpuaccel::cuda {

enum class BatchNormPass { kInference, kTraining, kBackward };

// cuDNN's bounds on N (PyTorch's, above) and on the element count (32-bit indexing).
constexpr int64_t kCudnnBatchNormMaxInferenceN = 65535;
constexpr int64_t kCudnnBatchNormMaxTrainingN = 880801;
constexpr int64_t kCudnnBatchNormMaxElements = 0x7fffffff - 1;

struct BatchNormRoute {
  bool cudnn = false;  // false: the backend's own kernels
  // cuDNN's NHWC descriptor (when `cudnn`): N the batch, H x W the spatial dimensions.
  int64_t n = 0, h = 1, w = 1, c = 0;
  const char* reason = "";  // why not cuDNN, for messages and tests
};

// The route of a batch norm over x of `shape` (ndim >= 2, channels last).
inline BatchNormRoute batch_norm_route(int ndim, const int64_t* shape, BatchNormPass pass) {
  BatchNormRoute r;
  int64_t numel = 1;
  for (int d = 0; d < ndim; ++d) numel *= shape[d];
  r.c = shape[ndim - 1];
  const int64_t rows = r.c == 0 ? 0 : numel / r.c;
  if (ndim < 3) {
    r.reason = "(rows, C) input: cuDNN's spatial batch norm would take every row as a batch item";
    return r;
  }
  if (pass != BatchNormPass::kInference && rows == 1) {
    r.reason = "one value per channel: cuDNN's unbiased variance would divide by 0";
    return r;
  }
  if (numel > kCudnnBatchNormMaxElements) {
    r.reason = "2^31 or more elements: cuDNN's kernels index in 32 bits";
    return r;
  }
  r.n = shape[0];
  r.w = shape[ndim - 2];
  r.h = 1;
  for (int d = 1; d < ndim - 2; ++d) r.h *= shape[d];
  const int64_t max_n = pass == BatchNormPass::kInference ? kCudnnBatchNormMaxInferenceN : kCudnnBatchNormMaxTrainingN;
  if (r.n > max_n) {
    r.reason = pass == BatchNormPass::kInference ? "a batch of 65536 or more: cuDNN refuses it in inference"
                                                 : "a batch of more than 880801: cuDNN refuses it in training";
    return r;
  }
  r.cudnn = true;
  return r;
}

// What cuDNN refused before, so that a refused call is not asked again: per 16-bit dtype (then
// every call of that dtype runs cuDNN on float32 copies) and per shape (then that shape runs in
// the backend's own kernels).
struct BatchNormRefusals {
  std::atomic<bool>* dtype = nullptr;  // null for float32
  std::atomic<bool>* shape = nullptr;  // null when the route is not cuDNN
};

enum class BatchNormRan { kCudnn, kCudnnInFloat32, kOwnKernels };

// Runs one batch norm along `route`. `cudnn(in_float32)` calls cuDNN, on float32 copies when
// asked, and returns its status; `own()` runs the backend's kernels; `fail(status)` throws the
// error of a status that is not a refusal (cudnn_refused: nothing ran). A refused 16-bit call is
// asked again in float32: only when cuDNN then takes it was the dtype refused, and later calls
// of the dtype go to float32 at once; when float32 is refused too it was the shape (a size
// cuDNN will not take), which then runs in the backend's kernels and leaves the dtype alone.
template <typename Cudnn, typename Own, typename Fail>
BatchNormRan run_batch_norm(const BatchNormRoute& route, const BatchNormRefusals& refused, Cudnn&& cudnn,
                            Own&& own, Fail&& fail) {
  if (!route.cudnn || refused.shape == nullptr || refused.shape->load()) {
    own();
    return BatchNormRan::kOwnKernels;
  }
  const bool sixteen_bit = refused.dtype != nullptr;
  bool in_float32 = sixteen_bit && refused.dtype->load();
  int status = cudnn(in_float32);
  if (status != 0 && cudnn_refused(status) && sixteen_bit && !in_float32) {
    in_float32 = true;
    status = cudnn(true);
    if (status == 0) refused.dtype->store(true);
  }
  if (status == 0) return in_float32 ? BatchNormRan::kCudnnInFloat32 : BatchNormRan::kCudnn;
  if (!cudnn_refused(status)) fail(status);
  refused.shape->store(true);
  own();
  return BatchNormRan::kOwnKernels;
}

}  // namespace gpuaccel::cuda
