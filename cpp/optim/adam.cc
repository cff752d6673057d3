// Adam's hyperparameters and per-step update parameters (the arithmetic is AdamUpdateFunctor in
// kernels/optimizer_functors.h). The step counter and the bias-corrected rate live on the
// parameters' device and are advanced there by ops each step, in float32 as Keras computes
// them (local_step = iterations + 1, beta ** local_step, lr * sqrt(1 - beta_2 ** t) /
// (1 - beta_1 ** t)): no host value of the step reaches the update, so a captured training step
// replays the right rate (docs/gpu_step.md).
#include "optim/adam.h"

#include <algorithm>
#include <cmath>

#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/shape_ops.h"

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
  // alpha comes from the device (advance_device_scalars, attach_device_scalars).
  (void)step, (void)lr;
}

void Adam::advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                                  const Tensor& skip) {
  DeviceStepFactors::Entry& e = step_factors_.advance(device, iterations, skip);
  const Tensor& t = e.t;
  const Tensor one = scalar_like(1.0, t);
  const Tensor beta_1_power = binary(BinaryOp::kPow, scalar_like(beta_1_, t), t);
  const Tensor beta_2_power = binary(BinaryOp::kPow, scalar_like(beta_2_, t), t);
  const Tensor alpha = div(mul(scalar_like(double(lr), t), unary(UnaryOp::kSqrt, sub(one, beta_2_power))),
                           sub(one, beta_1_power));
  copy_into(alpha, e.factors[0]);  // AdamUpdateFunctor's alpha
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
