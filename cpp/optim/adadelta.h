// Keras's Adadelta: steps scaled by the ratio of running RMS values of past updates and of
// gradients.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class Adadelta : public Optimizer {
 public:
  // ValueError unless learning_rate >= 0, rho in [0, 1], epsilon >= 0.
  explicit Adadelta(double learning_rate = 0.001, double rho = 0.95, double epsilon = 1e-7,
                    OptimizerOptions options = {});

  double rho() const { return rho_; }
  double epsilon() const { return epsilon_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  std::array<int, 3> slot_groups() const override { return {0, 0, 1}; }
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  double rho_, epsilon_;
};

}  // namespace gpuaccel::optim
