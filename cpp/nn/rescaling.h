// Keras's Rescaling(scale, offset): x * scale + offset, e.g. 1/255 for uint8 images. The
// Python layer casts integer inputs to float first, as Keras does.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class Rescaling : public Layer {
 public:
  Rescaling(std::string name, double scale, double offset)
      : Layer(std::move(name)), scale_(scale), offset_(offset) {}
  const char* type() const override { return "Rescaling"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 private:
  double scale_;
  double offset_;
};

}  // namespace gpuaccel::nn
