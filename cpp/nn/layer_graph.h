// The layer graph a Keras model runs: model inputs, then layer calls in topological order, each
// reading earlier values by id. Sequential models are the chain special case; the functional
// API (keras.Model(inputs, outputs)) records arbitrary DAGs, shared layers included (a layer
// called twice appears as two nodes over one set of weights).
#pragma once

#include <vector>

#include "nn/layer.h"

namespace gpuaccel::nn {

class LayerGraph {
 public:
  // Values 0 .. num_inputs-1 are the model inputs; node i produces value num_inputs + i.
  explicit LayerGraph(int num_inputs);

  int num_inputs() const { return num_inputs_; }
  // Appends `layer` called on the values `input_ids` (all already defined); returns the id of
  // its output. InvalidArgumentError for a forward reference or an empty input list.
  int add_node(LayerPtr layer, const std::vector<int>& input_ids);
  void set_outputs(const std::vector<int>& output_ids);
  const std::vector<int>& outputs() const { return outputs_; }

  // Runs every node (built layers only); returns the output values.
  std::vector<Tensor> forward(const std::vector<Tensor>& inputs, bool training) const;

  // Each distinct layer once, in first-call order; and their trainable weights in that order
  // (the order the optimizer sees and Keras's model.trainable_weights).
  std::vector<LayerPtr> layers() const;
  std::vector<Tensor> trainable_weights() const;
  // The losses the layers' last calls added (Keras's model.losses: add_loss in a Python layer's
  // call, nn/traced_layer.h); the training step adds their sum to the compiled loss.
  std::vector<Tensor> added_losses() const;

 private:
  struct Node {
    LayerPtr layer;
    std::vector<int> inputs;
  };
  int num_inputs_;
  std::vector<Node> nodes_;
  std::vector<int> outputs_;
};

using LayerGraphPtr = std::shared_ptr<LayerGraph>;

}  // namespace gpuaccel::nn
