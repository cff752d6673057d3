// Keras's Conv1D on (batch, steps, channels): kernel (k, in, filters), bias (filters,). It runs
// as a Conv2D over a height-1 image (the same conv2d op, so every backend has it), keeping
// Keras's kernel shape so weights move to and from Keras unchanged.
#pragma once

#include <string>

#include "nn/activations.h"
#include "nn/layer.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

class Conv1D : public Layer {
 public:
  Conv1D(std::string name, int64_t filters, int64_t kernel_size, int64_t stride,
         const std::string& padding, int64_t dilation, const std::string& activation = "linear",
         bool use_bias = true, const std::string& kernel_initializer = "glorot_uniform",
         const std::string& bias_initializer = "zeros");
  const char* type() const override { return "Conv1D"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override;

 private:
  void check(const Shape& shape) const;

  int64_t filters_, kernel_size_, stride_, dilation_;
  Padding padding_;
  ActivationFn activation_;
  bool use_bias_;
  std::string kernel_initializer_, bias_initializer_;
  int64_t in_channels_ = -1;
  Tensor kernel_, bias_;
};

}  // namespace gpuaccel::nn
