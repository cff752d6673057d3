// Adadelta's hyperparameters and per-step update parameters (the arithmetic is
// AdadeltaUpdateFunctor in kernels/optimizer_functors.h).
#include "optim/adadelta.h"

namespace gpuaccel::optim {

Adadelta::Adadelta(double learning_rate, double rho, double epsilon, OptimizerOptions options)
    : Optimizer("Adadelta", learning_rate, std::move(options)), rho_(rho), epsilon_(epsilon) {
  require_range("rho", rho, 0.0, 1.0);
  require_non_negative("epsilon", epsilon);
}

std::array<const char*, 3> Adadelta::slot_names() const {
  return {"accumulated_grad", "accumulated_delta_var", nullptr};
}

void Adadelta::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kAdadelta;
  u.rho = static_cast<float>(rho_);
  u.one_minus_rho = static_cast<float>(1.0 - rho_);
  u.epsilon = static_cast<float>(epsilon_);
}

}  // namespace gpuaccel::optim
