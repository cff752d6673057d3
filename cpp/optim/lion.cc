// Lion's hyperparameters and per-step update parameters (the arithmetic is LionUpdateFunctor in
// kernels/optimizer_functors.h).
#include "optim/lion.h"

#include <string>

#include "core/errors.h"
#include "optim/number_text.h"

namespace gpuaccel::optim {

Lion::Lion(double learning_rate, double beta_1, double beta_2, OptimizerOptions options)
    : Optimizer("Lion", learning_rate, std::move(options)), beta_1_(beta_1), beta_2_(beta_2) {
  if (!(beta_1 > 0.0 && beta_1 <= 1.0)) {
    // Keras's text.
    throw_value_error("Lion", "Argument `beta_1` must be in the [0, 1] range. Otherwise, the "
                              "optimizer degenerates to SignSGD. Received: beta_1=" +
                                  python_float(beta_1) + ".");
  }
  require_range("beta_2", beta_2, 0.0, 1.0);
}

std::array<const char*, 3> Lion::slot_names() const { return {"momentum", nullptr, nullptr}; }

void Lion::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kLion;
  // Keras casts beta to float32 and subtracts it from 1.0 in float32.
  const float beta_1 = static_cast<float>(beta_1_), beta_2 = static_cast<float>(beta_2_);
  u.beta_1 = beta_1;
  u.beta_2 = beta_2;
  u.one_minus_beta_1 = 1.0f - beta_1;
  u.one_minus_beta_2 = 1.0f - beta_2;
}

}  // namespace gpuaccel::optim
