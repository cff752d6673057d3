// BatchNormalization (see batch_normalization.h): the batch_norm op does the statistics, the
// moving-average update and the gradient; this adds Keras's arguments and checks.
#include "nn/batch_normalization.h"

#include "core/errors.h"
#include "nn/initializers.h"
#include "ops/creation.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

BatchNormalization::BatchNormalization(std::string name, int64_t axis, double momentum,
                                       double epsilon, bool center, bool scale,
                                       const std::string& beta_initializer,
                                       const std::string& gamma_initializer,
                                       const std::string& moving_mean_initializer,
                                       const std::string& moving_variance_initializer)
    : Layer(std::move(name)), momentum_(momentum), epsilon_(epsilon), center_(center), scale_(scale) {
  const std::string where = std::string("BatchNormalization '") + this->name() + "'";
  if (axis != -1) {
    throw_error(ErrorCode::kUnimplemented, where,
                "only axis=-1 (channels last) is supported; received axis=" + std::to_string(axis));
  }
  if (!(epsilon > 0)) fail("epsilon must be positive; received epsilon=" + std::to_string(epsilon));
  beta_init_ = canonical_initializer(beta_initializer, where);
  gamma_init_ = canonical_initializer(gamma_initializer, where);
  mean_init_ = canonical_initializer(moving_mean_initializer, where);
  var_init_ = canonical_initializer(moving_variance_initializer, where);
}

void BatchNormalization::check(const Shape& shape) const {
  expect_defined_last_axis(shape, 2, channels_);
}

Shape BatchNormalization::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  return input_shapes[0];
}

void BatchNormalization::do_build(const ShapeList& input_shapes) {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  channels_ = input_shapes[0].back();
  if (scale_) gamma_ = add_weight("gamma", {channels_}, gamma_init_);
  if (center_) beta_ = add_weight("beta", {channels_}, beta_init_);
  moving_mean_ = add_weight("moving_mean", {channels_}, mean_init_, false);
  moving_variance_ = add_weight("moving_variance", {channels_}, var_init_, false);
}

Tensor BatchNormalization::call(const std::vector<Tensor>& inputs, bool training) {
  expect_built();
  expect_inputs(inputs.size(), 1);
  check(inputs[0].shape());
  const Tensor x = cast_input(inputs[0]);
  // The op wants gamma and beta: without scale/center they are constants 1 and 0.
  const Tensor gamma = scale_ ? gamma_ : ones({channels_}, DType::kFloat32, x.device());
  const Tensor beta = center_ ? beta_ : zeros({channels_}, DType::kFloat32, x.device());
  return batch_norm(x, gamma, beta, moving_mean_, moving_variance_, momentum_, epsilon_,
                    training && trainable());
}

}  // namespace gpuaccel::nn
