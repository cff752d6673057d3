// Keras's LayerNormalization over the last axis: each example's features normalized to zero
// mean and unit variance, then scaled by gamma and shifted by beta (weights in that order).
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class LayerNormalization : public Layer {
 public:
  LayerNormalization(std::string name, int64_t axis = -1, double epsilon = 1e-3,
                     bool center = true, bool scale = true,
                     const std::string& beta_initializer = "zeros",
                     const std::string& gamma_initializer = "ones");
  const char* type() const override { return "LayerNormalization"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override;

 private:
  void check(const Shape& shape) const;

  double epsilon_;
  bool center_, scale_;
  std::string beta_init_, gamma_init_;
  int64_t channels_ = -1;
  Tensor gamma_, beta_;
};

}  // namespace gpuaccel::nn
