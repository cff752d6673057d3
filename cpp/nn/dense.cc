// Dense (see dense.h): one `linear` op (matmul + bias on the last axis, and the activation when
// it can be fused: linear, relu); other activations follow it.
#include "nn/dense.h"

#include "nn/initializers.h"
#include "ops/linalg.h"

namespace gpuaccel::nn {

Dense::Dense(std::string name, int64_t units, const std::string& activation, bool use_bias,
             const std::string& kernel_initializer, const std::string& bias_initializer)
    : Layer(std::move(name)), units_(units), use_bias_(use_bias) {
  const std::string where = std::string("Dense '") + this->name() + "'";
  if (units <= 0) {
    fail("Received an invalid value for `units`, expected a positive integer. Received: units=" +
         std::to_string(units));
  }
  activation_ = parse_activation(activation, where);
  kernel_initializer_ = canonical_initializer(kernel_initializer, where);
  bias_initializer_ = canonical_initializer(bias_initializer, where);
}

void Dense::check(const Shape& shape) const {
  expect_min_ndim(shape, 0, 2);
  if (input_dim_ >= 0) expect_axis(shape, 0, -1, input_dim_);
  if (shape.back() < 0) {
    fail("The last dimension of the input to a Dense layer should be defined. Found None. "
         "Full input shape received: " + shape_text(shape));
  }
}

Shape Dense::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  Shape out = input_shapes[0];
  out.back() = units_;
  return out;
}

void Dense::do_build(const ShapeList& input_shapes) {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  input_dim_ = input_shapes[0].back();
  kernel_ = add_weight("kernel", {input_dim_, units_}, kernel_initializer_);
  if (use_bias_) bias_ = add_weight("bias", {units_}, bias_initializer_);
}

Tensor Dense::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  check(inputs[0].shape());
  const Tensor x = cast_input(inputs[0]);
  const Tensor bias = use_bias_ ? read(bias_) : Tensor();
  PostActivation fused = PostActivation::kNone;
  if (fusable_activation(activation_, &fused)) return linear(x, read(kernel_), bias, fused);
  return apply_activation(activation_, linear(x, read(kernel_), bias));
}

}  // namespace gpuaccel::nn
