// BatchNormalization (see batch_normalization.h): the batch_norm op does the statistics, the
// moving-average update and the gradient; this adds Keras's arguments and checks.
#include "nn/batch_normalization.h"

#include "nn/initializers.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

BatchNormalization::BatchNormalization(std::string name, int64_t axis, double momentum,
                                       double epsilon, bool center, bool scale,
                                       const std::string& beta_initializer,
                                       const std::string& gamma_initializer,
                                       const std::string& moving_mean_initializer,
                                       const std::string& moving_variance_initializer)
    : Normalization(std::move(name), "BatchNormalization", axis, "channels last", epsilon, center,
                    scale, beta_initializer, gamma_initializer, /*min_ndim=*/2),
      momentum_(momentum) {
  const std::string where = std::string("BatchNormalization '") + this->name() + "'";
  mean_init_ = canonical_initializer(moving_mean_initializer, where);
  var_init_ = canonical_initializer(moving_variance_initializer, where);
}

void BatchNormalization::build_for(const Shape& input) {
  Normalization::build_for(input);
  moving_mean_ = add_weight("moving_mean", {channels()}, mean_init_, false);
  moving_variance_ = add_weight("moving_variance", {channels()}, var_init_, false);
}

Tensor BatchNormalization::call_on(const Tensor& x, bool training) {
  return batch_norm(x, gamma_or_ones(x), beta_or_zeros(x), moving_mean_, moving_variance_,
                    momentum_, epsilon(), training && trainable());
}

}  // namespace gpuaccel::nn
