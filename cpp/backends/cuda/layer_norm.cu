// Layer normalization on the GPU. cuDNN 9's legacy API has no layer norm, so these are two small
// row kernels with the CPU backend's math (backends/cpu/onednn_norm.cc, oneDNN's primitive):
// each row of the (rows, C) view is normalized over its C values with a two-pass f32 mean and
// biased variance, y = gamma * (x - mean) / sqrt(var + eps) + beta. float16/bfloat16 are loaded
// as f32 and stored rounded (kernels/half_conversions.h). The backward pass computes dx per row
// from the saved mean/var, and dgamma/dbeta as column sums in fixed-order chunks
// (column_sums.cuh: no atomics, so results are deterministic).
#include <algorithm>
#include <string>

#include "backends/cuda/column_sums.cuh"
#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"

namespace gpuaccel::cuda {

namespace {

constexpr int kRowThreads = 256;  // one block per row; a multiple of the warp size
constexpr int kWarps = kRowThreads / 32;
constexpr int64_t kMaxRowBlocks = 65535;  // the rows loop covers the rest

// Sum of `v` over the block, returned to every thread in the same (fixed) order. `scratch`
// holds one float per warp; the trailing barrier makes it reusable by the next call.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v += __shfl_xor_sync(0xffffffffu, v, offset);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float total = 0.0f;
#pragma unroll
  for (int w = 0; w < kWarps; ++w) total += scratch[w];
  __syncthreads();
  return total;
}

template <typename T>
__global__ void layer_norm_forward_kernel(const T* x, const float* gamma, const float* beta, float eps, T* y,
                                          float* mean, float* var, int64_t rows, int64_t c) {
  using E = Elem<T>;
  __shared__ float scratch[kWarps];
  const float count = static_cast<float>(c);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * c;
    T* yr = y + r * c;
    float s = 0.0f;
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) s += E::load(xr[i]);
    const float m = block_sum(s, scratch) / count;
    float q = 0.0f;
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      const float d = E::load(xr[i]) - m;
      q += d * d;
    }
    const float v = block_sum(q, scratch) / count;
    const float rstd = 1.0f / sqrtf(v + eps);
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      yr[i] = E::store((E::load(xr[i]) - m) * rstd * gamma[i] + beta[i]);
    }
    if (threadIdx.x == 0) {
      mean[r] = m;
      var[r] = v;
    }
  }
}

// dx = rstd * (g - mean(g) - xhat * mean(g * xhat)), g = dy * gamma, xhat = (x - mean) * rstd.
template <typename T>
__global__ void layer_norm_backward_dx_kernel(const T* x, const T* dy, const float* gamma, const float* mean,
                                              const float* var, float eps, T* dx, int64_t rows, int64_t c) {
  using E = Elem<T>;
  __shared__ float scratch[kWarps];
  const float count = static_cast<float>(c);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * c;
    const T* dyr = dy + r * c;
    T* dxr = dx + r * c;
    const float m = mean[r];
    const float rstd = 1.0f / sqrtf(var[r] + eps);
    float sg = 0.0f, sgx = 0.0f;
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      const float g = E::load(dyr[i]) * gamma[i];
      sg += g;
      sgx += g * (E::load(xr[i]) - m) * rstd;
    }
    const float mean_g = block_sum(sg, scratch) / count;
    const float mean_gx = block_sum(sgx, scratch) / count;
    for (int64_t i = threadIdx.x; i < c; i += blockDim.x) {
      const float g = E::load(dyr[i]) * gamma[i];
      const float xhat = (E::load(xr[i]) - m) * rstd;
      dxr[i] = E::store(rstd * (g - mean_g - xhat * mean_gx));
    }
  }
}

// The terms of dgamma (dy * xhat, xhat normalized with its row's statistics) and dbeta (dy),
// summed over the rows per column by column_sums.cuh.
template <typename T>
struct ParamGradTerms {
  const T* x;
  const T* dy;
  const float* mean;
  const float* var;
  float epsilon;
  __device__ float2 operator()(int64_t r, int64_t col, int64_t c) const {
    const float rstd = 1.0f / sqrtf(var[r] + epsilon);
    const float d = Elem<T>::load(dy[r * c + col]);
    return make_float2(d * (Elem<T>::load(x[r * c + col]) - mean[r]) * rstd, d);
  }
};

int64_t channels_of(const TensorView& v) { return v.ndim == 0 ? 1 : v.shape[v.ndim - 1]; }

void check_f32_vector(const TensorView& v, int64_t n, const char* op, const char* what) {
  GA_CUDA_REQUIRE(v.dtype == DType::kFloat32 && v.numel() == n && v.is_contiguous(),
                  std::string(op) + ": " + what + " must be a contiguous float32 vector of " + std::to_string(n));
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(std::min(rows, kMaxRowBlocks)); }

}  // namespace

void layer_norm_forward(int device, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                        double epsilon, const TensorView& y, const TensorView& mean, const TensorView& var) {
  const char* op = "layer_norm_forward";
  GA_CUDA_REQUIRE(x.dtype == y.dtype && x.numel() == y.numel(), "layer_norm_forward: x and y must match");
  GA_CUDA_REQUIRE(x.is_contiguous() && y.is_contiguous(), "layer_norm_forward: x and y must be contiguous");
  if (x.numel() == 0) return;
  const int64_t c = channels_of(x);
  const int64_t rows = x.numel() / c;
  check_f32_vector(gamma, c, op, "gamma");
  check_f32_vector(beta, c, op, "beta");
  check_f32_vector(mean, rows, op, "mean");
  check_f32_vector(var, rows, op, "var");
  const float eps = static_cast<float>(epsilon);
  const cudaStream_t stream = device_stream(device);
  dispatch_floating(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    layer_norm_forward_kernel<T><<<row_blocks(rows), kRowThreads, 0, stream>>>(
        static_cast<const T*>(x.data), static_cast<const float*>(gamma.data), static_cast<const float*>(beta.data),
        eps, static_cast<T*>(y.data), static_cast<float*>(mean.data), static_cast<float*>(var.data), rows, c);
    GA_CUDA_CHECK(cudaGetLastError());
  });
}

void layer_norm_backward(int device, const TensorView& x, const TensorView& dy, const TensorView& gamma,
                         const TensorView& mean, const TensorView& var, double epsilon, const TensorView& dx,
                         const TensorView& dgamma, const TensorView& dbeta) {
  const char* op = "layer_norm_backward";
  GA_CUDA_REQUIRE(x.dtype == dy.dtype && x.dtype == dx.dtype, "layer_norm_backward: dtypes differ");
  GA_CUDA_REQUIRE(x.numel() == dy.numel() && x.numel() == dx.numel(), "layer_norm_backward: shapes differ");
  GA_CUDA_REQUIRE(x.is_contiguous() && dy.is_contiguous() && dx.is_contiguous(),
                  "layer_norm_backward: x, dy and dx must be contiguous");
  const int64_t c = channels_of(x);
  check_f32_vector(dgamma, c, op, "dgamma");
  check_f32_vector(dbeta, c, op, "dbeta");
  const cudaStream_t stream = device_stream(device);
  if (x.numel() == 0) {  // no rows: the parameter gradients are zero, as on the CPU
    GA_CUDA_CHECK(cudaMemsetAsync(dgamma.data, 0, static_cast<size_t>(c) * sizeof(float), stream));
    GA_CUDA_CHECK(cudaMemsetAsync(dbeta.data, 0, static_cast<size_t>(c) * sizeof(float), stream));
    return;
  }
  const int64_t rows = x.numel() / c;
  check_f32_vector(gamma, c, op, "gamma");
  check_f32_vector(mean, rows, op, "mean");
  check_f32_vector(var, rows, op, "var");
  const float eps = static_cast<float>(epsilon);

  dispatch_floating(x.dtype, op, [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data);
    const T* dyp = static_cast<const T*>(dy.data);
    const float* mp = static_cast<const float*>(mean.data);
    const float* vp = static_cast<const float*>(var.data);
    layer_norm_backward_dx_kernel<T><<<row_blocks(rows), kRowThreads, 0, stream>>>(
        xp, dyp, static_cast<const float*>(gamma.data), mp, vp, eps, static_cast<T*>(dx.data), rows, c);
    GA_CUDA_CHECK(cudaGetLastError());
    ColumnSums sums(device, rows, c);
    sums(ParamGradTerms<T>{xp, dyp, mp, vp, eps}, 1.0f, static_cast<float*>(dgamma.data),
         static_cast<float*>(dbeta.data));
  });
}

}  // namespace gpuaccel::cuda
