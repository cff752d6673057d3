// The finite check of dynamic loss scaling (optim/loss_scale_optimizer.cc) as one op over a
// list of tensors: a single Backend::any_nonfinite call instead of a reduction per gradient, so
// a GPU step runs one launch for all gradients and keeps the verdict on the device.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace gpuaccel {

// Writes 1 into `flag` (a float32 scalar) when an element of any floating tensor in `tensors`
// is inf or NaN, else 0. Undefined tensors (no gradient) and integer or bool tensors (always
// finite) are skipped; every other tensor must be on `flag`'s device. Not differentiable.
void any_nonfinite_into(const std::vector<Tensor>& tensors, const Tensor& flag);

// The same into a new float32 scalar on `device`.
Tensor any_nonfinite(const std::vector<Tensor>& tensors, const LogicalDevice& device);

}  // namespace gpuaccel
