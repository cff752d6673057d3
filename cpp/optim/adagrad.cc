// Adagrad's hyperparameters and per-step update parameters (the arithmetic is
// AdagradUpdateFunctor in kernels/optimizer_functors.h).
#include "optim/adagrad.h"

namespace gpuaccel::optim {

Adagrad::Adagrad(double learning_rate, double initial_accumulator_value, double epsilon,
                 OptimizerOptions options)
    : Optimizer("Adagrad", learning_rate, std::move(options)),
      initial_accumulator_value_(initial_accumulator_value), epsilon_(epsilon) {
  require_non_negative("initial_accumulator_value", initial_accumulator_value);
  require_non_negative("epsilon", epsilon);
}

std::array<const char*, 3> Adagrad::slot_names() const { return {"accumulator", nullptr, nullptr}; }

double Adagrad::slot_initial_value(int k) const {
  return k == 0 ? initial_accumulator_value_ : 0.0;
}

void Adagrad::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kAdagrad;
  u.epsilon = static_cast<float>(epsilon_);
}

}  // namespace gpuaccel::optim
