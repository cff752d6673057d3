// Lamb's hyperparameters, step factors and norms (the element arithmetic is LambUpdateFunctor
// in kernels/optimizer_functors.h). The bias corrections 1 - beta^t live on the device as Adam's
// rate does; the two norms are reduced there between the passes, so no step reads the host.
#include "optim/lamb.h"

#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"

namespace gpuaccel::optim {

Lamb::Lamb(double learning_rate, double beta_1, double beta_2, double epsilon,
           OptimizerOptions options)
    : Optimizer("Lamb", learning_rate, std::move(options)),
      beta_1_(beta_1), beta_2_(beta_2), epsilon_(epsilon) {}

std::array<const char*, 3> Lamb::slot_names() const { return {"momentum", "velocity", nullptr}; }

void Lamb::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kLamb;
  u.one_minus_beta_1 = static_cast<float>(1.0 - beta_1_);
  u.one_minus_beta_2 = static_cast<float>(1.0 - beta_2_);
  u.epsilon = static_cast<float>(epsilon_);
}

void Lamb::advance_device_scalars(const LogicalDevice& device, int64_t iterations, float /*lr*/,
                                  const Tensor& skip) {
  DeviceStepFactors::Entry& e = step_factors_.advance(device, iterations, skip);
  const Tensor one = scalar_like(1.0, e.t);
  // Keras: 1.0 - power(float32(beta), local_step), in float32.
  copy_into(sub(one, binary(BinaryOp::kPow, scalar_like(beta_1_, e.t), e.t)), e.factors[0]);
  copy_into(sub(one, binary(BinaryOp::kPow, scalar_like(beta_2_, e.t), e.t)), e.factors[1]);
}

void Lamb::reduce_between_passes(VariableReduction& r) const {
  const DeviceStepFactors::Entry& e = step_factors_on(r.param.device());
  const Tensor& m = r.slots[0];
  const Tensor& v = r.slots[1];
  // LambUpdateFunctor::lamb_direction with ops: (m / c0) / (sqrt(v / c1) + epsilon).
  const Tensor direction = div(div(m, e.factors[0]),
                               add(unary(UnaryOp::kSqrt, div(v, e.factors[1])),
                                   scalar_like(epsilon_, m)));
  auto norm = [](const Tensor& x) {
    return unary(UnaryOp::kSqrt, reduce_sum(mul(x, x), {}, false));
  };
  copy_into(norm(r.param), r.factors[0]);
  copy_into(norm(direction), r.factors[1]);
}

}  // namespace gpuaccel::optim
