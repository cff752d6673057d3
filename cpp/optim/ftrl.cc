// Ftrl's hyperparameters and per-step update parameters (the arithmetic is FtrlUpdateFunctor in
// kernels/optimizer_functors.h).
#include "optim/ftrl.h"

#include <string>

#include "core/errors.h"
#include "optim/number_text.h"

namespace gpuaccel::optim {

namespace {
// Keras's "`<arg>` needs to be <sign>. Received: <arg>=<value>." checks.
void require_sign(const char* arg, double value, bool non_positive) {
  if (non_positive ? value <= 0.0 : value >= 0.0) return;
  throw_value_error("Ftrl", std::string("`") + arg + "` needs to be " +
                                (non_positive ? "negative or zero" : "positive or zero") +
                                ". Received: " + arg + "=" + python_float(value) + ".");
}
}  // namespace

Ftrl::Ftrl(double learning_rate, FtrlSettings settings, OptimizerOptions options)
    : Optimizer("Ftrl", learning_rate, std::move(options)), settings_(settings) {
  require_sign("initial_accumulator_value", settings.initial_accumulator_value, false);
  require_sign("learning_rate_power", settings.learning_rate_power, true);
  require_sign("l1_regularization_strength", settings.l1_regularization_strength, false);
  require_sign("l2_regularization_strength", settings.l2_regularization_strength, false);
  require_sign("l2_shrinkage_regularization_strength",
               settings.l2_shrinkage_regularization_strength, false);
}

std::array<const char*, 3> Ftrl::slot_names() const { return {"accumulator", "linear", nullptr}; }

double Ftrl::slot_initial_value(int k) const {
  return k == 0 ? settings_.initial_accumulator_value : 0.0;
}

void Ftrl::fill_update(OptimizerUpdate& u, int64_t /*step*/, float lr) const {
  u.kind = OptimizerKind::kFtrl;
  u.learning_rate_power = static_cast<float>(settings_.learning_rate_power);
  u.l1 = static_cast<float>(settings_.l1_regularization_strength);
  // Keras folds beta into the L2 strength with the step's rate: l2 + beta / (2 * lr).
  u.l2 = static_cast<float>(settings_.l2_regularization_strength +
                            settings_.beta / (2.0 * double(lr)));
  u.l2_shrinkage = static_cast<float>(settings_.l2_shrinkage_regularization_strength);
}

}  // namespace gpuaccel::optim
