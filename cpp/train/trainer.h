// One Keras training/evaluation/prediction step for a whole batch, in C++: forward through the
// layer graph, the loss, the backward pass, the optimizer's fused update, and the running loss
// and metrics. The Python fit loop calls these once per batch with the GIL released and reads
// results() only where callbacks want logs.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/layer_graph.h"
#include "nn/losses.h"
#include "nn/metrics.h"
#include "optim/optimizer.h"

namespace gpuaccel::train {

class Trainer {
 public:
  // `optimizer` may be null for a model compiled only to evaluate (then train_step throws).
  Trainer(nn::LayerGraphPtr graph, nn::LossPtr loss, std::shared_ptr<optim::Optimizer> optimizer,
          std::vector<nn::MetricPtr> metrics);

  // Forward (training behaviour), loss, gradients of the trainable weights, optimizer update;
  // then the loss tracker and metrics absorb the batch. Returns the batch's loss.
  double train_step(const std::vector<Tensor>& x, const Tensor& y);
  // Forward (inference behaviour), loss and metrics; no update. Returns the batch's loss.
  double test_step(const std::vector<Tensor>& x, const Tensor& y);
  // Forward (inference behaviour) without gradients.
  std::vector<Tensor> predict_step(const std::vector<Tensor>& x) const;

  void reset_metrics();
  // ("loss", running mean weighted by batch size), then each metric's running result.
  std::vector<std::pair<std::string, double>> results() const;

  const nn::LayerGraphPtr& graph() const { return graph_; }
  const std::shared_ptr<optim::Optimizer>& optimizer() const { return optimizer_; }

 private:
  // Inputs and labels moved to the device the weights live on: the first of `params` (the
  // trainable weights, gathered once per step); with no trainable weight they stay put.
  static std::vector<Tensor> place(const std::vector<Tensor>& x, const std::vector<Tensor>& params);
  static Tensor place(const Tensor& t, const std::vector<Tensor>& params);
  void absorb(double loss, int64_t batch, const Tensor& y, const Tensor& y_pred);

  nn::LayerGraphPtr graph_;
  nn::LossPtr loss_;
  std::shared_ptr<optim::Optimizer> optimizer_;
  std::vector<nn::MetricPtr> metrics_;
  double loss_total_ = 0.0;
  double loss_count_ = 0.0;
};

}  // namespace gpuaccel::train
