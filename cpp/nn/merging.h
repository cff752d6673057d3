// Keras's merging layers, which take a list of tensors: Add (element-wise sum of same-shaped
// inputs) and Concatenate (joined along `axis`, every other dimension equal).
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class Add : public Layer {
 public:
  explicit Add(std::string name) : Layer(std::move(name)) {}
  const char* type() const override { return "Add"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override { (void)output_shape(input_shapes); }
};

class Concatenate : public Layer {
 public:
  Concatenate(std::string name, int64_t axis) : Layer(std::move(name)), axis_(axis) {}
  const char* type() const override { return "Concatenate"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override { (void)output_shape(input_shapes); }

 private:
  int64_t axis_;
};

}  // namespace gpuaccel::nn
