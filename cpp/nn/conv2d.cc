// Conv2D (see conv2d.h): argument checks at construction, Keras's shape errors, and one conv2d
// op with bias and, when it can be fused (linear, relu), the activation; others follow it.
#include "nn/conv2d.h"

#include "nn/initializers.h"

namespace gpuaccel::nn {

int64_t window_output_length(int64_t n, int64_t window, int64_t stride, int64_t dilation,
                             Padding padding) {
  if (n < 0) return -1;
  if (padding == Padding::kSame) return (n + stride - 1) / stride;
  const int64_t effective = (window - 1) * dilation + 1;
  const int64_t span = n - effective + 1;
  return span <= 0 ? 0 : (span + stride - 1) / stride;
}

Conv2D::Conv2D(std::string name, int64_t filters, int64_t kernel_h, int64_t kernel_w,
               int64_t stride_h, int64_t stride_w, const std::string& padding,
               int64_t dilation_h, int64_t dilation_w, const std::string& activation,
               bool use_bias, const std::string& kernel_initializer,
               const std::string& bias_initializer)
    : Layer(std::move(name)), filters_(filters), kernel_h_(kernel_h), kernel_w_(kernel_w),
      stride_h_(stride_h), stride_w_(stride_w), dilation_h_(dilation_h), dilation_w_(dilation_w),
      use_bias_(use_bias) {
  const std::string where = std::string("Conv2D '") + this->name() + "'";
  if (filters <= 0) {
    fail("Invalid value for argument `filters`. Expected a strictly positive value. Received filters=" +
         std::to_string(filters));
  }
  if (kernel_h <= 0 || kernel_w <= 0) {
    fail("The `kernel_size` argument must be a tuple of 2 positive integers. Received kernel_size=(" +
         std::to_string(kernel_h) + ", " + std::to_string(kernel_w) + ")");
  }
  if (stride_h <= 0 || stride_w <= 0) {
    fail("The `strides` argument must be a tuple of 2 positive integers. Received strides=(" +
         std::to_string(stride_h) + ", " + std::to_string(stride_w) + ")");
  }
  if (dilation_h <= 0 || dilation_w <= 0) {
    fail("The `dilation_rate` argument must be a tuple of 2 positive integers. Received dilation_rate=(" +
         std::to_string(dilation_h) + ", " + std::to_string(dilation_w) + ")");
  }
  if ((stride_h > 1 || stride_w > 1) && (dilation_h > 1 || dilation_w > 1)) {
    fail("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: strides=(" +
         std::to_string(stride_h) + ", " + std::to_string(stride_w) + ") and dilation_rate=(" +
         std::to_string(dilation_h) + ", " + std::to_string(dilation_w) + ")");
  }
  if (padding != "valid" && padding != "same") {
    fail("The `padding` argument must be one of 'valid', 'same'. Received: padding='" + padding + "'");
  }
  padding_ = padding == "same" ? Padding::kSame : Padding::kValid;
  activation_ = parse_activation(activation, where);
  kernel_initializer_ = canonical_initializer(kernel_initializer, where);
  bias_initializer_ = canonical_initializer(bias_initializer, where);
}

void Conv2D::check(const Shape& shape) const {
  expect_ndim(shape, 0, 4);
  if (in_channels_ >= 0) expect_axis(shape, 0, -1, in_channels_);
  if (shape[3] < 0) {
    fail("The channel dimension of the inputs should be defined. The input_shape received is " +
         shape_text(shape) + ", where axis -1 (0-based) is the channel dimension, which found to be `None`.");
  }
  const int64_t oh = window_output_length(shape[1], kernel_h_, stride_h_, dilation_h_, padding_);
  const int64_t ow = window_output_length(shape[2], kernel_w_, stride_w_, dilation_w_, padding_);
  if (oh == 0 || ow == 0) {
    fail("One of the dimensions in the output is <= 0 due to downsampling in " + name() +
         ". Consider increasing the input size. Received input shape " + shape_text(shape) +
         " which would produce output shape with a zero or negative value in a dimension.");
  }
}

Shape Conv2D::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  const Shape& s = input_shapes[0];
  check(s);
  return {s[0], window_output_length(s[1], kernel_h_, stride_h_, dilation_h_, padding_),
          window_output_length(s[2], kernel_w_, stride_w_, dilation_w_, padding_), filters_};
}

void Conv2D::do_build(const ShapeList& input_shapes) {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
  in_channels_ = input_shapes[0][3];
  kernel_ = add_weight("kernel", {kernel_h_, kernel_w_, in_channels_, filters_}, kernel_initializer_);
  if (use_bias_) bias_ = add_weight("bias", {filters_}, bias_initializer_);
}

Tensor Conv2D::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  check(inputs[0].shape());
  const Tensor x = cast_input(inputs[0]);
  const Tensor bias = use_bias_ ? read(bias_) : Tensor();
  PostActivation fused = PostActivation::kNone;
  if (fusable_activation(activation_, &fused)) {
    return conv2d(x, read(kernel_), bias, stride_h_, stride_w_, padding_, dilation_h_, dilation_w_,
                  fused);
  }
  const Tensor y = conv2d(x, read(kernel_), bias, stride_h_, stride_w_, padding_, dilation_h_,
                          dilation_w_);
  return apply_activation(activation_, y);
}

}  // namespace gpuaccel::nn
