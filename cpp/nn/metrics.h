// Keras's metrics as running accumulators the training loop updates once per batch and reads
// at batch/epoch boundaries. Each is Keras's MeanMetricWrapper: the mean, over every example
// seen since reset(), of a per-example value (1/0 for accuracies). The running sums live on the
// host in double, so a million examples do not lose counts to float32 rounding.
#pragma once

#include <memory>
#include <string>

#include "tensor/tensor.h"

namespace gpuaccel::nn {

enum class MetricKind {
  kAccuracy,                   // y_pred == y_true exactly (Keras's Accuracy)
  kSparseCategoricalAccuracy,  // argmax(y_pred) == y_true (class index)
  kCategoricalAccuracy,        // argmax(y_pred) == argmax(y_true)
  kBinaryAccuracy,             // (y_pred > threshold) == y_true
  kMeanSquaredError,
  kMeanAbsoluteError,
};

class Metric {
 public:
  // `name` is the key in logs and History ("accuracy" when compiled from the string).
  Metric(std::string name, MetricKind kind, double threshold = 0.5);
  const std::string& name() const { return name_; }
  MetricKind kind() const { return kind_; }
  // Adds a batch: per-example values are computed on the batch's device, summed there, and
  // the sum is read back.
  void update(const Tensor& y_true, const Tensor& y_pred);
  double result() const { return count_ > 0 ? total_ / count_ : 0.0; }
  void reset() { total_ = 0.0; count_ = 0.0; }
  // Per-example values (float32) for a batch, without accumulating.
  Tensor values(const Tensor& y_true, const Tensor& y_pred) const;

 private:
  std::string name_;
  MetricKind kind_;
  double threshold_;
  double total_ = 0.0;
  double count_ = 0.0;
};

using MetricPtr = std::shared_ptr<Metric>;

// A float scalar tensor's value on the host (copies from a device when needed).
double scalar_value(const Tensor& t);

}  // namespace gpuaccel::nn
