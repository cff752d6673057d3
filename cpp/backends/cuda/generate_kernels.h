// Host-side entry points of the backend's hand-written kernels (generate_kernels.cu). Each is a
// grid-stride launch of an element functor from cpp/kernels; the .cc files of the backend call
// these without needing nvcc themselves.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuaccel::cuda {

// out[0..n) = value on `stream`. Returns the launch's error (cudaSuccess when queued).
cudaError_t launch_fill_f32(float* out, int64_t n, float value, cudaStream_t stream);

}  // namespace gpuaccel::cuda
