// Keras's Adamax: Adam with the second moment replaced by an exponentially weighted infinity
// norm of the gradients.
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class Adamax : public Optimizer {
 public:
  // ValueError unless learning_rate >= 0, beta_1 in [0, 1), beta_2 in [0, 1], epsilon >= 0.
  explicit Adamax(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
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

 private:
  double beta_1_, beta_2_, epsilon_;
};

}  // namespace gpuaccel::optim
