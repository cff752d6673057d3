// Bit-level ops on integer and bool tensors (keras.ops.bitwise_*, tf.bitwise, torch's & | ^ ~
// << >>). They have no gradient: their operands are integers.
#pragma once

#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// a op b, broadcast, in result_type(a, b) (PyTorch's promotion; a face with a stricter rule,
// TensorFlow's equal dtypes, checks before it calls). InvalidArgumentError for a floating
// result type, and for bool with a shift. Shift counts outside [0, bits) shift every bit out
// (kernels/bitwise_functors.h).
Tensor bitwise(BitwiseOp op, const Tensor& a, const Tensor& b);

// ~x: every bit flipped (bool: logical not), as an xor with all ones of x's dtype.
Tensor bitwise_not(const Tensor& x);

}  // namespace gpuaccel
