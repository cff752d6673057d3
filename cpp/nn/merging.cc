// Add and Concatenate (see merging.h).
#include "nn/merging.h"

#include "ops/elementwise.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {

namespace {

// -1 (an unknown size) matches anything.
bool same_size(int64_t a, int64_t b) { return a < 0 || b < 0 || a == b; }

}  // namespace

Shape Add::output_shape(const ShapeList& input_shapes) const {
  if (input_shapes.size() < 2) {
    fail("a merge layer should be called on a list of at least 2 inputs, got " +
         std::to_string(input_shapes.size()));
  }
  Shape out = input_shapes[0];
  for (size_t i = 1; i < input_shapes.size(); ++i) {
    const Shape& s = input_shapes[i];
    bool same = s.size() == out.size();
    for (size_t k = 0; same && k < s.size(); ++k) same = same_size(s[k], out[k]);
    if (!same) {
      fail("inputs must have the same shape, got " + shape_text(input_shapes[0]) + " and " +
           shape_text(s));
    }
    for (size_t k = 0; k < s.size(); ++k) out[k] = out[k] < 0 ? s[k] : out[k];
  }
  return out;
}

Tensor Add::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  ShapeList shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  (void)output_shape(shapes);
  Tensor sum = cast_input(inputs[0]);
  for (size_t i = 1; i < inputs.size(); ++i) sum = add(sum, cast_input(inputs[i]));
  return sum;
}

Shape Concatenate::output_shape(const ShapeList& input_shapes) const {
  if (input_shapes.size() < 2) {
    fail("a Concatenate layer should be called on a list of at least 2 inputs, got " +
         std::to_string(input_shapes.size()));
  }
  const Shape& first = input_shapes[0];
  const int ndim = static_cast<int>(first.size());
  const int64_t axis = axis_ < 0 ? axis_ + ndim : axis_;
  if (axis < 1 || axis >= ndim) {
    fail("axis " + std::to_string(axis_) + " is out of range for inputs of shape " +
         shape_text(first) + " (the batch axis cannot be concatenated)");
  }
  Shape out = first;
  for (size_t i = 1; i < input_shapes.size(); ++i) {
    const Shape& s = input_shapes[i];
    bool same = static_cast<int>(s.size()) == ndim;
    for (int k = 0; same && k < ndim; ++k) same = k == axis || same_size(s[k], first[k]);
    if (!same) {
      fail("a Concatenate layer requires inputs with matching shapes except for the "
           "concatenation axis. Received: input_shape=[" + shape_text(first) + ", " +
           shape_text(s) + "]");
    }
    out[axis] = (out[axis] < 0 || s[axis] < 0) ? -1 : out[axis] + s[axis];
  }
  return out;
}

Tensor Concatenate::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  ShapeList shapes;
  std::vector<Tensor> cast;
  for (const Tensor& t : inputs) {
    shapes.push_back(t.shape());
    cast.push_back(cast_input(t));
  }
  (void)output_shape(shapes);
  return concat(cast, axis_);
}

}  // namespace gpuaccel::nn
