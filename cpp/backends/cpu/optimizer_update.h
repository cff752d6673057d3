// The CPU kernel of the fused optimizer step (Backend::optimizer_update): an OpenMP loop over
// the functors of kernels/optimizer_functors.h, the same ones the CUDA backend launches.
#pragma once

#include "kernels/optimizer_functors.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// param (float32) and the used slots (float32) contiguous, grad contiguous float32, float16 or
// bfloat16, all of one shape (validated by optim::Optimizer); unused slots are empty views.
void optimizer_update(const OptimizerUpdate& u, const TensorView& param, const TensorView& grad,
                      const TensorView& slot0, const TensorView& slot1, const TensorView& slot2);

}  // namespace gpuaccel::cpu
