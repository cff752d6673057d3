// Keras's loss formulas over the op frontends (so gradients come from autograd). Where Keras
// works on probabilities rather than logits it clips them to [1e-7, 1 - 1e-7] first (its
// backend epsilon), which is what keeps log() finite; we follow it so losses match Keras's to
// float32 rounding even for saturated predictions.
#include "nn/losses.h"

#include "core/errors.h"
#include "ops/elementwise.h"
#include "ops/nn.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {

namespace {

constexpr double kEpsilon = 1e-7;  // keras.config.epsilon()

const char* kind_op_name(LossKind kind) {
  switch (kind) {
    case LossKind::kSparseCategoricalCrossentropy: return "SparseCategoricalCrossentropy";
    case LossKind::kCategoricalCrossentropy: return "CategoricalCrossentropy";
    case LossKind::kBinaryCrossentropy: return "BinaryCrossentropy";
    case LossKind::kMeanSquaredError: return "MeanSquaredError";
  }
  return "Loss";
}

Tensor scalar(double value, const Tensor& like) { return scalar_like(value, like); }

Tensor clip_probabilities(const Tensor& p) {
  return binary(BinaryOp::kMinimum, binary(BinaryOp::kMaximum, p, scalar(kEpsilon, p)),
                scalar(1.0 - kEpsilon, p));
}

// Keras's label smoothing: y * (1 - s) + s / num_classes (categorical), s / 2 (binary).
Tensor smooth(const Tensor& y, double smoothing, double classes) {
  if (smoothing == 0.0) return y;
  return add(mul(y, scalar(1.0 - smoothing, y)), scalar(smoothing / classes, y));
}

// -sum(y * log(p)) over the last axis, p normalized to sum 1 and clipped, as Keras does for
// probability inputs.
Tensor categorical_from_probabilities(const Tensor& y, const Tensor& p) {
  const Tensor normalized = div(p, reduce_sum(p, {-1}, true));
  return neg(reduce_sum(mul(y, unary(UnaryOp::kLog, clip_probabilities(normalized))), {-1}, false));
}

// Sparse labels (N,) or (N, 1) of any integer (or integral float) dtype -> int64 (N,).
Tensor sparse_labels(const Tensor& labels, const Tensor& y_pred, const char* op) {
  Tensor y = labels;
  if (y.ndim() == y_pred.ndim() && y.ndim() > 0 && y.dim(y.ndim() - 1) == 1) y = squeeze(y, {-1});
  if (y.ndim() != y_pred.ndim() - 1) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "labels of shape " + shape_to_string(labels.shape()) +
                    " do not fit predictions of shape " + shape_to_string(y_pred.shape()) +
                    ": sparse labels are class indices with the predictions' shape minus the "
                    "class axis (e.g. (N,) or (N, 1) for (N, C) predictions)");
  }
  return y.dtype() == DType::kInt64 ? y : cast(y, DType::kInt64);
}

// Labels with the predictions' shape; (N,) labels against (N, 1) predictions gain the unit
// axis (Keras pairs them element by element rather than broadcasting to (N, N)).
Tensor same_shape_labels(const Tensor& y_true, const Tensor& y_pred, const char* op) {
  if (y_true.ndim() + 1 == y_pred.ndim() && y_pred.dim(y_pred.ndim() - 1) == 1) {
    return same_shape_labels(expand_dims(y_true, -1), y_pred, op);
  }
  if (y_true.shape() != y_pred.shape()) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "labels of shape " + shape_to_string(y_true.shape()) +
                    " do not match predictions of shape " + shape_to_string(y_pred.shape()));
  }
  return y_true;
}

}  // namespace

Loss::Loss(LossConfig config) : config_(config) {
  if (config_.label_smoothing < 0.0 || config_.label_smoothing > 1.0) {
    throw_value_error(kind_op_name(config_.kind),
                      "label_smoothing must be in [0, 1], got " +
                          std::to_string(config_.label_smoothing));
  }
}

Loss::Loss(std::string name, PerExampleFn per_example)
    : custom_name_(std::move(name)), custom_(std::move(per_example)) {}

const char* Loss::name() const {
  if (custom_) return custom_name_.c_str();
  switch (config_.kind) {
    case LossKind::kSparseCategoricalCrossentropy: return "sparse_categorical_crossentropy";
    case LossKind::kCategoricalCrossentropy: return "categorical_crossentropy";
    case LossKind::kBinaryCrossentropy: return "binary_crossentropy";
    case LossKind::kMeanSquaredError: return "mean_squared_error";
  }
  return "loss";
}

Tensor Loss::per_example(const Tensor& y_true, const Tensor& y_pred_in) const {
  const char* op = custom_ ? custom_name_.c_str() : kind_op_name(config_.kind);
  if (!y_true.defined() || !y_pred_in.defined()) {
    throw_error(ErrorCode::kInvalidArgument, op, "y_true and y_pred must both be given");
  }
  if (custom_) return custom_(y_true, y_pred_in);
  if (!is_floating(y_pred_in.dtype())) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string("predictions must be floating point, got ") +
                    dtype_name(y_pred_in.dtype()));
  }
  const Tensor y_pred = y_pred_in.dtype() == DType::kFloat32 ? y_pred_in
                                                             : cast(y_pred_in, DType::kFloat32);
  switch (config_.kind) {
    case LossKind::kSparseCategoricalCrossentropy: {
      if (y_pred.ndim() < 1) {
        throw_error(ErrorCode::kInvalidArgument, op, "predictions need a class axis, got a scalar");
      }
      const Tensor labels = sparse_labels(y_true, y_pred, op);
      if (config_.from_logits) return sparse_softmax_cross_entropy(labels, y_pred);
      const int64_t classes = y_pred.dim(y_pred.ndim() - 1);
      return categorical_from_probabilities(one_hot(labels, classes, DType::kFloat32), y_pred);
    }
    case LossKind::kCategoricalCrossentropy: {
      const double classes = double(y_pred.dim(y_pred.ndim() - 1));
      const Tensor y = smooth(cast(same_shape_labels(y_true, y_pred, op), DType::kFloat32), config_.label_smoothing, classes);
      if (config_.from_logits) return softmax_cross_entropy(y, y_pred);
      return categorical_from_probabilities(y, y_pred);
    }
    case LossKind::kBinaryCrossentropy: {
      const Tensor z = smooth(cast(same_shape_labels(y_true, y_pred, op), DType::kFloat32), config_.label_smoothing, 2.0);
      Tensor elementwise;
      if (config_.from_logits) {
        // max(x, 0) - x z + log(1 + exp(-|x|)): stable for large |x|.
        const Tensor& x = y_pred;
        const Tensor relu_x = unary(UnaryOp::kRelu, x);
        const Tensor softplus_neg_abs = unary(
            UnaryOp::kLog, add(unary(UnaryOp::kExp, neg(unary(UnaryOp::kAbs, x))), scalar(1.0, x)));
        elementwise = add(sub(relu_x, mul(x, z)), softplus_neg_abs);
      } else {
        const Tensor p = clip_probabilities(y_pred);
        const Tensor one = scalar(1.0, p);
        elementwise = neg(add(mul(z, unary(UnaryOp::kLog, p)),
                              mul(sub(one, z), unary(UnaryOp::kLog, sub(one, p)))));
      }
      return reduce(ReduceOp::kMean, elementwise, {-1}, false);
    }
    case LossKind::kMeanSquaredError:
      return mean_squared_error(y_true, y_pred);
  }
  throw_error(ErrorCode::kInternal, op, "unknown loss kind");
}

Tensor Loss::operator()(const Tensor& y_true, const Tensor& y_pred) const {
  return reduce(ReduceOp::kMean, per_example(y_true, y_pred), {}, false);
}

Tensor Loss::weighted(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) const {
  const Tensor values = per_example(y_true, y_pred);
  const char* op = custom_ ? custom_name_.c_str() : kind_op_name(config_.kind);
  if (sample_weight.ndim() != 1 || (values.ndim() > 0 && sample_weight.dim(0) != values.dim(0))) {
    throw_error(ErrorCode::kInvalidArgument, op,
                "sample_weight must have one value per example, shape (" +
                    std::to_string(values.ndim() > 0 ? values.dim(0) : 1) + ",); got " +
                    shape_to_string(sample_weight.shape()));
  }
  Tensor w = cast(sample_weight, values.dtype());
  if (values.ndim() > 1) {
    Shape per_row(size_t(values.ndim()), 1);
    per_row[0] = w.dim(0);
    w = reshape(w, per_row);
  }
  return reduce(ReduceOp::kMean, mul(values, w), {}, false);
}

}  // namespace gpuaccel::nn
