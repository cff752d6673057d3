// MaxPooling2D / AveragePooling2D (see pooling2d.h): argument and shape checks, then pool2d.
#include "nn/pooling2d.h"

#include "core/errors.h"
#include "nn/conv2d.h"

namespace gpuaccel::nn {

Pooling2D::Pooling2D(std::string name, bool max, int64_t pool_h, int64_t pool_w, int64_t stride_h,
                     int64_t stride_w, const std::string& padding)
    : Layer(std::move(name)), max_(max), pool_h_(pool_h), pool_w_(pool_w),
      stride_h_(stride_h == 0 ? pool_h : stride_h), stride_w_(stride_w == 0 ? pool_w : stride_w) {
  // type() is not usable in a base constructor: errors here name the layer directly.
  const std::string kind = max ? "MaxPooling2D" : "AveragePooling2D";
  const std::string where = kind + " '" + this->name() + "'";
  if (pool_h <= 0 || pool_w <= 0) {
    throw_error(ErrorCode::kInvalidArgument, where,
                "The `pool_size` argument must be a tuple of 2 positive integers. Received pool_size=(" +
                    std::to_string(pool_h) + ", " + std::to_string(pool_w) + ")");
  }
  if (stride_h_ <= 0 || stride_w_ <= 0) {
    throw_error(ErrorCode::kInvalidArgument, where,
                "The `strides` argument must be a tuple of 2 positive integers (or None for the pool "
                "size). Received strides=(" + std::to_string(stride_h) + ", " + std::to_string(stride_w) + ")");
  }
  if (padding != "valid" && padding != "same") {
    throw_error(ErrorCode::kInvalidArgument, where,
                "The `padding` argument must be one of 'valid', 'same'. Received: padding='" + padding + "'");
  }
  padding_ = padding == "same" ? Padding::kSame : Padding::kValid;
}

void Pooling2D::check(const Shape& shape) const {
  expect_ndim(shape, 0, 4);
  const int64_t oh = window_output_length(shape[1], pool_h_, stride_h_, 1, padding_);
  const int64_t ow = window_output_length(shape[2], pool_w_, stride_w_, 1, padding_);
  if (oh == 0 || ow == 0) {
    fail("Computed output size would be zero or negative: a " + std::to_string(pool_h_) + "x" +
         std::to_string(pool_w_) + " pool with 'valid' padding does not fit in input shape " +
         shape_text(shape) + ". Use a smaller pool_size or padding='same'.");
  }
}

Shape Pooling2D::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  const Shape& s = input_shapes[0];
  check(s);
  return {s[0], window_output_length(s[1], pool_h_, stride_h_, 1, padding_),
          window_output_length(s[2], pool_w_, stride_w_, 1, padding_), s[3]};
}

void Pooling2D::do_build(const ShapeList& input_shapes) {
  expect_inputs(input_shapes.size(), 1);
  check(input_shapes[0]);
}

Tensor Pooling2D::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  check(inputs[0].shape());
  return pool2d(cast_input(inputs[0]), max_, pool_h_, pool_w_, stride_h_, stride_w_, padding_);
}

}  // namespace gpuaccel::nn
