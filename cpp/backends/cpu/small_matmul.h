// Matrix products too small for oneDNN to pay off (a Dense(1) layer at batch 64 is 512
// multiply-adds): a direct loop on the calling thread. oneDNN's call overhead (memory objects,
// scratchpad, primitive lookup) is several microseconds there, and its OpenMP parallel region
// wakes the other threads for nanoseconds of work -- on a shared machine a descheduled sibling
// then stalls the whole step (the tiny model's fit step went from ~75 to ~400 us with two
// threads under load).
#pragma once

#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// At most this many multiply-adds (M * N * K per batch, over all batches) run here.
constexpr int64_t kSmallMatmulMacs = 16 * 1024;

// Whether small_matmul takes this product: float32 operands of cpu::onednn_matmul's shapes (see
// onednn_ops.h) with at most kSmallMatmulMacs multiply-adds.
bool small_matmul_applies(const TensorView& a, const TensorView& b, const TensorView& out);

// out[b] = a[b] @ b[b] (+ bias), cpu::onednn_matmul's contract (any strides on a, b and bias; out
// contiguous), accumulating each dot product in float32 in order of k.
void small_matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                  const TensorView& out);

}  // namespace gpuaccel::cpu
