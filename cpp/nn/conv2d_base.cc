// Conv2DBase (see conv2d_base.h).
#include "nn/conv2d_base.h"

namespace gpuaccel::nn {

namespace {
std::string pair_text(int64_t a, int64_t b) {
  return "(" + std::to_string(a) + ", " + std::to_string(b) + ")";
}
}  // namespace

Conv2DBase::Conv2DBase(std::string name, const char* type, int64_t filters, int64_t kernel_h,
                       int64_t kernel_w, int64_t stride_h, int64_t stride_w,
                       const std::string& padding, int64_t dilation_h, int64_t dilation_w,
                       bool use_bias)
    : KernelLayer(std::move(name), filters, use_bias), kernel_h_(kernel_h), kernel_w_(kernel_w),
      stride_h_(stride_h), stride_w_(stride_w), dilation_h_(dilation_h), dilation_w_(dilation_w),
      type_(type) {
  if (filters <= 0) {
    fail("Invalid value for argument `filters`. Expected a strictly positive value. Received filters=" +
         std::to_string(filters));
  }
  if (kernel_h <= 0 || kernel_w <= 0) {
    fail("The `kernel_size` argument must be a tuple of 2 positive integers. Received kernel_size=" +
         pair_text(kernel_h, kernel_w));
  }
  if (stride_h <= 0 || stride_w <= 0) {
    fail("The `strides` argument must be a tuple of 2 positive integers. Received strides=" +
         pair_text(stride_h, stride_w));
  }
  if (dilation_h <= 0 || dilation_w <= 0) {
    fail("The `dilation_rate` argument must be a tuple of 2 positive integers. Received dilation_rate=" +
         pair_text(dilation_h, dilation_w));
  }
  if ((stride_h > 1 || stride_w > 1) && (dilation_h > 1 || dilation_w > 1)) {
    fail("`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: strides=" +
         pair_text(stride_h, stride_w) + " and dilation_rate=" + pair_text(dilation_h, dilation_w));
  }
  if (padding != "valid" && padding != "same") {
    fail("The `padding` argument must be one of 'valid', 'same'. Received: padding='" + padding + "'");
  }
  padding_ = padding == "same" ? Padding::kSame : Padding::kValid;
}

void Conv2DBase::check_image(const Shape& shape) const {
  expect_ndim(shape, 0, 4);
  if (in_features() >= 0) expect_axis(shape, 0, -1, in_features());
  if (shape[3] < 0) {
    fail("The channel dimension of the inputs should be defined. The input_shape received is " +
         shape_text(shape) + ", where axis -1 (0-based) is the channel dimension, which found to be `None`.");
  }
}

}  // namespace gpuaccel::nn
