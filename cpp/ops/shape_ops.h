// Ops that change how elements are addressed rather than their values: reshape, permute,
// slicing (views over the same storage where possible), contiguous copies, dtype casts and
// device transfers. Each records its gradient like any op.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace gpuaccel {

Tensor contiguous(const Tensor& x);
// A contiguous copy (differentiable, like torch's clone).
Tensor clone(const Tensor& x);
// The same data, cut from the autograd graph (a new leaf that does not require grad).
Tensor detach(const Tensor& x);
// A view when x is contiguous, else a copy. One dimension may be -1 (inferred).
Tensor reshape(const Tensor& x, const Shape& shape);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
// Basic slicing along each dimension: start/stop/step already normalized by the caller
// (Python's slice.indices), step > 0. A view.
struct SliceSpec {
  int64_t start = 0, stop = 0, step = 1;
};
Tensor slice(const Tensor& x, const std::vector<SliceSpec>& per_dim);
// Removes dimension `axis` by picking index `index` (x[i] in Python). A view.
Tensor select(const Tensor& x, int64_t axis, int64_t index);
Tensor expand_dims(const Tensor& x, int64_t axis);
Tensor squeeze(const Tensor& x, const std::vector<int64_t>& axes);
// x broadcast to `shape`, materialized.
Tensor broadcast_to(const Tensor& x, const Shape& shape);
// tf.concat / torch.cat: joins tensors of one dtype and device along `axis` (all other
// dimensions equal); the gradient of each input is its slice of the output gradient.
Tensor concat(const std::vector<Tensor>& xs, int64_t axis);
// Sum of `grad` over the dimensions broadcasting added, giving `shape` (gradients of
// broadcast ops).
Tensor sum_to_shape(const Tensor& grad, const Shape& shape);

Tensor cast(const Tensor& x, DType dtype);
Tensor to_device(const Tensor& x, const LogicalDevice& device);
// dst[...] = src (broadcast to dst's shape), in place, no autograd.
void copy_into(const Tensor& src, const Tensor& dst);

}  // namespace gpuaccel
