// GlobalAveragePooling2D (see global_average_pooling2d.h): one mean reduction.
#include "nn/global_average_pooling2d.h"

#include "ops/reduce.h"

namespace gpuaccel::nn {

Shape GlobalAveragePooling2D::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  const Shape& s = input_shapes[0];
  expect_ndim(s, 0, 4);
  if (keepdims_) return {s[0], 1, 1, s[3]};
  return {s[0], s[3]};
}

void GlobalAveragePooling2D::do_build(const ShapeList& input_shapes) {
  (void)output_shape(input_shapes);
}

Tensor GlobalAveragePooling2D::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  expect_ndim(inputs[0].shape(), 0, 4);
  return reduce(ReduceOp::kMean, cast_input(inputs[0]), {1, 2}, keepdims_);
}

}  // namespace gpuaccel::nn
