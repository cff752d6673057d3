// Keras's Lion (evolved sign momentum): every element moves by exactly the learning rate, in
// the sign of an interpolation of momentum and gradient.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class Lion : public Optimizer {
 public:
  // ValueError unless learning_rate >= 0, beta_1 in (0, 1] (Keras: else it degenerates to
  // SignSGD) and beta_2 in [0, 1].
  explicit Lion(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.99,
                OptimizerOptions options = {});

  double beta_1() const { return beta_1_; }
  double beta_2() const { return beta_2_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  double beta_1_, beta_2_;
};

}  // namespace gpuaccel::optim
