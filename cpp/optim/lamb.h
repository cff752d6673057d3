// Keras's Lamb (layer-wise adaptive moments): Adam's direction scaled per variable by the trust
// ratio ||w|| / ||direction||. The norms are reductions one element pass cannot compute, so Lamb
// is a two-pass optimizer (optim/optimizer.h): moments, then the norms, then the move.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class Lamb : public Optimizer {
 public:
  // Keras checks none of beta_1, beta_2, epsilon; neither does this (learning_rate >= 0 only).
  explicit Lamb(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7, OptimizerOptions options = {});

  double beta_1() const { return beta_1_; }
  double beta_2() const { return beta_2_; }
  double epsilon() const { return epsilon_; }

 protected:
  std::array<const char*, 3> slot_names() const override;
  std::array<int, 3> slot_groups() const override { return {0, 0, 1}; }
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;
  void advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                              const Tensor& skip) override;
  bool two_pass() const override { return true; }
  void reduce_between_passes(VariableReduction& r) const override;

 private:
  double beta_1_, beta_2_, epsilon_;
};

}  // namespace gpuaccel::optim
