// Keras's Conv1D on (batch, steps, channels): kernel (k, in / groups, filters), bias (filters,). It runs
// as a Conv2D over a height-1 image (the same conv2d op, so every backend has it), keeping
// Keras's kernel shape so weights move to and from Keras unchanged.
#pragma once

#include <string>

#include "nn/kernel_layer.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

class Conv1D : public KernelLayer {
 public:
  Conv1D(std::string name, int64_t filters, int64_t kernel_size, int64_t stride,
         const std::string& padding, int64_t dilation, const std::string& activation = "linear",
         bool use_bias = true, const std::string& kernel_initializer = "glorot_uniform",
         const std::string& bias_initializer = "zeros", int64_t groups = 1);
  const char* type() const override { return "Conv1D"; }

 protected:
  void check(const Shape& input) const override;
  Shape output_shape_of(const Shape& input) const override;
  Shape kernel_shape(int64_t in_features) const override {
    return {kernel_size_, in_features / groups_, outputs()};
  }
  Tensor call_on(const Tensor& x, bool training) override;

 private:
  int64_t kernel_size_, stride_, dilation_, groups_;
  Padding padding_;
};

}  // namespace gpuaccel::nn
