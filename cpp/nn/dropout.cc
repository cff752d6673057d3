// Dropout (see dropout.h); the mask comes from the dropout op's counter-based generator.
#include "nn/dropout.h"

#include <cmath>
#include <sstream>

#include "ops/elementwise.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

Dropout::Dropout(std::string name, double rate) : Layer(std::move(name)), rate_(rate) {
  if (!(rate >= 0.0 && rate <= 1.0)) {
    std::ostringstream text;
    text << "Invalid value received for argument `rate`. Expected a float value between 0 and 1. "
            "Received: rate=" << rate;
    fail(text.str());
  }
}

Shape Dropout::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  return input_shapes[0];
}

Tensor Dropout::call(const std::vector<Tensor>& inputs, bool training) {
  expect_built();
  expect_inputs(inputs.size(), 1);
  const Tensor x = cast_input(inputs[0]);
  if (!training || rate_ == 0.0) return x;
  // rate 1 drops everything (the op's 1/(1 - rate) scale would divide by zero).
  if (rate_ >= 1.0) return mul(x, scalar_like(0.0, x));
  return dropout(x, rate_, true);
}

}  // namespace gpuaccel::nn
