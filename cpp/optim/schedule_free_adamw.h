// Keras's ScheduleFreeAdamW (Defazio et al. 2024): Adam-style steps on a momentum sequence,
// which starts at the variable's value, and the variable kept at an interpolation between it
// and a running average, so no learning-rate schedule is needed; a linear warmup of
// warmup_steps. Keras does nothing special at evaluation time (the variable is evaluated as it
// is), and neither does this.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class ScheduleFreeAdamW : public Optimizer {
 public:
  // Keras checks none of the arguments; warmup_steps < 0 is taken as 0 (Keras's
  // `if self.warmup_steps > 0`).
  explicit ScheduleFreeAdamW(double learning_rate = 0.0025, double beta_1 = 0.9,
                             double beta_2 = 0.999, double epsilon = 1e-8,
                             double warmup_steps = 0, OptimizerOptions options = {});

  double beta_1() const { return beta_1_; }
  double beta_2() const { return beta_2_; }
  double epsilon() const { return epsilon_; }
  double warmup_steps() const { return warmup_steps_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  std::array<int, 3> slot_groups() const override { return {0, 0, 1}; }
  bool slot_copies_variable(int k) const override { return k == 0; }
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;
  void advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                              const Tensor& skip) override;

 private:
  double beta_1_, beta_2_, epsilon_;
  double warmup_steps_;
};

}  // namespace gpuaccel::optim
