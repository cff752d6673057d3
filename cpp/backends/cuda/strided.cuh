// N-d strided indexing for the backend's grid-stride kernels: the host folds the views of one
// launch into the fewest dimensions that index them all (a contiguous launch becomes 1-d), and
// each thread turns its linear output index into one element offset per operand. Only the
// launch lives here; the arithmetic of every element is a functor from cpp/kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "kernels/half_conversions.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cuda {

constexpr int kThreadsPerBlock = 256;
constexpr int64_t kMaxBlocks = 4096;  // the grid-stride loop covers the rest

inline unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, kMaxBlocks)));
}

// The shape of the iteration and each operand's element strides over it.
template <int kOperands>
struct Geometry {
  int ndim = 0;
  int64_t shape[kMaxDims] = {0};
  int64_t strides[kOperands][kMaxDims] = {{0}};

  // Element offsets of linear index `i` (row-major over `shape`).
  __device__ __forceinline__ void offsets(int64_t i, int64_t (&off)[kOperands]) const {
#pragma unroll
    for (int k = 0; k < kOperands; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t extent = shape[d];
      const int64_t idx = extent == 1 ? 0 : i % extent;
      i = extent == 1 ? i : i / extent;
#pragma unroll
      for (int k = 0; k < kOperands; ++k) off[k] += idx * strides[k][d];
    }
  }
};

// Builds the geometry of `views` (all of views[0]'s shape): size-1 dimensions are dropped and
// neighbours that are contiguous in every operand are merged.
template <int kOperands>
Geometry<kOperands> make_geometry(const TensorView* const (&views)[kOperands]) {
  const TensorView& out = *views[0];
  GA_CUDA_REQUIRE(out.ndim >= 0 && out.ndim <= kMaxDims, "view with ndim " + std::to_string(out.ndim));
  for (int k = 1; k < kOperands; ++k) {
    GA_CUDA_REQUIRE(views[k]->ndim == out.ndim, "element-wise operands of different ranks");
    for (int d = 0; d < out.ndim; ++d) {
      GA_CUDA_REQUIRE(views[k]->shape[d] == out.shape[d], "element-wise operands of different shapes");
    }
  }
  Geometry<kOperands> g;
  for (int d = 0; d < out.ndim; ++d) {
    if (out.shape[d] == 1) continue;
    const int n = g.ndim;
    bool merge = n > 0;
    for (int k = 0; k < kOperands && merge; ++k) {
      merge = g.strides[k][n - 1] == views[k]->strides[d] * out.shape[d];
    }
    if (merge) {
      g.shape[n - 1] *= out.shape[d];
      for (int k = 0; k < kOperands; ++k) g.strides[k][n - 1] = views[k]->strides[d];
    } else {
      g.shape[n] = out.shape[d];
      for (int k = 0; k < kOperands; ++k) g.strides[k][n] = views[k]->strides[d];
      g.ndim = n + 1;
    }
  }
  return g;
}

// Storage type <-> the type the functors compute in: 16-bit floats compute in float32.
template <typename T> struct Elem {
  using Compute = T;
  __device__ __forceinline__ static T load(T v) { return v; }
  __device__ __forceinline__ static T store(T v) { return v; }
};
template <> struct Elem<Half> {
  using Compute = float;
  __device__ __forceinline__ static float load(Half v) { return v.to_float(); }
  __device__ __forceinline__ static Half store(float v) { return Half::from_float(v); }
};
template <> struct Elem<BFloat16> {
  using Compute = float;
  __device__ __forceinline__ static float load(BFloat16 v) { return v.to_float(); }
  __device__ __forceinline__ static BFloat16 store(float v) { return BFloat16::from_float(v); }
};

// Runs `body(offsets)` for every element of a geometry, grid-stride.
template <int kOperands, typename Body>
__global__ void strided_kernel(int64_t n, Geometry<kOperands> g, Body body) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    int64_t off[kOperands];
    g.offsets(i, off);
    body(i, off);
  }
}

template <int kOperands, typename Body>
void launch_strided(const TensorView* const (&views)[kOperands], Body body, cudaStream_t stream) {
  const int64_t n = views[0]->numel();
  if (n == 0) return;
  const Geometry<kOperands> g = make_geometry(views);
  strided_kernel<kOperands, Body><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(n, g, body);
  GA_CUDA_CHECK(cudaGetLastError());
}

// Calls f(T{}) with T the storage type of `dtype`.
template <typename F>
void dispatch_all(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat16: return f(Half{});
    case DType::kBFloat16: return f(BFloat16{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUInt8: return f(uint8_t{});
    case DType::kBool: return f(bool{});
  }
  throw BackendError(CudaStatus::kInvalidArgument, "unknown dtype");
}

template <typename F>
void dispatch_floating(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat16: return f(Half{});
    case DType::kBFloat16: return f(BFloat16{});
    default: break;
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     std::string(op) + ": expected a floating dtype (float32, float16, bfloat16)");
}

}  // namespace gpuaccel::cuda
