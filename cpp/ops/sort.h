// Sorting along one axis (tf.sort/argsort, torch.sort/argsort, np.sort/argsort) and what is
// built on it: its values are differentiable (the gradient goes back to each value's position).
// The order: stable; ascending puts NaN last, descending first; -0 ties with +0
// (kernels/sort_keys.h).
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace gpuaccel {

struct SortResult {
  Tensor values;   // x's dtype and shape
  Tensor indices;  // int64, positions along `axis`
};

SortResult sort(const Tensor& x, int64_t axis, bool descending);

// out[..., j] = x[..., indices[..., j]] along the last axis: x (..., n), indices int64 (..., m)
// with values in [0, n) (not checked here: callers pass positions they computed), same leading
// dimensions. Not differentiable.
Tensor take_along_last_axis(const Tensor& x, const Tensor& indices);

}  // namespace gpuaccel
