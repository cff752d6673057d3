// Keras's SGD: plain gradient descent, optionally with (Nesterov) momentum.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class SGD : public Optimizer {
 public:
  // ValueError unless learning_rate >= 0 and momentum in [0, 1].
  explicit SGD(double learning_rate = 0.01, double momentum = 0.0, bool nesterov = false,
               OptimizerOptions options = {});

  double momentum() const { return momentum_; }
  bool nesterov() const { return nesterov_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  double momentum_;
  bool nesterov_;
};

}  // namespace gpuaccel::optim
