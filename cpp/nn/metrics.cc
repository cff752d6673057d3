// Metric formulas over the op frontends, with no autograd (metrics never need gradients).
#include "nn/metrics.h"

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/host_read.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {

namespace {

// Keras's squeeze_or_expand_to_same_rank for metric inputs: a trailing unit axis is dropped
// from whichever side has one more dimension.
void match_ranks(Tensor& y_true, Tensor& y_pred) {
  if (y_true.ndim() == y_pred.ndim() + 1 && y_true.dim(y_true.ndim() - 1) == 1) {
    y_true = squeeze(y_true, {-1});
  } else if (y_pred.ndim() == y_true.ndim() + 1 && y_pred.dim(y_pred.ndim() - 1) == 1) {
    y_pred = squeeze(y_pred, {-1});
  }
}

Tensor as_float(const Tensor& t) { return t.dtype() == DType::kFloat32 ? t : cast(t, DType::kFloat32); }

}  // namespace

double scalar_value(const Tensor& t) { return read_scalars({t}).at(0); }

void accumulate(Tensor& total, const Tensor& value) {
  GradModeGuard no_grad(false);
  if (!total.defined()) total = zeros({}, DType::kFloat32, value.device());
  Tensor addend = reshape(value, {});
  if (addend.device().type != total.device().type || addend.device().index != total.device().index) {
    addend = to_device(addend, total.device());
  }
  copy_into(add(total, as_float(addend)), total);
}

void zero_in_place(const Tensor& total) {
  if (!total.defined()) return;
  GradModeGuard no_grad(false);
  copy_into(scalar_like(0.0, total), total);
}

Metric::Metric(std::string name, MetricKind kind, double threshold)
    : name_(std::move(name)), kind_(kind), threshold_(threshold) {}

Tensor Metric::values(const Tensor& y_true_in, const Tensor& y_pred_in) const {
  GradModeGuard no_grad(false);
  Tensor y_true = y_true_in, y_pred = y_pred_in;
  switch (kind_) {
    case MetricKind::kSparseCategoricalAccuracy: {
      // Labels (N,) or (N, 1) against predictions (N, C).
      if (y_true.ndim() == y_pred.ndim() && y_true.dim(y_true.ndim() - 1) == 1) {
        y_true = squeeze(y_true, {-1});
      }
      if (y_true.ndim() != y_pred.ndim() - 1) {
        throw_error(ErrorCode::kInvalidArgument, "sparse_categorical_accuracy",
                    "labels of shape " + shape_to_string(y_true_in.shape()) +
                        " do not fit predictions of shape " + shape_to_string(y_pred.shape()) +
                        " (expected class indices with the predictions' shape minus the last axis)");
      }
      const Tensor predicted = arg_reduce(ReduceOp::kArgMax, y_pred, -1, false);
      return as_float(binary(BinaryOp::kEqual, cast(y_true, DType::kInt64), predicted));
    }
    case MetricKind::kCategoricalAccuracy: {
      const Tensor predicted = arg_reduce(ReduceOp::kArgMax, y_pred, -1, false);
      const Tensor expected = arg_reduce(ReduceOp::kArgMax, y_true, -1, false);
      return as_float(binary(BinaryOp::kEqual, expected, predicted));
    }
    case MetricKind::kBinaryAccuracy: {
      match_ranks(y_true, y_pred);
      const Tensor above = as_float(binary(BinaryOp::kGreater, as_float(y_pred),
                                           scalar_like(threshold_, as_float(y_pred))));
      const Tensor equal = as_float(binary(BinaryOp::kEqual, as_float(y_true), above));
      return y_pred.ndim() > 1 ? reduce(ReduceOp::kMean, equal, {-1}, false) : equal;
    }
    case MetricKind::kAccuracy: {
      match_ranks(y_true, y_pred);
      const Tensor equal = as_float(binary(BinaryOp::kEqual, as_float(y_true), as_float(y_pred)));
      return y_pred.ndim() > 1 ? reduce(ReduceOp::kMean, equal, {-1}, false) : equal;
    }
    case MetricKind::kMeanSquaredError:
    case MetricKind::kMeanAbsoluteError: {
      match_ranks(y_true, y_pred);
      const Tensor diff = sub(as_float(y_pred), as_float(y_true));
      const Tensor per = kind_ == MetricKind::kMeanSquaredError ? mul(diff, diff)
                                                                : unary(UnaryOp::kAbs, diff);
      return per.ndim() > 1 ? reduce(ReduceOp::kMean, per, {-1}, false) : per;
    }
  }
  throw_error(ErrorCode::kInternal, name_, "unknown metric kind");
}

void Metric::update(const Tensor& y_true, const Tensor& y_pred) {
  GradModeGuard no_grad(false);
  const Tensor per_example = values(y_true, y_pred);
  accumulate(total_, reduce_sum(per_example, {}, false));
  count_ += double(per_example.numel());
}

double Metric::result() const {
  return count_ > 0 && total_.defined() ? running_mean(scalar_value(total_), count_) : 0.0;
}

void Metric::reset() {
  zero_in_place(total_);
  count_ = 0.0;
}

}  // namespace gpuaccel::nn
