// Keras's RMSprop: gradients divided by a running RMS, optionally centered (by the running mean)
// and with plain momentum.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class RMSprop : public Optimizer {
 public:
  // ValueError unless learning_rate >= 0, rho and momentum in [0, 1], epsilon >= 0.
  explicit RMSprop(double learning_rate = 0.001, double rho = 0.9, double momentum = 0.0,
                   double epsilon = 1e-7, bool centered = false, OptimizerOptions options = {});

  double rho() const { return rho_; }
  double momentum() const { return momentum_; }
  double epsilon() const { return epsilon_; }
  bool centered() const { return centered_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  double rho_, momentum_, epsilon_;
  bool centered_;
};

}  // namespace gpuaccel::optim
