// Keras's Ftrl (Follow The Regularized Leader, McMahan et al. 2013): per-coordinate rates with
// L1 / L2 / L2-shrinkage regularization, the optimizer of large sparse linear models.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

struct FtrlSettings {
  double learning_rate_power = -0.5;  // <= 0
  double initial_accumulator_value = 0.1;  // >= 0
  double l1_regularization_strength = 0.0;  // >= 0
  double l2_regularization_strength = 0.0;  // >= 0
  double l2_shrinkage_regularization_strength = 0.0;  // >= 0
  double beta = 0.0;
};

class Ftrl : public Optimizer {
 public:
  // ValueError (Keras's texts) for a setting out of the ranges above, or learning_rate < 0.
  explicit Ftrl(double learning_rate = 0.001, FtrlSettings settings = {},
                OptimizerOptions options = {});

  const FtrlSettings& settings() const { return settings_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  std::array<int, 3> slot_groups() const override { return {0, 0, 1}; }
  double slot_initial_value(int k) const override;
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  FtrlSettings settings_;
};

}  // namespace gpuaccel::optim
