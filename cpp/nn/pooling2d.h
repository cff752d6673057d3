// Keras's MaxPooling2D and AveragePooling2D on NHWC images: pool_size, strides (default: the
// pool size) and 'valid'/'same' padding; average pooling leaves padding out of the mean, as
// Keras does. No weights.
#pragma once

#include <string>

#include "nn/layer.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

class Pooling2D : public Layer {
 public:
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  // stride 0 (either axis) means "the pool size", Keras's strides=None.
  Pooling2D(std::string name, bool max, int64_t pool_h, int64_t pool_w, int64_t stride_h,
            int64_t stride_w, const std::string& padding);
  void do_build(const ShapeList& input_shapes) override;

 private:
  void check(const Shape& shape) const;

  bool max_;
  int64_t pool_h_, pool_w_, stride_h_, stride_w_;
  Padding padding_ = Padding::kValid;
};

class MaxPooling2D : public Pooling2D {
 public:
  MaxPooling2D(std::string name, int64_t pool_h = 2, int64_t pool_w = 2, int64_t stride_h = 0,
               int64_t stride_w = 0, const std::string& padding = "valid")
      : Pooling2D(std::move(name), true, pool_h, pool_w, stride_h, stride_w, padding) {}
  const char* type() const override { return "MaxPooling2D"; }
};

class AveragePooling2D : public Pooling2D {
 public:
  AveragePooling2D(std::string name, int64_t pool_h = 2, int64_t pool_w = 2, int64_t stride_h = 0,
                   int64_t stride_w = 0, const std::string& padding = "valid")
      : Pooling2D(std::move(name), false, pool_h, pool_w, stride_h, stride_w, padding) {}
  const char* type() const override { return "AveragePooling2D"; }
};

}  // namespace gpuaccel::nn
