// Activation layer (see activation_layer.h).
#include "nn/activation_layer.h"

namespace gpuaccel::nn {

Activation::Activation(std::string name, const std::string& activation) : Layer(std::move(name)) {
  activation_ = parse_activation(activation, std::string("Activation '") + this->name() + "'");
}

Shape Activation::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  return input_shapes[0];
}

Tensor Activation::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  return apply_activation(activation_, cast_input(inputs[0]));
}

}  // namespace gpuaccel::nn
