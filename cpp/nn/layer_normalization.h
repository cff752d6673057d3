// Keras's LayerNormalization over the last axis: each example's features normalized to zero
// mean and unit variance, then scaled by gamma and shifted by beta (weights in that order).
#pragma once

#include "nn/normalization.h"

namespace gpuaccel::nn {

class LayerNormalization : public Normalization {
 public:
  LayerNormalization(std::string name, int64_t axis = -1, double epsilon = 1e-3,
                     bool center = true, bool scale = true,
                     const std::string& beta_initializer = "zeros",
                     const std::string& gamma_initializer = "ones");
  const char* type() const override { return "LayerNormalization"; }

 protected:
  Tensor call_on(const Tensor& x, bool training) override;
};

}  // namespace gpuaccel::nn
