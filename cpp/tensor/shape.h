// Shapes and strides as plain vectors, and the little arithmetic every op frontend needs on
// them (element counts, row-major strides, NumPy broadcasting, axes, printing "(2, 3)").
//
// The checked helpers (checked_numel, checked_nbytes, normalize_axis, normalize_axes,
// normalize_permutation) are the one place where user-supplied sizes and axes are validated:
// a size whose element count or byte size overflows 64 bits, or an axis a tensor does not
// have, becomes an InvalidArgumentError naming the op and the value, never a wrapped-around
// allocation or an out-of-bounds index in a kernel.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuaccel {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements

// Element count of a shape already known to be valid (a live tensor's shape); saturates at
// 2^63 - 1 rather than overflow for one that is not.
int64_t shape_numel(const Shape& shape);
// Element count of a shape from a user: InvalidArgumentError naming `op` for a negative
// dimension, or when the product of the non-zero dimensions exceeds 2^63 - 1 (NumPy's rule:
// a zero-size shape still needs addressable strides).
int64_t checked_numel(const Shape& shape, std::string_view op);
// checked_numel(shape) * element_size, with the same overflow rule on the byte count.
int64_t checked_nbytes(const Shape& shape, int64_t element_size, std::string_view op);
Strides contiguous_strides(const Shape& shape);
// "(2, 3)", NumPy's spelling ("(5,)" for one dimension, "()" for a scalar).
std::string shape_to_string(const Shape& shape);
// NumPy broadcasting of two shapes; throws InvalidArgumentError naming `op` and both shapes
// when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op);
// Normalizes a possibly negative axis against `ndim` (valid: -ndim..ndim-1; a 0-d tensor has
// no axes); InvalidArgumentError naming `op`, the argument `what` and the value otherwise.
int normalize_axis(int64_t axis, int ndim, std::string_view op, std::string_view what = "axis");
// Each axis normalized; InvalidArgumentError for one out of range or repeated.
std::vector<int> normalize_axes(const std::vector<int64_t>& axes, int ndim, std::string_view op);
// A permutation of 0..ndim-1 (negative entries allowed): InvalidArgumentError when the length
// differs from ndim, an entry is out of range, or one repeats.
std::vector<int> normalize_permutation(const std::vector<int64_t>& dims, int ndim,
                                       std::string_view op);
// "(1, -1)": axes and permutations in messages.
std::string axes_to_string(const std::vector<int64_t>& axes);

}  // namespace gpuaccel
