// Keras's BatchNormalization over the last axis: weights gamma, beta (trainable), moving_mean,
// moving_variance (not trainable), in that order. Training normalizes with the batch
// statistics and updates the moving ones (moving = moving * momentum + batch * (1 - momentum));
// inference, and a frozen layer (trainable = False, as Keras 3), use the moving statistics.
#pragma once

#include "nn/normalization.h"

namespace gpuaccel::nn {

class BatchNormalization : public Normalization {
 public:
  BatchNormalization(std::string name, int64_t axis = -1, double momentum = 0.99,
                     double epsilon = 1e-3, bool center = true, bool scale = true,
                     const std::string& beta_initializer = "zeros",
                     const std::string& gamma_initializer = "ones",
                     const std::string& moving_mean_initializer = "zeros",
                     const std::string& moving_variance_initializer = "ones");
  const char* type() const override { return "BatchNormalization"; }

 protected:
  // gamma and beta, then the moving statistics.
  void build_for(const Shape& input) override;
  Tensor call_on(const Tensor& x, bool training) override;

 private:
  double momentum_;
  std::string mean_init_, var_init_;
  Tensor moving_mean_, moving_variance_;
};

}  // namespace gpuaccel::nn
