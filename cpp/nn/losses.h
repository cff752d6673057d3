// Keras's losses as C++ objects the training loop calls once per batch: each turns (y_true,
// y_pred) into per-example losses in float32 (Keras computes losses in float32 under mixed
// precision) and reduces them with Keras's default 'sum_over_batch_size' (the mean over the
// per-example values).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "tensor/tensor.h"

namespace gpuaccel::nn {

enum class LossKind {
  kSparseCategoricalCrossentropy,  // integer labels (N,) or (N, 1), predictions (N, C)
  kCategoricalCrossentropy,        // one-hot / probability labels (N, C)
  kBinaryCrossentropy,             // labels in [0, 1], same shape as predictions
  kMeanSquaredError,
};

struct LossConfig {
  LossKind kind = LossKind::kMeanSquaredError;
  bool from_logits = false;  // predictions are logits (crossentropies only)
  double label_smoothing = 0.0;  // categorical and binary crossentropy (Keras's rule)
};

class Loss {
 public:
  // A Python loss (a function in compile, or a keras.losses.Loss subclass's call): its values
  // for (y_true, y_pred), traced once per signature (nn/traced_function.h). Reduced like the
  // built-in ones: the mean over every value (Keras's sum_over_batch_size).
  using PerExampleFn = std::function<Tensor(const Tensor& y_true, const Tensor& y_pred)>;

  explicit Loss(LossConfig config);
  Loss(std::string name, PerExampleFn per_example);
  const LossConfig& config() const { return config_; }
  // Keras's snake_case name ("sparse_categorical_crossentropy", ...), or the Python loss's.
  const char* name() const;
  // Per-example losses, float32, shape (N,) for (N, ...) predictions.
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const;
  // The mean of per_example: a float32 scalar, differentiable with respect to y_pred.
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred) const;
  // Keras's sample_weight: per_example times `sample_weight` (N,), broadcast over the values'
  // other axes, then the mean over every value (sum_over_batch_size divides by the number of
  // values, not by the sum of the weights).
  Tensor weighted(const Tensor& y_true, const Tensor& y_pred, const Tensor& sample_weight) const;

 private:
  LossConfig config_;
  std::string custom_name_;
  PerExampleFn custom_;  // set for a Python loss
};

using LossPtr = std::shared_ptr<Loss>;

}  // namespace gpuaccel::nn
