// The launch of the backend's element-wise kernels: the host folds the views of one launch and
// picks its index mode (launch_geometry.h: flat when every operand is contiguous, else strided
// with int32 index math where it fits, int64 otherwise), and each thread turns its linear index
// into one element offset per operand. Only the launch lives here; the arithmetic of every
// element is a functor from cpp/kernels.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/launch_geometry.h"
#include "kernels/half_conversions.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cuda {

constexpr int kThreadsPerBlock = 256;
constexpr int64_t kMaxBlocks = 4096;  // the grid-stride loop covers the rest

inline unsigned blocks_for(int64_t n) {
  return static_cast<unsigned>(
      std::max<int64_t>(1, std::min<int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, kMaxBlocks)));
}

// Folds the views of one launch (launch_geometry.h) or raises what is wrong with them.
template <int kOperands>
Geometry<kOperands> make_geometry(const TensorView* const (&views)[kOperands]) {
  Geometry<kOperands> g;
  const std::string error = fold_geometry(views, &g);
  GA_CUDA_REQUIRE(error.empty(), error);
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

// Elements each thread of a flat launch handles per grid-stride step: independent loads in
// flight per thread, each still coalesced across the warp (thread t takes t, t + blockDim, ...).
constexpr int kFlatElementsPerThread = 4;

// Runs `body(i, offsets)` for every element when all operands are contiguous over one shape:
// every offset is i itself.
template <int kOperands, typename Index, typename Body>
__global__ void flat_kernel(Index n, Body body) {
  const Index tile = static_cast<Index>(blockDim.x) * kFlatElementsPerThread;
  const Index step = tile * gridDim.x;
  for (Index base = static_cast<Index>(blockIdx.x) * tile + threadIdx.x; base < n; base += step) {
#pragma unroll
    for (int e = 0; e < kFlatElementsPerThread; ++e) {
      const Index i = base + static_cast<Index>(e) * blockDim.x;
      if (i < n) {
        Index off[kOperands];
#pragma unroll
        for (int k = 0; k < kOperands; ++k) off[k] = i;
        body(i, off);
      }
    }
  }
}

// Runs `body(i, offsets)` for every element of a geometry, grid-stride, in `Index`'s width.
template <int kOperands, typename Index, typename Body>
__global__ void strided_kernel(Index n, Geometry<kOperands> g, Body body) {
  const Index step = static_cast<Index>(blockDim.x) * gridDim.x;
  for (Index i = static_cast<Index>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    Index off[kOperands];
    g.offsets(i, off);
    body(i, off);
  }
}

// The most threads one launch of ours has (blocks_for's cap), which bounds how far a
// grid-stride index overshoots n (launch_geometry.h's index_mode()).
constexpr int64_t kMaxLaunchThreads = kMaxBlocks * kThreadsPerBlock * kFlatElementsPerThread;

// `body` is called as body(i, off) with i the linear index and off[k] operand k's element offset,
// both int32_t or int64_t (bodies take them as a template parameter).
template <int kOperands, typename Body>
void launch_strided(const TensorView* const (&views)[kOperands], Body body, cudaStream_t stream) {
  const int64_t n = views[0]->numel();
  if (n == 0) return;
  const Geometry<kOperands> g = make_geometry(views);
  // Over 2^31 elements a flat launch takes the 64-bit strided kernel (a 1-d geometry): rare
  // enough not to be worth a fourth instantiation of every body.
  const bool fits_int32 = n <= std::numeric_limits<int32_t>::max() - kMaxLaunchThreads;
  IndexMode mode = index_mode(g, n, kMaxLaunchThreads);
  if (mode == IndexMode::kFlat && !fits_int32) mode = IndexMode::kStrided64;
  switch (mode) {
    case IndexMode::kFlat:
      flat_kernel<kOperands, int32_t, Body>
          <<<blocks_for((n + kFlatElementsPerThread - 1) / kFlatElementsPerThread), kThreadsPerBlock, 0, stream>>>(
              static_cast<int32_t>(n), body);
      break;
    case IndexMode::kStrided32:
      strided_kernel<kOperands, int32_t, Body><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
          static_cast<int32_t>(n), g, body);
      break;
    case IndexMode::kStrided64:
      strided_kernel<kOperands, int64_t, Body><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(n, g, body);
      break;
  }
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
    case DType::kInt8: return f(int8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kBool: return f(bool{});
    case DType::kFloat64: return f(double{});
  }
  throw BackendError(CudaStatus::kInvalidArgument, "unknown dtype");
}

// The floating dtypes of the kernels that have float64 (element-wise arithmetic, reductions,
// random fills): float64 computes in double.
template <typename F>
void dispatch_floating_or_float64(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::kFloat32: return f(float{});
    case DType::kFloat16: return f(Half{});
    case DType::kBFloat16: return f(BFloat16{});
    case DType::kFloat64: return f(double{});
    default: break;
  }
  throw BackendError(CudaStatus::kInvalidArgument,
                     std::string(op) + ": expected a floating dtype (float32, float16, bfloat16, float64)");
}

// The floating dtypes of the kernels float64 never reaches (the ops refuse it first).
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
