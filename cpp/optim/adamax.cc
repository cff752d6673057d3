// Adamax's hyperparameters and per-step update parameters (the arithmetic is AdamaxUpdateFunctor
// in kernels/optimizer_functors.h). Its bias-corrected rate lr / (1 - beta_1^t) lives on the
// parameters' device (optim/device_step_factors.h), as Adam's does.
#include "optim/adamax.h"

#include "ops/elementwise.h"
#include "ops/shape_ops.h"

namespace gpuaccel::optim {

Adamax::Adamax(double learning_rate, double beta_1, double beta_2, double epsilon,
               OptimizerOptions options)
    : Optimizer("Adamax", learning_rate, std::move(options)),
      beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {
  require_range("beta_1", beta_1, 0.0, 1.0, /*high_open=*/true);
  require_range("beta_2", beta_2, 0.0, 1.0);
  require_non_negative("epsilon", epsilon);
}

std::array<const char*, 3> Adamax::slot_names() const { return {"momentum", "norm", nullptr}; }

void Adamax::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kAdamax;
  u.one_minus_beta_1 = static_cast<float>(1.0 - beta_1_);
  u.beta_2 = static_cast<float>(beta_2_);
  u.epsilon = static_cast<float>(epsilon_);
}

void Adamax::advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                                    const Tensor& skip) {
  DeviceStepFactors::Entry& e = step_factors_.advance(device, iterations, skip);
  const Tensor& t = e.t;
  const Tensor beta_1_power = binary(BinaryOp::kPow, scalar_like(beta_1_, t), t);
  copy_into(div(scalar_like(double(lr), t), sub(scalar_like(1.0, t), beta_1_power)),
            e.factors[0]);
}

}  // namespace gpuaccel::optim
