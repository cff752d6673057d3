// Matrix products: NumPy's matmul (1-D promotion, batched with broadcast batch dimensions)
// and the dense layer's linear op with Keras's kernel layout (in, out).
#pragma once

#include "tensor/tensor.h"

namespace gpuaccel {

Tensor matmul(const Tensor& a, const Tensor& b);
// x (..., in) @ w (in, out) + bias (out,) (bias may be undefined).
Tensor linear(const Tensor& x, const Tensor& w, const Tensor& bias);

}  // namespace gpuaccel
