// SGD's hyperparameters and per-step update parameters (the arithmetic is SgdUpdateFunctor in
// kernels/optimizer_functors.h).
#include "optim/sgd.h"

namespace gpuaccel::optim {

SGD::SGD(double learning_rate, double momentum, bool nesterov, OptimizerOptions options)
    : Optimizer("SGD", learning_rate, std::move(options)), momentum_(momentum), nesterov_(nesterov) {
  require_range("momentum", momentum, 0.0, 1.0);
}

std::array<const char*, 3> SGD::slot_names() const {
  // Keras creates the momentum slot only when momentum != 0.
  return {momentum_ != 0.0 ? "momentum" : nullptr, nullptr, nullptr};
}

void SGD::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kSgd;
  if (momentum_ != 0.0) {
    u.flags |= kOptimizerMomentum;
    if (nesterov_) u.flags |= kOptimizerNesterov;
  }
  u.momentum = static_cast<float>(momentum_);
}

}  // namespace gpuaccel::optim
