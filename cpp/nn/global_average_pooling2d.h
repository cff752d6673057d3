// Keras's GlobalAveragePooling2D: the mean over height and width of NHWC images, (N, C), or
// (N, 1, 1, C) with keepdims.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class GlobalAveragePooling2D : public Layer {
 public:
  GlobalAveragePooling2D(std::string name, bool keepdims = false)
      : Layer(std::move(name)), keepdims_(keepdims) {}
  const char* type() const override { return "GlobalAveragePooling2D"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override;

 private:
  bool keepdims_;
};

}  // namespace gpuaccel::nn
