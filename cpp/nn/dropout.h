// Keras's Dropout: in training, zeroes each element with probability `rate` and scales the
// kept ones by 1/(1 - rate) (so the expected value is unchanged); the identity otherwise.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class Dropout : public Layer {
 public:
  Dropout(std::string name, double rate);
  const char* type() const override { return "Dropout"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;
  double rate() const { return rate_; }

 private:
  double rate_;
};

}  // namespace gpuaccel::nn
