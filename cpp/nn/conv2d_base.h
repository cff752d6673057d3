// What Keras's Conv2D and Conv2DTranspose share beyond KernelLayer, so that each states only
// how it differs: the checks of their window arguments (kernel size, strides, padding,
// dilation, and filters, in Keras's words) and the check of an (N, H, W, C) input.
#pragma once

#include <string>

#include "nn/kernel_layer.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

class Conv2DBase : public KernelLayer {
 public:
  // The derived class's Keras name, given to the constructor: the argument checks run (and
  // name the layer in their errors) while only this base is constructed.
  const char* type() const override { return type_; }

 protected:
  Conv2DBase(std::string name, const char* type, int64_t filters, int64_t kernel_h,
             int64_t kernel_w, int64_t stride_h, int64_t stride_w, const std::string& padding,
             int64_t dilation_h, int64_t dilation_w, bool use_bias);
  // An (N, H, W, C) shape with a defined C, the C built with once built.
  void check_image(const Shape& shape) const;

  int64_t kernel_h_, kernel_w_, stride_h_, stride_w_, dilation_h_, dilation_w_;
  Padding padding_;

 private:
  const char* type_;
};

}  // namespace gpuaccel::nn
