// Reshape (see reshape.h).
#include "nn/reshape.h"

#include <limits>

#include "ops/shape_ops.h"

namespace gpuaccel::nn {

Reshape::Reshape(std::string name, Shape target_shape)
    : Layer(std::move(name)), target_(std::move(target_shape)) {
  int unknown = 0;
  for (int64_t d : target_) {
    if (d == -1) {
      ++unknown;
    } else if (d <= 0) {
      fail("target_shape entries must be positive or -1, got " + shape_text(target_));
    }
  }
  if (unknown > 1) fail("target_shape can have at most one -1, got " + shape_text(target_));
  // The known entries' product is taken in int64 below: (2**32 + 1, 2**32 - 1) would overflow.
  int64_t known = 1;
  for (int64_t d : target_) {
    if (d == -1) continue;
    if (known > std::numeric_limits<int64_t>::max() / d) {
      fail("target_shape " + shape_text(target_) + " holds more than 2^63 - 1 values per "
           "example");
    }
    known *= d;
  }
}

Shape Reshape::resolved(int64_t per_example) const {
  Shape out = target_;
  int64_t known = 1;
  int unknown_at = -1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      unknown_at = static_cast<int>(i);
    } else {
      known *= out[i];
    }
  }
  if (per_example < 0) return out;
  if (unknown_at >= 0) {
    if (known == 0 || per_example % known != 0) {
      fail("total size of the input (" + std::to_string(per_example) +
           " per example) is not divisible by the known target dimensions " + shape_text(target_));
    }
    out[unknown_at] = per_example / known;
  } else if (known != per_example) {
    fail("total size of the new array must be unchanged: input has " +
         std::to_string(per_example) + " values per example, target_shape " +
         shape_text(target_) + " has " + std::to_string(known));
  }
  return out;
}

Shape Reshape::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  const Shape& s = input_shapes[0];
  expect_min_ndim(s, 0, 1);
  int64_t per_example = 1;
  for (size_t i = 1; i < s.size(); ++i) per_example = s[i] < 0 ? -1 : per_example * s[i];
  Shape out{s[0]};
  for (int64_t d : resolved(per_example)) out.push_back(d);
  return out;
}

Tensor Reshape::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  const Tensor& x = inputs[0];
  expect_min_ndim(x.shape(), 0, 1);
  Shape out{x.dim(0)};
  // Per example from the trailing dimensions: an empty batch still has examples of that size.
  const Shape trailing(x.shape().begin() + 1, x.shape().end());
  for (int64_t d : resolved(shape_numel(trailing))) out.push_back(d);
  return reshape(cast_input(x), out);
}

}  // namespace gpuaccel::nn
