// RMSprop's hyperparameters and per-step update parameters (the arithmetic is
// RmspropUpdateFunctor in kernels/optimizer_functors.h).
#include "optim/rmsprop.h"

namespace gpuaccel::optim {

RMSprop::RMSprop(double learning_rate, double rho, double momentum, double epsilon, bool centered,
                 OptimizerOptions options)
    : Optimizer("RMSprop", learning_rate, std::move(options)),
      rho_(rho), momentum_(momentum), epsilon_(epsilon), centered_(centered) {
  require_range("rho", rho, 0.0, 1.0);
  require_range("momentum", momentum, 0.0, 1.0);
  require_non_negative("epsilon", epsilon);
}

std::array<const char*, 3> RMSprop::slot_names() const {
  // Keras's order and names: velocity, then momentum (momentum > 0), then average_gradient.
  return {"velocity", momentum_ > 0.0 ? "momentum" : nullptr,
          centered_ ? "average_gradient" : nullptr};
}

void RMSprop::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kRmsprop;
  if (momentum_ > 0.0) u.flags |= kOptimizerMomentum;
  if (centered_) u.flags |= kOptimizerCentered;
  u.rho = static_cast<float>(rho_);
  u.one_minus_rho = static_cast<float>(1.0 - rho_);
  u.momentum = static_cast<float>(momentum_);
  u.epsilon = static_cast<float>(epsilon_);
}

}  // namespace gpuaccel::optim
