// Keras's Conv2DTranspose on NHWC images, the upsampling layer of decoders (autoencoders, GAN
// generators, super-resolution): kernel (kh, kw, filters, in) as Keras keeps it, bias
// (filters,), strides, 'valid'/'same' padding, output_padding and dilation sized as Keras 3 sizes
// them, then the activation.
#pragma once

#include <string>

#include "nn/conv2d_base.h"

namespace gpuaccel::nn {

class Conv2DTranspose : public Conv2DBase {
 public:
  // output_padding_h/_w < 0: none given (Keras's output_padding=None).
  Conv2DTranspose(std::string name, int64_t filters, int64_t kernel_h, int64_t kernel_w,
                  int64_t stride_h, int64_t stride_w, const std::string& padding,
                  int64_t output_padding_h, int64_t output_padding_w, int64_t dilation_h,
                  int64_t dilation_w, const std::string& activation = "linear",
                  bool use_bias = true, const std::string& kernel_initializer = "glorot_uniform",
                  const std::string& bias_initializer = "zeros");

 protected:
  void check(const Shape& input) const override;
  Shape output_shape_of(const Shape& input) const override;
  // Keras's transposed layout: the filters come before the input channels.
  Shape kernel_shape(int64_t in_features) const override {
    return {kernel_h_, kernel_w_, outputs(), in_features};
  }
  Tensor call_on(const Tensor& x, bool training) override;

 private:
  // The output length along one axis (-1 stays unknown).
  int64_t output_length(int64_t in, int64_t kernel, int64_t stride, int64_t dilation,
                        int64_t output_padding) const;

  int64_t output_padding_h_, output_padding_w_;
};

}  // namespace gpuaccel::nn
