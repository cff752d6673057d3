// Keras's losses as C++ objects the training loop calls once per batch: each turns (y_true,
// y_pred) into per-example losses in float32 (Keras computes losses in float32 under mixed
// precision) and reduces them with Keras's default 'sum_over_batch_size' (the mean over the
// per-example values).
#pragma once

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
  explicit Loss(LossConfig config);
  const LossConfig& config() const { return config_; }
  // Keras's snake_case name ("sparse_categorical_crossentropy", ...).
  const char* name() const;
  // Per-example losses, float32, shape (N,) for (N, ...) predictions.
  Tensor per_example(const Tensor& y_true, const Tensor& y_pred) const;
  // The mean of per_example: a float32 scalar, differentiable with respect to y_pred.
  Tensor operator()(const Tensor& y_true, const Tensor& y_pred) const;

 private:
  LossConfig config_;
};

using LossPtr = std::shared_ptr<Loss>;

}  // namespace gpuaccel::nn
