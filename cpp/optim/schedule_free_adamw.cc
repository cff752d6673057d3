// ScheduleFreeAdamW's hyperparameters and step factors (the element arithmetic is
// ScheduleFreeAdamWUpdateFunctor in kernels/optimizer_functors.h). The warmed-up rate, Adam's
// second-moment correction and the averaging weight 1/t depend on the step: they live on the
// device, as Adam's rate does, computed in float32 as Keras computes them.
#include "optim/schedule_free_adamw.h"

#include "ops/elementwise.h"
#include "ops/shape_ops.h"

namespace gpuaccel::optim {

ScheduleFreeAdamW::ScheduleFreeAdamW(double learning_rate, double beta_1, double beta_2,
                                     double epsilon, double warmup_steps,
                                     OptimizerOptions options)
    : Optimizer("ScheduleFreeAdamW", learning_rate, std::move(options)),
      beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon), warmup_steps_(warmup_steps) {}

std::array<const char*, 3> ScheduleFreeAdamW::slot_names() const {
  return {"momentum", "velocity", nullptr};
}

void ScheduleFreeAdamW::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kScheduleFreeAdamW;
  // Keras casts the betas to float32 and subtracts them from 1 in float32.
  const float beta_1 = static_cast<float>(beta_1_), beta_2 = static_cast<float>(beta_2_);
  u.beta_1 = beta_1;
  u.one_minus_beta_1 = 1.0f - beta_1;
  u.one_minus_beta_2 = 1.0f - beta_2;
  u.epsilon = static_cast<float>(epsilon_);
}

void ScheduleFreeAdamW::advance_device_scalars(const LogicalDevice& device, int64_t iterations,
                                               float lr, const Tensor& skip) {
  DeviceStepFactors::Entry& e = step_factors_.advance(device, iterations, skip);
  const Tensor& t = e.t;
  const Tensor one = scalar_like(1.0, t);
  Tensor rate = scalar_like(double(lr), t);
  if (warmup_steps_ > 0) {
    rate = mul(rate, binary(BinaryOp::kMinimum, div(t, scalar_like(warmup_steps_, t)), one));
  }
  copy_into(rate, e.factors[0]);
  copy_into(sub(one, binary(BinaryOp::kPow, scalar_like(beta_2_, t), t)), e.factors[1]);
  copy_into(div(one, t), e.factors[2]);
}

}  // namespace gpuaccel::optim
