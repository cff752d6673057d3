// float64 matrix products on the CPU. oneDNN has no float64 matmul on the CPU, so float64
// (torch.double, tf.float64: gradient checks, numerics that need 53 bits) runs this loop: each
// output row is built as a sum of scaled rows of b (a contiguous copy of b when its rows are
// strided), so the innermost loop is a unit-stride multiply-add the compiler vectorizes. Rows
// are split across OpenMP threads. Correct at every size; several times slower than float32's
// oneDNN path, as float64 is on most accelerators too.
#pragma once

#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// out[b] = a[b] @ b[b] (+ bias), cpu::onednn_matmul's contract (rank 2, or rank 3 with a
// batch; any strides on a, b and bias, b's batch stride may be 0; out contiguous), every
// operand float64. Each dot product accumulates in float64 in order of k.
void float64_matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                    const TensorView& out);

}  // namespace gpuaccel::cpu
