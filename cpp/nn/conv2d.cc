// Conv2D (see conv2d.h): argument checks at construction, Keras's shape errors, and one conv2d
// op with bias and, when it can be fused (linear, relu), the activation; others follow it.
#include "nn/conv2d.h"

namespace gpuaccel::nn {

int64_t window_output_length(int64_t n, int64_t window, int64_t stride, int64_t dilation,
                             Padding padding) {
  if (n < 0) return -1;
  if (padding == Padding::kSame) return (n + stride - 1) / stride;
  const int64_t effective = (window - 1) * dilation + 1;
  const int64_t span = n - effective + 1;
  return span <= 0 ? 0 : (span + stride - 1) / stride;
}

std::string grouped_filters_error(int64_t groups, int64_t filters) {
  if (groups <= 0) {
    return "The number of groups must be a positive integer. Received: groups=" +
           std::to_string(groups) + ".";
  }
  if (filters % groups != 0) {
    return "The number of filters must be evenly divisible by the number of groups. Received: "
           "groups=" + std::to_string(groups) + ", filters=" + std::to_string(filters) + ".";
  }
  return "";
}

std::string grouped_channels_error(int64_t groups, int64_t channels, const std::string& shape) {
  if (channels % groups == 0) return "";
  return "The number of input channels must be evenly divisible by the number of groups. "
         "Received groups=" + std::to_string(groups) + ", but the input has " +
         std::to_string(channels) + " channels (full input shape is " + shape + ").";
}

Conv2D::Conv2D(std::string name, int64_t filters, int64_t kernel_h, int64_t kernel_w,
               int64_t stride_h, int64_t stride_w, const std::string& padding,
               int64_t dilation_h, int64_t dilation_w, const std::string& activation,
               bool use_bias, const std::string& kernel_initializer,
               const std::string& bias_initializer, int64_t groups)
    : Conv2DBase(std::move(name), "Conv2D", filters, kernel_h, kernel_w, stride_h, stride_w,
                 padding, dilation_h, dilation_w, use_bias),
      groups_(groups) {
  const std::string groups_error = grouped_filters_error(groups, filters);
  if (!groups_error.empty()) fail(groups_error);
  parse_activation_and_initializers(activation, kernel_initializer, bias_initializer);
}

void Conv2D::check(const Shape& shape) const {
  check_image(shape);
  const std::string groups_error = grouped_channels_error(groups_, shape[3], shape_text(shape));
  if (!groups_error.empty()) fail(groups_error);
  const int64_t oh = window_output_length(shape[1], kernel_h_, stride_h_, dilation_h_, padding_);
  const int64_t ow = window_output_length(shape[2], kernel_w_, stride_w_, dilation_w_, padding_);
  if (oh == 0 || ow == 0) {
    fail("One of the dimensions in the output is <= 0 due to downsampling in " + name() +
         ". Consider increasing the input size. Received input shape " + shape_text(shape) +
         " which would produce output shape with a zero or negative value in a dimension.");
  }
}

Shape Conv2D::output_shape_of(const Shape& s) const {
  return {s[0], window_output_length(s[1], kernel_h_, stride_h_, dilation_h_, padding_),
          window_output_length(s[2], kernel_w_, stride_w_, dilation_w_, padding_), outputs()};
}

Tensor Conv2D::call_on(const Tensor& x, bool training) {
  (void)training;
  const Tensor b = bias();
  return then_activation([&](PostActivation fused) {
    return conv2d(x, kernel(), b, stride_h_, stride_w_, padding_, dilation_h_, dilation_w_, fused,
                  groups_);
  });
}

}  // namespace gpuaccel::nn
