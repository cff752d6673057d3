// Keras's metrics as running accumulators the training loop updates once per batch and reads
// only when something asks (a progress bar refresh, an epoch end, a callback reading logs).
// Each is Keras's MeanMetricWrapper: the mean, over every example seen since reset(), of a
// per-example value (1/0 for accuracies). The running total is a float32 scalar on the batch's
// device, added to by ops (no read-back per batch; float32 like Keras's `total` variable); the
// example count is known on the host without looking at the data, so it stays there in double.
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
  // Adds a batch: per-example values are computed on the batch's device and their sum is added
  // to the running total there; nothing is read back.
  void update(const Tensor& y_true, const Tensor& y_pred);
  // The running mean: reads the total (one device-to-host copy; none and 0 before any update).
  double result() const;
  void reset();
  // The running total (a float32 scalar on the device of the first update, or undefined before
  // it) and the example count: what a caller reading several accumulators at
  // once (Trainer::results) packs into one copy.
  const Tensor& total() const { return total_; }
  double count() const { return count_; }
  // Sets the example count: a training step replayed from a graph counts its batch this way
  // (the replay adds to the total on the device but runs no host code).
  void set_count(double count) { count_ = count; }
  // Per-example values (float32) for a batch, without accumulating.
  Tensor values(const Tensor& y_true, const Tensor& y_pred) const;

 private:
  std::string name_;
  MetricKind kind_;
  double threshold_;
  Tensor total_;
  double count_ = 0.0;
};

// Keras's Mean: total / count, 0 before anything was counted.
inline double running_mean(double total, double count) { return count > 0 ? total / count : 0.0; }

// Adds the scalar `value` into the float32 scalar `total` in place (created as a zero on the
// value's device when undefined), with ops only: no read-back, and `total` keeps its storage,
// so a captured step that accumulates into it stays valid when replayed.
void accumulate(Tensor& total, const Tensor& value);
// Sets an accumulator back to 0 in place (nothing when undefined): a reset between epochs keeps
// the storage a captured step writes to.
void zero_in_place(const Tensor& total);

using MetricPtr = std::shared_ptr<Metric>;

// A scalar tensor's value on the host (one device-to-host copy, ops/host_read.h).
double scalar_value(const Tensor& t);

}  // namespace gpuaccel::nn
