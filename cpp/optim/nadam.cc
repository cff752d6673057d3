// Nadam's hyperparameters and per-step update parameters (the arithmetic is NadamUpdateFunctor
// in kernels/optimizer_functors.h). Keras keeps the running product of the momentum schedule,
// u_product, as an optimizer variable; here it is the device state of
// optim/device_step_factors.h, rebuilt from the step count after set_iterations (it is a pure
// function of the count), and the step's three factors are computed from it on the device.
#include "optim/nadam.h"

#include <cmath>

#include "ops/elementwise.h"
#include "ops/shape_ops.h"

namespace gpuaccel::optim {

namespace {
constexpr double kScheduleDecay = 0.96;  // Keras's decay of the momentum schedule
}  // namespace

Nadam::Nadam(double learning_rate, double beta_1, double beta_2, double epsilon,
             OptimizerOptions options)
    : Optimizer("Nadam", learning_rate, std::move(options)),
      beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {
  require_range("beta_1", beta_1, 0.0, 1.0, /*high_open=*/true);
  require_range("beta_2", beta_2, 0.0, 1.0, /*high_open=*/true);
  require_non_negative("epsilon", epsilon);
}

std::array<const char*, 3> Nadam::slot_names() const { return {"momentum", "velocity", nullptr}; }

void Nadam::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kNadam;
  u.one_minus_beta_1 = static_cast<float>(1.0 - beta_1_);
  u.one_minus_beta_2 = static_cast<float>(1.0 - beta_2_);
  u.epsilon = static_cast<float>(epsilon_);
}

void Nadam::advance_device_scalars(const LogicalDevice& device, int64_t iterations, float /*lr*/,
                                   const Tensor& skip) {
  // u_product after `iterations` steps, for a device seen for the first time.
  float initial_product = 1.0f;
  for (int64_t s = 1; s <= iterations; ++s) {
    initial_product = initial_product * static_cast<float>(beta_1_) *
                      static_cast<float>(1.0 - 0.5 * std::pow(kScheduleDecay, double(s)));
  }
  DeviceStepFactors::Entry& e = step_factors_.advance(device, iterations, skip, initial_product);
  const Tensor& t = e.t;
  const Tensor one = scalar_like(1.0, t);
  const Tensor beta_1 = scalar_like(beta_1_, t);
  auto schedule = [&](const Tensor& step) {  // u_step = beta_1 * (1 - 0.5 * 0.96^step)
    return mul(beta_1, sub(one, mul(scalar_like(0.5, t),
                                    binary(BinaryOp::kPow, scalar_like(kScheduleDecay, t), step))));
  };
  const Tensor u_t = schedule(t);
  const Tensor u_next = schedule(add(t, one));
  // Keras: u_product = u_product * beta_1 * (1 - 0.5 * 0.96^t), not on a skipped step.
  Tensor product = mul(e.state, u_t);
  if (skip.defined()) product = add(mul(product, sub(one, skip)), mul(e.state, skip));
  copy_into(product, e.state);
  const Tensor product_next = mul(product, u_next);
  const Tensor beta_2_power = binary(BinaryOp::kPow, scalar_like(beta_2_, t), t);
  copy_into(div(u_next, sub(one, product_next)), e.factors[0]);
  copy_into(div(sub(one, u_t), sub(one, product)), e.factors[1]);
  copy_into(div(one, sub(one, beta_2_power)), e.factors[2]);
}

}  // namespace gpuaccel::optim
