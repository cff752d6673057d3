// Keras's Activation layer: applies a named activation (activations.h) and nothing else.
#pragma once

#include "nn/activations.h"
#include "nn/layer.h"

namespace gpuaccel::nn {

class Activation : public Layer {
 public:
  Activation(std::string name, const std::string& activation);
  const char* type() const override { return "Activation"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 private:
  ActivationFn activation_;
};

}  // namespace gpuaccel::nn
