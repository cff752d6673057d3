// The non-inline members of nn::Layer (layer.h): weight creation and reads in the compute
// dtype, and the shape checks every layer shares, so their error texts are written once and
// read like Keras's InputSpec errors.
#include "nn/layer.h"

#include <optional>

#include "core/errors.h"
#include "nn/initializers.h"
#include "ops/creation.h"
#include "ops/shape_ops.h"
#include "ops/weight_cast.h"

namespace gpuaccel::nn {

Tensor Layer::add_weight(const std::string& name, const Shape& shape,
                         const std::string& initializer, bool trainable) {
  const LogicalDevice device = creation_device("VarHandleOp", std::nullopt);
  Tensor value = initialize(initializer, shape, device, std::string(type()) + " '" + name_ + "'");
  value.impl()->requires_grad = trainable;
  weights_.push_back(Weight{name, value, trainable});
  return value;
}

Tensor Layer::read(const Tensor& weight) const {
  if (!weight.defined() || weight.dtype() == compute_dtype_ || !is_floating(weight.dtype())) return weight;
  return cast_weight(weight, compute_dtype_);  // made once per weight version
}

Tensor Layer::cast_input(const Tensor& x) const {
  if (!is_floating(x.dtype()) || x.dtype() == compute_dtype_) return x;
  return cast(x, compute_dtype_);
}

void Layer::fail(const std::string& what) const {
  throw_error(ErrorCode::kInvalidArgument, std::string(type()) + " '" + name_ + "'", what);
}

void Layer::expect_inputs(size_t given, size_t count) const {
  if (given == count) return;
  fail("layer '" + name_ + "' expects " + std::to_string(count) + " input" + (count == 1 ? "" : "s") +
       ", but it received " + std::to_string(given) + " input tensor" + (given == 1 ? "" : "s"));
}

std::string Layer::shape_text(const Shape& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += shape[i] < 0 ? "None" : std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

void Layer::expect_ndim(const Shape& shape, size_t index, int ndim) const {
  if (static_cast<int>(shape.size()) == ndim) return;
  fail("Input " + std::to_string(index) + " of layer '" + name_ +
       "' is incompatible with the layer: expected ndim=" + std::to_string(ndim) +
       ", found ndim=" + std::to_string(shape.size()) + ". Full shape received: " + shape_text(shape));
}

void Layer::expect_min_ndim(const Shape& shape, size_t index, int min_ndim) const {
  if (static_cast<int>(shape.size()) >= min_ndim) return;
  fail("Input " + std::to_string(index) + " of layer '" + name_ +
       "' is incompatible with the layer: expected min_ndim=" + std::to_string(min_ndim) +
       ", found ndim=" + std::to_string(shape.size()) + ". Full shape received: " + shape_text(shape));
}

void Layer::expect_axis(const Shape& shape, size_t index, int axis, int64_t value) const {
  const int n = static_cast<int>(shape.size());
  const int a = axis < 0 ? axis + n : axis;
  if (a >= 0 && a < n && (shape[a] == value || shape[a] < 0)) return;
  fail("Input " + std::to_string(index) + " of layer '" + name_ +
       "' is incompatible with the layer: expected axis " + std::to_string(axis) +
       " of input shape to have value " + std::to_string(value) +
       ", but received input with shape " + shape_text(shape));
}

void Layer::expect_defined_last_axis(const Shape& shape, int min_ndim, int64_t built_size) const {
  expect_min_ndim(shape, 0, min_ndim);
  if (shape.back() < 0) {
    fail("Axis -1 of input tensor should have a defined dimension but the layer received an input "
         "with shape " + shape_text(shape) + ".");
  }
  if (built_size >= 0) expect_axis(shape, 0, -1, built_size);
}

void Layer::expect_built() const {
  if (built_) return;
  fail("layer '" + name_ + "' has not been built: call build(input_shape) or call it on data "
       "first, which builds it from the input's shape");
}

std::vector<Tensor> Layer::trainable_weights() const {
  std::vector<Tensor> out;
  if (!trainable_) return out;
  for (const Weight& w : weights_) {
    if (w.trainable) out.push_back(w.value);
  }
  return out;
}

int64_t Layer::count_params() const {
  int64_t total = 0;
  for (const Weight& w : weights_) total += w.value.numel();
  return total;
}

}  // namespace gpuaccel::nn
