// The fused optimizer step on the GPU: a grid-stride launch over the parameter's elements of the
// same functors the CPU loop runs (kernels/optimizer_functors.h), so the arithmetic tested on
// the CPU is the arithmetic a T4 runs. 16-bit gradients are widened per element.
#include <string>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/optimizer_functors.h"

namespace gpuaccel::cuda {

namespace {

__device__ __forceinline__ float load_grad(float g) { return g; }
__device__ __forceinline__ float load_grad(Half g) { return g.to_float(); }
__device__ __forceinline__ float load_grad(BFloat16 g) { return g.to_float(); }

template <typename G, typename F>
__global__ void optimizer_update_kernel(int64_t n, F f, float* p, const G* g, float* s0, float* s1,
                                        float* s2) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += step) {
    f(load_grad(g[i]), p + i, s0 ? s0 + i : nullptr, s1 ? s1 + i : nullptr, s2 ? s2 + i : nullptr);
  }
}

float* slot_data(const TensorView& v, int64_t n) {
  if (v.data == nullptr) return nullptr;
  GA_CUDA_REQUIRE(v.dtype == DType::kFloat32 && v.is_contiguous() && v.numel() == n,
                  "optimizer_update: slots must be contiguous float32 of the parameter's size");
  return static_cast<float*>(v.data);
}

}  // namespace

void optimizer_update(int device, const OptimizerUpdate& u, const TensorView& param,
                      const TensorView& grad, const TensorView& slot0, const TensorView& slot1,
                      const TensorView& slot2) {
  const int64_t n = param.numel();
  GA_CUDA_REQUIRE(param.dtype == DType::kFloat32 && param.is_contiguous(),
                  "optimizer_update: the parameter must be contiguous float32");
  GA_CUDA_REQUIRE(grad.is_contiguous() && grad.numel() == n,
                  "optimizer_update: the gradient must be contiguous with the parameter's size");
  float* p = static_cast<float*>(param.data);
  float* s0 = slot_data(slot0, n);
  float* s1 = slot_data(slot1, n);
  float* s2 = slot_data(slot2, n);
  if (n == 0) return;
  const cudaStream_t stream = device_stream(device);
  const bool known = kernels::with_optimizer_functor(u, [&](auto f) {
    using F = decltype(f);
    dispatch_floating(grad.dtype, "optimizer_update", [&](auto tag) {
      using G = decltype(tag);
      optimizer_update_kernel<G, F><<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(
          n, f, p, static_cast<const G*>(grad.data), s0, s1, s2);
      GA_CUDA_CHECK(cudaGetLastError());
    });
  });
  GA_CUDA_REQUIRE(known, "optimizer_update: unknown optimizer kind " +
                             std::to_string(static_cast<int>(u.kind)));
}

}  // namespace gpuaccel::cuda
