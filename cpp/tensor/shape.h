// Shapes and strides as plain vectors, and the little arithmetic every op frontend needs on
// them (element counts, row-major strides, NumPy broadcasting, printing "(2, 3)").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpuaccel {

using Shape = std::vector<int64_t>;
using Strides = std::vector<int64_t>;  // in elements

int64_t shape_numel(const Shape& shape);
Strides contiguous_strides(const Shape& shape);
// "(2, 3)", NumPy's spelling ("(5,)" for one dimension, "()" for a scalar).
std::string shape_to_string(const Shape& shape);
// NumPy broadcasting of two shapes; throws InvalidArgumentError naming `op` and both shapes
// when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b, const std::string& op);
// Normalizes a possibly negative axis against `ndim`; InvalidArgumentError when out of range.
int normalize_axis(int64_t axis, int ndim, const std::string& op);

}  // namespace gpuaccel
