// Keras's Flatten: (batch, d1, d2, ...) -> (batch, d1*d2*...); a rank-1 input becomes
// (batch, 1). A view when the input is contiguous.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class Flatten : public Layer {
 public:
  explicit Flatten(std::string name) : Layer(std::move(name)) {}
  const char* type() const override { return "Flatten"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override;
};

}  // namespace gpuaccel::nn
