// Conv2DTranspose (see conv2d_transpose.h): Keras's argument checks at construction, its output
// size, and one conv2d_transpose op with the bias, then the activation.
#include "nn/conv2d_transpose.h"

namespace gpuaccel::nn {

namespace {
std::string pair_text(int64_t a, int64_t b) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}
}  // namespace

Conv2DTranspose::Conv2DTranspose(std::string name, int64_t filters, int64_t kernel_h,
                                 int64_t kernel_w, int64_t stride_h, int64_t stride_w,
                                 const std::string& padding, int64_t output_padding_h,
                                 int64_t output_padding_w, int64_t dilation_h, int64_t dilation_w,
                                 const std::string& activation, bool use_bias,
                                 const std::string& kernel_initializer,
                                 const std::string& bias_initializer)
    : Conv2DBase(std::move(name), "Conv2DTranspose", filters, kernel_h, kernel_w, stride_h,
                 stride_w, padding, dilation_h, dilation_w, use_bias),
      output_padding_h_(output_padding_h), output_padding_w_(output_padding_w) {
  if ((output_padding_h < 0) != (output_padding_w < 0)) {
    fail("`output_padding` must be None or a tuple of 2 non-negative integers. Received output_padding=" +
         pair_text(output_padding_h, output_padding_w));
  }
  if (output_padding_h >= stride_h || output_padding_w >= stride_w) {
    fail("`output_padding` must be strictly less than `strides` for all dimensions. Received: "
         "output_padding=" + pair_text(output_padding_h, output_padding_w) + ", strides=" +
         pair_text(stride_h, stride_w));
  }
  parse_activation_and_initializers(activation, kernel_initializer, bias_initializer);
}

int64_t Conv2DTranspose::output_length(int64_t in, int64_t kernel, int64_t stride,
                                       int64_t dilation, int64_t output_padding) const {
  if (in < 0) return -1;
  return conv2d_transpose_output_length(in, kernel, stride, dilation, padding_, output_padding);
}

void Conv2DTranspose::check(const Shape& shape) const {
  check_image(shape);
  if (shape[1] == 0 || shape[2] == 0) {
    fail("Conv2DTranspose needs a non-empty image. Received input shape " + shape_text(shape));
  }
}

Shape Conv2DTranspose::output_shape_of(const Shape& s) const {
  return {s[0], output_length(s[1], kernel_h_, stride_h_, dilation_h_, output_padding_h_),
          output_length(s[2], kernel_w_, stride_w_, dilation_w_, output_padding_w_), outputs()};
}

Tensor Conv2DTranspose::call_on(const Tensor& x, bool training) {
  (void)training;
  const Tensor y = conv2d_transpose(
      x, kernel(), bias(),
      output_length(x.dim(1), kernel_h_, stride_h_, dilation_h_, output_padding_h_),
      output_length(x.dim(2), kernel_w_, stride_w_, dilation_w_, output_padding_w_), stride_h_,
      stride_w_, padding_, dilation_h_, dilation_w_);
  return apply_activation(activation(), y);
}

}  // namespace gpuaccel::nn
