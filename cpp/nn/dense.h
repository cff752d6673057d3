// Keras's Dense: y = activation(x @ kernel + bias) on the last axis of an input of any rank
// >= 2; kernel (in, out), bias (out,).
#pragma once

#include "nn/activations.h"
#include "nn/layer.h"

namespace gpuaccel::nn {

class Dense : public Layer {
 public:
  Dense(std::string name, int64_t units, const std::string& activation = "linear",
        bool use_bias = true, const std::string& kernel_initializer = "glorot_uniform",
        const std::string& bias_initializer = "zeros");
  const char* type() const override { return "Dense"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

  int64_t units() const { return units_; }

 protected:
  void do_build(const ShapeList& input_shapes) override;

 private:
  void check(const Shape& shape) const;

  int64_t units_;
  ActivationFn activation_;
  bool use_bias_;
  std::string kernel_initializer_, bias_initializer_;
  int64_t input_dim_ = -1;
  Tensor kernel_, bias_;
};

}  // namespace gpuaccel::nn
