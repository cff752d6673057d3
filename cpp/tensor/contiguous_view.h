// A view of memory laid out densely in row-major order (the last dimension varies fastest):
// the one place that computes contiguous element strides for a view built over a raw buffer
// (layout copies such as the KRSC kernel, tests and benchmarks).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "core/dtype.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {

// At most kMaxDims dimensions; the caller owns `data` and sizes it for the shape.
inline TensorView contiguous_view(void* data, DType dtype, std::initializer_list<int64_t> shape) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.ndim = static_cast<int>(shape.size());
  int d = 0;
  for (int64_t extent : shape) v.shape[d++] = extent;
  int64_t stride = 1;
  for (d = v.ndim - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= v.shape[d];
  }
  return v;
}

}  // namespace gpuaccel
