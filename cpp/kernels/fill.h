// Element functors that produce a value per output index (no input): the CPU backend runs them
// in an OpenMP loop, the CUDA backend in a grid-stride kernel. One definition for both keeps the
// arithmetic tested on the CPU even though the GPU side never runs here.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"

namespace gpuaccel::kernels {

// out[i] = value.
template <typename T>
struct FillFunctor {
  T value;
  GA_HOST_DEVICE GA_INLINE T operator()(int64_t /*index*/) const { return value; }
};

}  // namespace gpuaccel::kernels
