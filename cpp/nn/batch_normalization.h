// Keras's BatchNormalization over the last axis: weights gamma, beta (trainable), moving_mean,
// moving_variance (not trainable), in that order. Training normalizes with the batch
// statistics and updates the moving ones (moving = moving * momentum + batch * (1 - momentum));
// inference, and a frozen layer (trainable = False, as Keras 3), use the moving statistics.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class BatchNormalization : public Layer {
 public:
  BatchNormalization(std::string name, int64_t axis = -1, double momentum = 0.99,
                     double epsilon = 1e-3, bool center = true, bool scale = true,
                     const std::string& beta_initializer = "zeros",
                     const std::string& gamma_initializer = "ones",
                     const std::string& moving_mean_initializer = "zeros",
                     const std::string& moving_variance_initializer = "ones");
  const char* type() const override { return "BatchNormalization"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override;

 private:
  void check(const Shape& shape) const;

  double momentum_, epsilon_;
  bool center_, scale_;
  std::string beta_init_, gamma_init_, mean_init_, var_init_;
  int64_t channels_ = -1;
  Tensor gamma_, beta_, moving_mean_, moving_variance_;
};

}  // namespace gpuaccel::nn
