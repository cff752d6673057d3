// Keras's Adagrad: each element's rate shrinks with the sum of its squared gradients.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class Adagrad : public Optimizer {
 public:
  // ValueError unless learning_rate, initial_accumulator_value and epsilon are >= 0.
  explicit Adagrad(double learning_rate = 0.001, double initial_accumulator_value = 0.1,
                   double epsilon = 1e-7, OptimizerOptions options = {});

  double initial_accumulator_value() const { return initial_accumulator_value_; }
  double epsilon() const { return epsilon_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  double slot_initial_value(int k) const override;
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  double initial_accumulator_value_, epsilon_;
};

}  // namespace gpuaccel::optim
