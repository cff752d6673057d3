// Keras's Conv2D on NHWC images: kernel (kh, kw, in, filters), bias (filters,), strides,
// 'valid'/'same' padding and dilation as TF resolves them, then the activation.
#pragma once

#include <string>

#include "nn/conv2d_base.h"

namespace gpuaccel::nn {

// The output length of a sliding window along one axis (-1 stays unknown): 'valid' keeps
// windows that fit, ceil((n - effective + 1) / stride); 'same' gives ceil(n / stride).
int64_t window_output_length(int64_t n, int64_t window, int64_t stride, int64_t dilation,
                             Padding padding);

class Conv2D : public Conv2DBase {
 public:
  Conv2D(std::string name, int64_t filters, int64_t kernel_h, int64_t kernel_w, int64_t stride_h,
         int64_t stride_w, const std::string& padding, int64_t dilation_h, int64_t dilation_w,
         const std::string& activation = "linear", bool use_bias = true,
         const std::string& kernel_initializer = "glorot_uniform",
         const std::string& bias_initializer = "zeros");

 protected:
  void check(const Shape& input) const override;
  Shape output_shape_of(const Shape& input) const override;
  Shape kernel_shape(int64_t in_features) const override {
    return {kernel_h_, kernel_w_, in_features, outputs()};
  }
  Tensor call_on(const Tensor& x, bool training) override;
};

}  // namespace gpuaccel::nn
