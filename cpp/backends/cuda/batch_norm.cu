// Batch normalization in the backend's own kernels, for what cuDNN does not take
// (batch_norm_route.h): per-channel statistics of a (rows, C) view as column sums, then one
// element pass with the arithmetic of kernels/batch_norm_functors.h. Column sums are
// deterministic (column_sums.cuh); mean and variance take two passes (the variance sums squared deviations
// from the mean, not x² - mean², which cancels badly). float16/bfloat16 are loaded as float32
// and stored rounded. The kernels read the views as contiguous (rows, C).
#include <algorithm>
#include <string>

#include "backends/cuda/batch_norm_kernels.h"
#include "backends/cuda/column_sums.cuh"
#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/batch_norm_functors.h"

namespace gpuaccel::cuda {

namespace {

// The two per-element terms whose column sums (column_sums.cuh) a pass needs, for element
// (row r, channel c).
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
  dispatch_floating(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    if (training) {
      ColumnSums sums(device, rows, channels);
      sums(SumOfX<T>{xp}, static_cast<float>(rows), f32_out(mean), nullptr);
      sums(SumOfSquaredDeviation<T>{xp, f32(mean)}, static_cast<float>(rows), f32_out(var), nullptr);
    }
    normalize_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, device_stream(device)>>>(
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
  const int64_t rows = n / x.shape[x.ndim - 1];
  dispatch_floating(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const int64_t channels = x.shape[x.ndim - 1];
    const float eps = static_cast<float>(epsilon);
    const T* xp = static_cast<const T*>(x.data);
    const T* dyp = static_cast<const T*>(dy.data);
    ColumnSums sums(device, rows, channels);
    sums(SumOfGradients<T>{xp, dyp, f32(mean), f32(var), eps}, 1.0f, f32_out(dbeta), f32_out(dgamma));
    input_gradient_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, device_stream(device)>>>(
        xp, dyp, f32(gamma), f32(mean), f32(var), f32(dbeta), f32(dgamma), static_cast<float>(rows), eps,
        static_cast<T*>(dx.data), n, channels);
    GA_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace gpuaccel::cuda
