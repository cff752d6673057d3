// Dense (see dense.h): one `linear` op (matmul + bias on the last axis, and the activation when
// it can be fused: linear, relu); other activations follow it.
#include "nn/dense.h"

#include "ops/linalg.h"

namespace gpuaccel::nn {

Dense::Dense(std::string name, int64_t units, const std::string& activation, bool use_bias,
             const std::string& kernel_initializer, const std::string& bias_initializer)
    : KernelLayer(std::move(name), units, use_bias) {
  if (units <= 0) {
    fail("Received an invalid value for `units`, expected a positive integer. Received: units=" +
         std::to_string(units));
  }
  parse_activation_and_initializers(activation, kernel_initializer, bias_initializer);
}

void Dense::check(const Shape& input) const {
  expect_min_ndim(input, 0, 2);
  if (in_features() >= 0) expect_axis(input, 0, -1, in_features());
  if (input.back() < 0) {
    fail("The last dimension of the input to a Dense layer should be defined. Found None. "
         "Full input shape received: " + shape_text(input));
  }
}

Shape Dense::output_shape_of(const Shape& input) const {
  Shape out = input;
  out.back() = units();
  return out;
}

Tensor Dense::call_on(const Tensor& x, bool training) {
  (void)training;
  const Tensor b = bias();
  return then_activation([&](PostActivation fused) { return linear(x, kernel(), b, fused); });
}

}  // namespace gpuaccel::nn
