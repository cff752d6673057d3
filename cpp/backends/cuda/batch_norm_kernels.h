// The CUDA backend's own batch-norm kernels (batch_norm.cu), for what cuDNN does not take
// (batch_norm_route.h): (rows, C) inputs, batches beyond cuDNN's bounds, training over one row,
// and any shape cuDNN refuses at run time. Same meaning as cudnn_ops.cc's batch_norm_forward and
// batch_norm_backward: x contiguous (..., C), gamma/beta/mean/var contiguous float32 (C,);
// training writes this batch's mean and biased variance.
#pragma once

#include "tensor/tensor_view.h"

namespace gpuaccel::cuda {

void batch_norm_forward_own(int device, const TensorView& x, const TensorView& gamma, const TensorView& beta,
                            const TensorView& mean, const TensorView& var, double epsilon, bool training,
                            const TensorView& y);
void batch_norm_backward_own(int device, const TensorView& x, const TensorView& dy, const TensorView& gamma,
                             const TensorView& mean, const TensorView& var, double epsilon, const TensorView& dx,
                             const TensorView& dgamma, const TensorView& dbeta);

}  // namespace gpuaccel::cuda
