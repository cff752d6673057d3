// Batch normalization in the backend's own kernels, for what cuDNN does not take
// (batch_norm_route.h): per-channel statistics of a (rows, C) view as column sums, then one
// element pass with the arithmetic of kernels/batch_norm_functors.h. Column sums go in fixed
// chunks of rows, each chunk's partial sums then added in chunk order (no atomics), so results
// are deterministic; mean and variance take two passes (the variance sums squared deviations
// from the mean, not x² - mean², which cancels badly). float16/bfloat16 are loaded as float32
// and stored rounded. The kernels read the views as contiguous (rows, C).
#include <algorithm>
#include <string>

#include "backends/cuda/batch_norm_kernels.h"
#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/batch_norm_functors.h"

namespace gpuaccel::cuda {

namespace {

constexpr int kColumns = 32;  // channels per block: one warp reads 32 neighbouring values of a row
constexpr int kRowsInFlight = 8;
constexpr int64_t kMinChunkRows = 64;
constexpr int64_t kMaxChunks = 1024;

// The two per-element terms whose column sums a pass needs, for element (row r, channel c).
template <typename T>
struct SumOfX {  // (x, unused)
  const T* x;
  __device__ float2 operator()(int64_t r, int64_t c, int64_t channels) const {
    return make_float2(Elem<T>::load(x[r * channels + c]), 0.0f);
  }
};
template <typename T>
struct SumOfSquaredDeviation {  // ((x - mean)², unused)
  const T* x;
  const float* mean;
  __device__ float2 operator()(int64_t r, int64_t c, int64_t channels) const {
    const float d = Elem<T>::load(x[r * channels + c]) - mean[c];
    return make_float2(d * d, 0.0f);
  }
};
template <typename T>
struct SumOfGradients {  // (dy, dy * xhat)
  const T* x;
  const T* dy;
  const float* mean;
  const float* var;
  float epsilon;
  __device__ float2 operator()(int64_t r, int64_t c, int64_t channels) const {
    const float g = Elem<T>::load(dy[r * channels + c]);
    const float xhat = (Elem<T>::load(x[r * channels + c]) - mean[c]) * kernels::batch_norm_inv_std(var[c], epsilon);
    return make_float2(g, g * xhat);
  }
};

// Partial column sums of `term` over chunk blockIdx.y's rows, for 32 channels per block, into
// part0/part1 + chunk * channels.
template <typename Term>
__global__ void column_sums_kernel(Term term, int64_t rows, int64_t channels, int64_t rows_per_chunk, float* part0,
                                   float* part1) {
  __shared__ float s0[kRowsInFlight][kColumns + 1];
  __shared__ float s1[kRowsInFlight][kColumns + 1];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kColumns + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t r1 = min(rows, r0 + rows_per_chunk);
  float a = 0.0f, b = 0.0f;
  if (c < channels) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kRowsInFlight) {
      const float2 t = term(r, c, channels);
      a += t.x;
      b += t.y;
    }
  }
  s0[threadIdx.y][threadIdx.x] = a;
  s1[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < channels) {
    for (int k = 1; k < kRowsInFlight; ++k) {
      a += s0[k][threadIdx.x];
      b += s1[k][threadIdx.x];
    }
    part0[static_cast<int64_t>(blockIdx.y) * channels + c] = a;
    part1[static_cast<int64_t>(blockIdx.y) * channels + c] = b;
  }
}

// out = (sum of the chunks' partial sums, in chunk order) / divisor, per channel.
__global__ void sum_chunks_kernel(const float* part0, const float* part1, int64_t chunks, int64_t channels,
                                  float divisor, float* out0, float* out1) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels; c += step) {
    float a = 0.0f, b = 0.0f;
    for (int64_t k = 0; k < chunks; ++k) {
      a += part0[k * channels + c];
      b += part1[k * channels + c];
    }
    if (out0 != nullptr) out0[c] = a / divisor;
    if (out1 != nullptr) out1[c] = b / divisor;
  }
}

template <typename T>
__global__ void normalize_kernel(const T* x, const float* gamma, const float* beta, const float* mean,
                                 const float* var, float epsilon, T* y, int64_t n, int64_t channels) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t c = i % channels;
    y[i] = Elem<T>::store(kernels::BatchNormOutputFunctor{}(
        Elem<T>::load(x[i]), mean[c], kernels::batch_norm_inv_std(var[c], epsilon), gamma[c], beta[c]));
  }
}

// dx from the column sums dbeta = sum(dy) and dgamma = sum(dy * xhat) over `rows`.
template <typename T>
__global__ void input_gradient_kernel(const T* x, const T* dy, const float* gamma, const float* mean,
                                      const float* var, const float* dbeta, const float* dgamma, float rows,
                                      float epsilon, T* dx, int64_t n, int64_t channels) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    const int64_t c = i % channels;
    dx[i] = Elem<T>::store(kernels::BatchNormInputGradientFunctor{}(
        Elem<T>::load(dy[i]), Elem<T>::load(x[i]), mean[c], kernels::batch_norm_inv_std(var[c], epsilon), gamma[c],
        dbeta[c] / rows, dgamma[c] / rows));
  }
}

// Column sums of a (rows, channels) view in fixed chunks: `sums(term, divisor, out0, out1)`
// queues the two launches, with the partial sums in a buffer of this object.
class ColumnSums {
 public:
  ColumnSums(int device, int64_t rows, int64_t channels)
      : rows_(rows),
        channels_(channels),
        chunks_(std::max<int64_t>(1, std::min(kMaxChunks, (rows + kMinChunkRows - 1) / kMinChunkRows))),
        rows_per_chunk_((rows + chunks_ - 1) / chunks_),
        partial_(device, 2 * static_cast<size_t>(chunks_ * channels) * sizeof(float)),
        stream_(device_stream(device)) {
    GA_CUDA_REQUIRE((channels + kColumns - 1) / kColumns <= 0x7fffffff, "batch_norm: too many channels");
  }

  template <typename Term>
  void operator()(const Term& term, float divisor, float* out0, float* out1) {
    float* part0 = static_cast<float*>(partial_.get());
    float* part1 = part0 + chunks_ * channels_;
    const dim3 grid(static_cast<unsigned>((channels_ + kColumns - 1) / kColumns), static_cast<unsigned>(chunks_));
    column_sums_kernel<Term><<<grid, dim3(kColumns, kRowsInFlight), 0, stream_>>>(term, rows_, channels_,
                                                                                  rows_per_chunk_, part0, part1);
    GA_CUDA_CHECK(cudaGetLastError());
    sum_chunks_kernel<<<blocks_for(channels_), kThreadsPerBlock, 0, stream_>>>(part0, part1, chunks_, channels_,
                                                                               divisor, out0, out1);
    GA_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t rows_, channels_, chunks_, rows_per_chunk_;
  ScratchBuffer partial_;
  cudaStream_t stream_;
};

const float* f32(const TensorView& v) { return static_cast<const float*>(v.data); }
float* f32_out(const TensorView& v) { return static_cast<float*>(v.data); }

}  // namespace

void batch_norm_forward_own(int device, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                            const TensorView& mean, const TensorView& var, double epsilon, bool training,
                            const TensorView& y) {
  const char* op = "batch_norm_forward";
  GA_CUDA_REQUIRE(x.is_contiguous() && y.is_contiguous() && x.numel() == y.numel(),
                  "batch_norm_forward: x and y must be contiguous and alike");
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t channels = x.shape[x.ndim - 1];
  const int64_t rows = n / channels;
  const float eps = static_cast<float>(epsilon);
  const cudaStream_t stream = device_stream(device);
  dispatch_floating(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    if (training) {
      ColumnSums sums(device, rows, channels);
      sums(SumOfX<T>{xp}, static_cast<float>(rows), f32_out(mean), nullptr);
      sums(SumOfSquaredDeviation<T>{xp, f32(mean)}, static_cast<float>(rows), f32_out(var), nullptr);
    }
    normalize_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        xp, f32(gamma), f32(beta), f32(mean), f32(var), eps, static_cast<T*>(y.data), n, channels);
    GA_CUDA_CHECK(cudaGetLastError());
  });
}

void batch_norm_backward_own(int device, const TensorView& x, const TensorView& dy, const TensorView& gamma,
                             const TensorView& mean, const TensorView& var, double epsilon, const TensorView& dx,
                             const TensorView& dgamma, const TensorView& dbeta) {
  const char* op = "batch_norm_backward";
  GA_CUDA_REQUIRE(x.is_contiguous() && dy.is_contiguous() && dx.is_contiguous() && x.numel() == dy.numel() &&
                      x.numel() == dx.numel(),
                  "batch_norm_backward: x, dy and dx must be contiguous and alike");
  const int64_t n = x.numel();
  if (n == 0) return;
  const int64_t channels = x.shape[x.ndim - 1];
  const int64_t rows = n / channels;
  const float eps = static_cast<float>(epsilon);
  const cudaStream_t stream = device_stream(device);
  dispatch_floating(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* dyp = static_cast<const T*>(dy.data);
    ColumnSums sums(device, rows, channels);
    sums(SumOfGradients<T>{xp, dyp, f32(mean), f32(var), eps}, 1.0f, f32_out(dbeta), f32_out(dgamma));
    input_gradient_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
        xp, dyp, f32(gamma), f32(mean), f32(var), f32(dbeta), f32(dgamma), static_cast<float>(rows), eps,
        static_cast<T*>(dx.data), n, channels);
    GA_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace gpuaccel::cuda
