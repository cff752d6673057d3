// Keras's Dense: y = activation(x @ kernel + bias) on the last axis of an input of any rank
// >= 2; kernel (in, out), bias (out,).
#pragma once

#include "nn/kernel_layer.h"

namespace gpuaccel::nn {

class Dense : public KernelLayer {
 public:
  Dense(std::string name, int64_t units, const std::string& activation = "linear",
        bool use_bias = true, const std::string& kernel_initializer = "glorot_uniform",
        const std::string& bias_initializer = "zeros");
  const char* type() const override { return "Dense"; }
  int64_t units() const { return outputs(); }

 protected:
  void check(const Shape& input) const override;
  Shape output_shape_of(const Shape& input) const override;
  Shape kernel_shape(int64_t in_features) const override { return {in_features, units()}; }
  Tensor call_on(const Tensor& x, bool training) override;
};

}  // namespace gpuaccel::nn
