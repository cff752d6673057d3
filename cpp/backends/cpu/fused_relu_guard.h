// When oneDNN's relu post-op gives exactly what the separate relu would. The post-op is a max
// with 0, which turns a NaN output into 0 where our relu (and TF's) keeps NaN, so a diverged
// layer would vanish from the loss. An output of a convolution or matmul can only be NaN or
// infinite if an operand is, or if the sum overflows: with every |x|, |w| at most
// sqrt(FLT_MAX / (2 * reduction)) and |bias| at most FLT_MAX / 2 it can do neither, and the
// post-op is exact. Checking that is one read of the operands (the input, not the 4x-32x larger
// output that a separate relu reads and writes); operands outside the bound take the unfused
// path.
#pragma once

#include <cstdint>

#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// True when a, b (and bias, if not null) are contiguous float32 or bfloat16 whose magnitudes
// keep a product-sum over `reduction` terms finite (see above); false otherwise (also for
// float16 and strided views, which then take the unfused path).
bool fused_relu_is_exact(const TensorView& a, const TensorView& b, const TensorView* bias,
                         int64_t reduction);

}  // namespace gpuaccel::cpu
