// Conv1D (see conv1d.h).
#include "nn/conv1d.h"

#include "nn/conv2d.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {

Conv1D::Conv1D(std::string name, int64_t filters, int64_t kernel_size, int64_t stride,
               const std::string& padding, int64_t dilation, const std::string& activation,
               bool use_bias, const std::string& kernel_initializer,
               const std::string& bias_initializer, int64_t groups)
    : KernelLayer(std::move(name), filters, use_bias), kernel_size_(kernel_size), stride_(stride),
      dilation_(dilation), groups_(groups) {
  if (filters <= 0) {
    fail("Invalid value for argument `filters`. Expected a strictly positive value. "
         "Received filters=" + std::to_string(filters));
  }
  if (kernel_size <= 0 || stride <= 0 || dilation <= 0) {
    fail("kernel_size, strides and dilation_rate must be positive integers. Received "
         "kernel_size=" + std::to_string(kernel_size) + ", strides=" + std::to_string(stride) +
         ", dilation_rate=" + std::to_string(dilation));
  }
  if (stride > 1 && dilation > 1) {
    fail("`strides > 1` not supported in conjunction with `dilation_rate > 1`");
  }
  if (padding != "valid" && padding != "same") {
    fail("The `padding` argument must be one of 'valid', 'same'. Received: padding='" +
         padding + "'");
  }
  const std::string groups_error = grouped_filters_error(groups, filters);
  if (!groups_error.empty()) fail(groups_error);
  padding_ = padding == "same" ? Padding::kSame : Padding::kValid;
  parse_activation_and_initializers(activation, kernel_initializer, bias_initializer);
}

void Conv1D::check(const Shape& shape) const {
  expect_ndim(shape, 0, 3);
  if (in_features() >= 0) expect_axis(shape, 0, -1, in_features());
  if (shape[2] < 0) fail("The channel dimension of the inputs should be defined");
  const std::string groups_error = grouped_channels_error(groups_, shape[2], shape_text(shape));
  if (!groups_error.empty()) fail(groups_error);
  if (window_output_length(shape[1], kernel_size_, stride_, dilation_, padding_) == 0) {
    fail("One of the dimensions in the output is <= 0 due to downsampling in " + name() +
         ". Received input shape " + shape_text(shape));
  }
}

Shape Conv1D::output_shape_of(const Shape& s) const {
  return {s[0], window_output_length(s[1], kernel_size_, stride_, dilation_, padding_), outputs()};
}

Tensor Conv1D::call_on(const Tensor& x, bool training) {
  (void)training;
  const Tensor image = expand_dims(x, 1);                 // (N, 1, L, C)
  const Tensor kernel = expand_dims(this->kernel(), 0);  // (1, k, C, F)
  const Tensor y = conv2d(image, kernel, bias(), 1, stride_, padding_, 1, dilation_,
                         PostActivation::kNone, groups_);
  return apply_activation(activation(), squeeze(y, {1}));
}

}  // namespace gpuaccel::nn
