// The CPU side of Backend::any_nonfinite: the loss-scale finite check over all gradients of a
// step, with the element test the CUDA kernel runs (kernels/nonfinite_functor.h).
#pragma once

#include <vector>

#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// Writes 1 into `flag` (a float32 scalar) when an element of `tensors` (contiguous float32,
// float16 or bfloat16) is inf or NaN, else 0. Other dtypes or layouts are an internal error:
// the frontend (ops/finite_check.h) hands only these.
void any_nonfinite(const std::vector<TensorView>& tensors, const TensorView& flag);

}  // namespace gpuaccel::cpu
