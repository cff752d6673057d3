// Normalization (see normalization.h).
#include "nn/normalization.h"

#include "core/errors.h"
#include "nn/initializers.h"
#include "ops/creation.h"

namespace gpuaccel::nn {

Normalization::Normalization(std::string name, const char* type_name, int64_t axis,
                             const char* last_axis_meaning, double epsilon, bool center,
                             bool scale, const std::string& beta_initializer,
                             const std::string& gamma_initializer, int min_ndim)
    : SingleInputLayer(std::move(name)), epsilon_(epsilon), center_(center), scale_(scale),
      min_ndim_(min_ndim) {
  // fail() would ask type(), which is not the derived layer's yet: the same error by hand.
  const std::string where = std::string(type_name) + " '" + this->name() + "'";
  if (axis != -1) {
    throw_error(ErrorCode::kUnimplemented, where,
                std::string("only axis=-1 (") + last_axis_meaning +
                    ") is supported; received axis=" + std::to_string(axis));
  }
  if (!(epsilon > 0)) {
    throw_error(ErrorCode::kInvalidArgument, where,
                "epsilon must be positive; received epsilon=" + std::to_string(epsilon));
  }
  beta_init_ = canonical_initializer(beta_initializer, where);
  gamma_init_ = canonical_initializer(gamma_initializer, where);
}

void Normalization::check(const Shape& input) const {
  expect_defined_last_axis(input, min_ndim_, channels_);
}

void Normalization::build_for(const Shape& input) {
  channels_ = input.back();
  if (scale_) gamma_ = add_weight("gamma", {channels_}, gamma_init_);
  if (center_) beta_ = add_weight("beta", {channels_}, beta_init_);
}

Tensor Normalization::gamma_or_ones(const Tensor& x) const {
  return scale_ ? gamma_ : ones({channels_}, DType::kFloat32, x.device());
}

Tensor Normalization::beta_or_zeros(const Tensor& x) const {
  return center_ ? beta_ : zeros({channels_}, DType::kFloat32, x.device());
}

}  // namespace gpuaccel::nn
