// A layer's float32 weight read in its compute dtype under mixed precision (Keras's
// AutoCastVariable): the low-precision copy is kept with the weight's storage
// (tensor/derived_copies.h) and made once per weight version, so evaluation and predict cast
// each weight once, not once per batch, and a training step once per update. The result is
// recorded as a Cast, so gradients still flow to the float32 master weight.
#pragma once

#include "tensor/tensor.h"

namespace gpuaccel {

// `weight` in `dtype`: weight itself when it has that dtype, else the cached cast (a plain
// cast() where the storage keeps no derived copies, or while a step graph is being captured:
// the graph must record the cast it replays). The result is read-only by contract: it shares
// memory with the cache.
Tensor cast_weight(const Tensor& weight, DType dtype);

}  // namespace gpuaccel
