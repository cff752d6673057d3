// Adam's hyperparameters and per-step update parameters (the arithmetic is AdamUpdateFunctor in
// kernels/optimizer_functors.h). The bias-corrected rate is computed here in double from the
// float32 values Keras keeps (lr, beta_1, beta_2 are float32 variables/casts there), so both
// agree to a float32 rounding.
#include "optim/adam.h"

#include <cmath>

namespace gpuaccel::optim {

Adam::Adam(double learning_rate, double beta_1, double beta_2, double epsilon, bool amsgrad,
           OptimizerOptions options)
    : Adam("Adam", learning_rate, beta_1, beta_2, epsilon, amsgrad, std::move(options)) {}

Adam::Adam(const char* type, double learning_rate, double beta_1, double beta_2, double epsilon,
           bool amsgrad, OptimizerOptions options)
    : Optimizer(type, learning_rate, std::move(options)),
      beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon), amsgrad_(amsgrad) {
  require_range("beta_1", beta_1, 0.0, 1.0, /*high_open=*/true);
  require_range("beta_2", beta_2, 0.0, 1.0, /*high_open=*/true);
  require_non_negative("epsilon", epsilon);
}

std::array<const char*, 3> Adam::slot_names() const {
  return {"momentum", "velocity", amsgrad_ ? "velocity_hat" : nullptr};
}

void Adam::fill_update(OptimizerUpdate& u, int64_t step, float lr) const {
  u.kind = OptimizerKind::kAdam;
  if (amsgrad_) u.flags |= kOptimizerAmsgrad;
  u.one_minus_beta_1 = static_cast<float>(1.0 - beta_1_);
  u.one_minus_beta_2 = static_cast<float>(1.0 - beta_2_);
  u.epsilon = static_cast<float>(epsilon_);
  const double b1 = static_cast<float>(beta_1_);
  const double b2 = static_cast<float>(beta_2_);
  const double t = static_cast<double>(step);
  u.alpha = static_cast<float>(static_cast<double>(lr) * std::sqrt(1.0 - std::pow(b2, t)) /
                               (1.0 - std::pow(b1, t)));
}

namespace {
OptimizerOptions with_weight_decay(OptimizerOptions options, double weight_decay) {
  options.weight_decay = weight_decay;
  return options;
}
}  // namespace

AdamW::AdamW(double learning_rate, double weight_decay, double beta_1, double beta_2,
             double epsilon, bool amsgrad, OptimizerOptions options)
    : Adam("AdamW", learning_rate, beta_1, beta_2, epsilon, amsgrad,
           with_weight_decay(std::move(options), weight_decay)) {}

}  // namespace gpuaccel::optim
