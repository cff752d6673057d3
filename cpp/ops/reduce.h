// Reductions over axes (sum, mean, max, min, argmax, argmin) with Keras/NumPy's `axis` and
// `keepdims` conventions, and their gradients.
#pragma once

#include <vector>

#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// `axes` empty = all axes. Negative axes count from the end.
Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims);
inline Tensor reduce_sum(const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  return reduce(ReduceOp::kSum, x, axes, keepdims);
}
// TF's op names ("Sum", "ArgMax", ...), used in the placement log and errors.
const char* reduce_op_name(ReduceOp op);
// argmax/argmin along one axis; int64 result.
Tensor arg_reduce(ReduceOp op, const Tensor& x, int64_t axis, bool keepdims);

}  // namespace gpuaccel
