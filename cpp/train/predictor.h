// Keras's predict_step in C++: the forward pass (inference behaviour, no gradients) of a layer
// graph over one batch, with host batches of a GPU model uploaded on the copy stream through
// the same BatchPlacement as fit and evaluate (train/batch_placement.h), so batch i+1's copy
// overlaps step i in predict too. A model needs no compile() to predict, so this is not part
// of the Trainer, which needs a loss.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/layer_graph.h"
#include "train/batch_placement.h"

namespace gpuaccel::train {

class Predictor {
 public:
  explicit Predictor(nn::LayerGraphPtr graph);

  // The graph's outputs for the batch `x`, on the weights' device. They never alias an upload
  // buffer (an output that passes an input through is copied), so they stay valid after later
  // steps.
  std::vector<Tensor> predict_step(const std::vector<Tensor>& x);

  const nn::LayerGraphPtr& graph() const { return graph_; }
  BatchPlacement& batches() { return batches_; }
  const BatchPlacement& batches() const { return batches_; }

 private:
  nn::LayerGraphPtr graph_;
  BatchPlacement batches_;
};

}  // namespace gpuaccel::train
