// The launch side of the "generate" element functors (cpp/kernels/fill.h): one grid-stride
// kernel template, instantiated per functor. The functor bodies are shared with the CPU backend.
#include "backends/cuda/generate_kernels.h"

#include <algorithm>

#include "kernels/fill.h"

namespace gpuaccel::cuda {

namespace {

constexpr int kThreadsPerBlock = 256;
// Enough blocks to fill any current GPU several times over; the grid-stride loop covers the rest.
constexpr int64_t kMaxBlocks = 4096;

template <typename T, typename Functor>
__global__ void generate_kernel(T* out, int64_t n, Functor f) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = f(i);
  }
}

template <typename T, typename Functor>
cudaError_t launch_generate(T* out, int64_t n, Functor f, cudaStream_t stream) {
  if (n <= 0) return cudaSuccess;
  const int64_t blocks = std::min<int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, kMaxBlocks);
  generate_kernel<<<static_cast<unsigned>(blocks), kThreadsPerBlock, 0, stream>>>(out, n, f);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_fill_f32(float* out, int64_t n, float value, cudaStream_t stream) {
  return launch_generate(out, n, kernels::FillFunctor<float>{value}, stream);
}

}  // namespace gpuaccel::cuda
