// SingleInputLayer (see single_input_layer.h).
#include "nn/single_input_layer.h"

namespace gpuaccel::nn {

Shape SingleInputLayer::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  return output_shape_of(input_shapes[0]);
}

void SingleInputLayer::do_build(const ShapeList& input_shapes) {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  build_for(input_shapes[0]);
}

Tensor SingleInputLayer::call(const std::vector<Tensor>& inputs, bool training) {
  expect_built();
  expect_inputs(inputs.size(), 1);
  check(inputs[0].shape());
  return call_on(cast_input(inputs[0]), training);
}

}  // namespace gpuaccel::nn
