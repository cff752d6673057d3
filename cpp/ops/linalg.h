// Matrix products: NumPy's matmul (1-D promotion, batched with broadcast batch dimensions)
// and the dense layer's linear op with Keras's kernel layout (in, out).
#pragma once

#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel {

Tensor matmul(const Tensor& a, const Tensor& b);
// activation(x (..., in) @ w (in, out) + bias (out,)) (bias may be undefined). Bias and
// activation run in the product's own pass where the backend can fuse them (one autograd node).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias,
              PostActivation activation = PostActivation::kNone);

}  // namespace gpuaccel
