// Rescaling (see rescaling.h).
#include "nn/rescaling.h"

#include "ops/elementwise.h"

namespace gpuaccel::nn {

Shape Rescaling::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  return input_shapes[0];
}

Tensor Rescaling::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  const Tensor x = cast_input(inputs[0]);
  return add(mul(x, scalar_like(scale_, x)), scalar_like(offset_, x));
}

}  // namespace gpuaccel::nn
