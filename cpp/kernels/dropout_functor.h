// Inverted dropout as element functors: the keep decision of element i is the Philox uniform of
// element index offset + i (kernels/philox.h), so the mask is the same on CPU and GPU and on any
// thread count, and the backward pass only needs the stored uint8 mask.
//   forward:  keep = u >= rate (probability 1 - rate, to 2^-24), y = keep ? x * scale : 0,
//             scale = 1 / (1 - rate)
//   backward: dx = mask ? dy * scale : 0
#pragma once

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/philox.h"

namespace gpuaccel::kernels {

struct DropoutResult {
  float y;
  uint8_t keep;
};

struct DropoutFunctor {
  uint64_t seed;
  uint64_t offset;
  float rate;   // in [0, 1)
  float scale;  // 1 / (1 - rate)

  // Built on the host from the double rate the API takes.
  static DropoutFunctor make(double rate, uint64_t seed, uint64_t offset) {
    return DropoutFunctor{seed, offset, static_cast<float>(rate),
                          static_cast<float>(1.0 / (1.0 - rate))};
  }

  GA_HOST_DEVICE GA_INLINE bool keep(int64_t i) const {
    return philox_uniform(seed, offset + static_cast<uint64_t>(i)) >= rate;
  }
  // Element i of the output with input value x.
  GA_HOST_DEVICE GA_INLINE DropoutResult operator()(int64_t i, float x) const {
    const bool k = keep(i);
    return DropoutResult{k ? x * scale : 0.0f, static_cast<uint8_t>(k ? 1 : 0)};
  }
};

struct DropoutBackwardFunctor {
  float scale;  // 1 / (1 - rate)
  GA_HOST_DEVICE GA_INLINE float operator()(float dy, uint8_t mask) const {
    return mask ? dy * scale : 0.0f;
  }
};

}  // namespace gpuaccel::kernels
