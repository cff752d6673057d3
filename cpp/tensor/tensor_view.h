// What a backend kernel sees of a tensor: a pointer, a dtype, a shape and element strides, in a
// plain struct with no ownership and no dependencies beyond the DType enum. Op frontends build
// views (broadcast operands get stride 0 on the broadcast dimensions, transposes are just
// permuted strides) after validating everything; kernels trust them. Plain data, so the CUDA
// backend library and its kernels take the same struct (`derived` is a borrowed pointer).
#pragma once

#include <cstdint>

#include "core/dtype.h"

namespace gpuaccel {

class DerivedCopies;  // tensor/derived_copies.h

constexpr int kMaxDims = 8;

struct TensorView {
  void* data = nullptr;  // element [0, ..., 0]
  DType dtype = DType::kFloat32;
  int ndim = 0;  // 0 = a scalar (one element)
  int64_t shape[kMaxDims] = {0};
  int64_t strides[kMaxDims] = {0};  // in elements, not bytes; 0 on broadcast dimensions
  // The copies derived from the viewed storage (a kernel in a library's layout, a low-precision
  // weight), when the view is the whole storage, contiguous, and the storage may cache them;
  // else null and a kernel derives what it needs per call.
  DerivedCopies* derived = nullptr;

  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < ndim; ++d) n *= shape[d];
    return n;
  }
  // Row-major with no gaps (size-1 dimensions may have any stride).
  bool is_contiguous() const {
    int64_t expected = 1;
    for (int d = ndim - 1; d >= 0; --d) {
      if (shape[d] != 1 && strides[d] != expected) return false;
      expected *= shape[d];
    }
    return true;
  }
};

}  // namespace gpuaccel
