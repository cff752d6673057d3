// Keras's Conv2D on NHWC images: kernel (kh, kw, in / groups, filters), bias (filters,), strides,
// 'valid'/'same' padding and dilation as TF resolves them, then the activation.
#pragma once

#include <string>

#include "nn/conv2d_base.h"

namespace gpuaccel::nn {

// The output length of a sliding window along one axis (-1 stays unknown): 'valid' keeps
// windows that fit, ceil((n - effective + 1) / stride); 'same' gives ceil(n / stride).
int64_t window_output_length(int64_t n, int64_t window, int64_t stride, int64_t dilation,
                             Padding padding);

// Keras's checks of a grouped convolution (Conv2D and Conv1D's groups=): its error text, or an
// empty string where the arguments are fine. At construction: groups >= 1 dividing filters.
std::string grouped_filters_error(int64_t groups, int64_t filters);
// At build: groups dividing the input's channels (`shape` is the input's shape as text).
std::string grouped_channels_error(int64_t groups, int64_t channels, const std::string& shape);

class Conv2D : public Conv2DBase {
 public:
  Conv2D(std::string name, int64_t filters, int64_t kernel_h, int64_t kernel_w, int64_t stride_h,
         int64_t stride_w, const std::string& padding, int64_t dilation_h, int64_t dilation_w,
         const std::string& activation = "linear", bool use_bias = true,
         const std::string& kernel_initializer = "glorot_uniform",
         const std::string& bias_initializer = "zeros", int64_t groups = 1);

 protected:
  void check(const Shape& input) const override;
  Shape output_shape_of(const Shape& input) const override;
  Shape kernel_shape(int64_t in_features) const override {
    return {kernel_h_, kernel_w_, in_features / groups_, outputs()};
  }
  Tensor call_on(const Tensor& x, bool training) override;

 private:
  int64_t groups_;
};

}  // namespace gpuaccel::nn
