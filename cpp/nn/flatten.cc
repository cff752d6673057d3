// Flatten (see flatten.h).
#include "nn/flatten.h"

#include "ops/shape_ops.h"

namespace gpuaccel::nn {

Shape Flatten::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  const Shape& s = input_shapes[0];
  expect_min_ndim(s, 0, 1);
  int64_t rest = 1;
  for (size_t i = 1; i < s.size(); ++i) {
    if (s[i] < 0) return {s[0], -1};
    rest *= s[i];
  }
  return {s[0], rest};
}

void Flatten::do_build(const ShapeList& input_shapes) { (void)output_shape(input_shapes); }

Tensor Flatten::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  const Tensor& x = inputs[0];
  expect_min_ndim(x.shape(), 0, 1);
  int64_t rest = 1;
  for (int i = 1; i < x.ndim(); ++i) rest *= x.dim(i);
  return reshape(cast_input(x), {x.dim(0), rest});
}

}  // namespace gpuaccel::nn
