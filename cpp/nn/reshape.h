// Keras's Reshape(target_shape): (batch, ...) -> (batch, *target_shape), one entry of the
// target may be -1 (inferred). A view when the input is contiguous.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class Reshape : public Layer {
 public:
  Reshape(std::string name, Shape target_shape);
  const char* type() const override { return "Reshape"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override { (void)output_shape(input_shapes); }

 private:
  // The target with its -1 resolved for `per_example` elements per example (-1 if unknown).
  Shape resolved(int64_t per_example) const;
  Shape target_;
};

}  // namespace gpuaccel::nn
