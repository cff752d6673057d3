// Helpers of the kernel tests that build TensorViews over host vectors: a view with explicit
// element strides, and uniform random values from a seeded generator.
#pragma once

#include <random>
#include <vector>

#include "tensor/tensor_view.h"

namespace gpuaccel::test {

// A view of `shape` with element `strides` in `dtype` at `data`.
inline TensorView strided_view(void* data, const std::vector<int64_t>& shape,
                               const std::vector<int64_t>& strides, DType dtype) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.ndim = static_cast<int>(shape.size());
  for (int d = 0; d < v.ndim; ++d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides[d];
  }
  return v;
}

// `n` values drawn uniformly from [-2, 2) by a generator seeded with `seed`.
template <typename T>
std::vector<T> uniform_values(size_t n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> u(T(-2), T(2));
  std::vector<T> v(n);
  for (T& x : v) x = u(rng);
  return v;
}

}  // namespace gpuaccel::test
