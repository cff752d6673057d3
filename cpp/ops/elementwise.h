// Element-wise ops with NumPy broadcasting and their gradients (gradients of broadcast
// operands are summed back to the operand's shape).
#pragma once

#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel {

Tensor unary(UnaryOp op, const Tensor& x);
Tensor binary(BinaryOp op, const Tensor& a, const Tensor& b);
// A 0-d tensor holding `value` in `like`'s dtype and device (Python scalars in `t + 1`).
Tensor scalar_like(double value, const Tensor& like);

inline Tensor add(const Tensor& a, const Tensor& b) { return binary(BinaryOp::kAdd, a, b); }
inline Tensor sub(const Tensor& a, const Tensor& b) { return binary(BinaryOp::kSub, a, b); }
inline Tensor mul(const Tensor& a, const Tensor& b) { return binary(BinaryOp::kMul, a, b); }
inline Tensor div(const Tensor& a, const Tensor& b) { return binary(BinaryOp::kDiv, a, b); }
inline Tensor neg(const Tensor& x) { return unary(UnaryOp::kNeg, x); }

// a where `condition` holds, else b (TF's SelectV2, torch.where, np.where), the three
// broadcast together; a and b promote like binary ops, a non-bool condition counts as true
// where non-zero. Only the chosen operand is read, so the other's inf/NaN never shows, and the
// gradient reaches a where the condition holds and b elsewhere (zero to the other side).
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);

// TF's op names ("AddV2", "Exp", ...), used in the placement log and errors.
const char* unary_op_name(UnaryOp op);
const char* binary_op_name(BinaryOp op);

}  // namespace gpuaccel
