// Keras's Adam (optionally AMSGrad) and AdamW, which is Adam with decoupled weight decay
// (default 0.004) that may not be turned off.
#pragma once

#include <vector>

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class Adam : public Optimizer {
 public:
  // ValueError unless learning_rate >= 0, beta_1 and beta_2 in [0, 1), epsilon >= 0.
  explicit Adam(double learning_rate = 0.001, double beta_1 = 0.9, double beta_2 = 0.999,
                double epsilon = 1e-7, bool amsgrad = false, OptimizerOptions options = {});

  double beta_1() const { return beta_1_; }
  double beta_2() const { return beta_2_; }
  double epsilon() const { return epsilon_; }
  bool amsgrad() const { return amsgrad_; }

 protected:
  Adam(const char* type, double learning_rate, double beta_1, double beta_2, double epsilon,
       bool amsgrad, OptimizerOptions options);
  std::array<const char*, 3> slot_names() const override;
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;
  void advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                              const Tensor& skip) override;
  std::array<int, 3> slot_groups() const override { return {0, 0, 1}; }

 private:
  double beta_1_, beta_2_, epsilon_;
  bool amsgrad_;
};

class AdamW : public Adam {
 public:
  // options.weight_decay is replaced by `weight_decay` (ValueError when negative).
  explicit AdamW(double learning_rate = 0.001, double weight_decay = 0.004, double beta_1 = 0.9,
                 double beta_2 = 0.999, double epsilon = 1e-7, bool amsgrad = false,
                 OptimizerOptions options = {});
};

}  // namespace gpuaccel::optim
