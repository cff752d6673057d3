// LayerNormalization (see layer_normalization.h) on the layer_norm op.
#include "nn/layer_normalization.h"

#include "core/errors.h"
#include "nn/initializers.h"
#include "ops/creation.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

LayerNormalization::LayerNormalization(std::string name, int64_t axis, double epsilon, bool center,
                                       bool scale, const std::string& beta_initializer,
                                       const std::string& gamma_initializer)
    : Layer(std::move(name)), epsilon_(epsilon), center_(center), scale_(scale) {
  const std::string where = std::string("LayerNormalization '") + this->name() + "'";
  if (axis != -1) {
    throw_error(ErrorCode::kUnimplemented, where,
                "only axis=-1 (the last axis) is supported; received axis=" + std::to_string(axis));
  }
  if (!(epsilon > 0)) fail("epsilon must be positive; received epsilon=" + std::to_string(epsilon));
  beta_init_ = canonical_initializer(beta_initializer, where);
  gamma_init_ = canonical_initializer(gamma_initializer, where);
}

void LayerNormalization::check(const Shape& shape) const {
  expect_defined_last_axis(shape, 1, channels_);
}

Shape LayerNormalization::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  return input_shapes[0];
}

void LayerNormalization::do_build(const ShapeList& input_shapes) {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  channels_ = input_shapes[0].back();
  if (scale_) gamma_ = add_weight("gamma", {channels_}, gamma_init_);
  if (center_) beta_ = add_weight("beta", {channels_}, beta_init_);
}

Tensor LayerNormalization::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  check(inputs[0].shape());
  const Tensor x = cast_input(inputs[0]);
  const Tensor gamma = scale_ ? gamma_ : ones({channels_}, DType::kFloat32, x.device());
  const Tensor beta = center_ ? beta_ : zeros({channels_}, DType::kFloat32, x.device());
  return layer_norm(x, gamma, beta, epsilon_);
}

}  // namespace gpuaccel::nn
