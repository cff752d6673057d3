// Running the recorded layer calls in order; values that no later node reads are dropped as
// soon as possible so activations do not outlive their last use (autograd keeps what the
// backward pass needs).
#include "nn/layer_graph.h"

#include "nn/traced_layer.h"

#include <algorithm>
#include <unordered_set>

#include "core/errors.h"

namespace gpuaccel::nn {

LayerGraph::LayerGraph(int num_inputs) : num_inputs_(num_inputs) {
  if (num_inputs < 1) {
    throw_error(ErrorCode::kInvalidArgument, "Model",
                "a model needs at least one input, got " + std::to_string(num_inputs));
  }
}

int LayerGraph::add_node(LayerPtr layer, const std::vector<int>& input_ids) {
  const int next_id = num_inputs_ + int(nodes_.size());
  if (!layer) throw_error(ErrorCode::kInvalidArgument, "Model", "a graph node needs a layer");
  if (input_ids.empty()) {
    throw_error(ErrorCode::kInvalidArgument, "Model",
                "layer '" + layer->name() + "' was added to the graph without inputs");
  }
  for (int id : input_ids) {
    if (id < 0 || id >= next_id) {
      throw_error(ErrorCode::kInvalidArgument, "Model",
                  "layer '" + layer->name() + "' reads value " + std::to_string(id) +
                      ", which is not defined before it (values 0.." + std::to_string(next_id - 1) +
                      " exist)");
    }
  }
  nodes_.push_back(Node{std::move(layer), input_ids});
  return next_id;
}

void LayerGraph::set_outputs(const std::vector<int>& output_ids) {
  const int count = num_inputs_ + int(nodes_.size());
  if (output_ids.empty()) throw_error(ErrorCode::kInvalidArgument, "Model", "a model needs outputs");
  for (int id : output_ids) {
    if (id < 0 || id >= count) {
      throw_error(ErrorCode::kInvalidArgument, "Model",
                  "output value " + std::to_string(id) + " is not defined (values 0.." +
                      std::to_string(count - 1) + " exist)");
    }
  }
  outputs_ = output_ids;
}

std::vector<Tensor> LayerGraph::forward(const std::vector<Tensor>& inputs, bool training) const {
  if (int(inputs.size()) != num_inputs_) {
    throw_error(ErrorCode::kInvalidArgument, "Model",
                "the model expects " + std::to_string(num_inputs_) + " input(s), got " +
                    std::to_string(inputs.size()));
  }
  if (outputs_.empty()) throw_error(ErrorCode::kFailedPrecondition, "Model", "the graph has no outputs");
  // Last reader of each value, so intermediate activations are released after it runs.
  const int count = num_inputs_ + int(nodes_.size());
  std::vector<int> last_use(count, -1);
  for (int i = 0; i < int(nodes_.size()); ++i) {
    for (int id : nodes_[i].inputs) last_use[id] = i;
  }
  for (int id : outputs_) last_use[id] = int(nodes_.size());

  std::vector<Tensor> values(count);
  std::copy(inputs.begin(), inputs.end(), values.begin());
  std::vector<Tensor> args;
  for (int i = 0; i < int(nodes_.size()); ++i) {
    const Node& node = nodes_[i];
    if (!node.layer->built()) {
      throw_error(ErrorCode::kFailedPrecondition, "Model",
                  "layer '" + node.layer->name() + "' is not built");
    }
    args.clear();
    for (int id : node.inputs) args.push_back(values[id]);
    values[num_inputs_ + i] = node.layer->traced_call(args, training);
    for (int id : node.inputs) {
      if (last_use[id] == i) values[id] = Tensor();
    }
  }
  std::vector<Tensor> out;
  out.reserve(outputs_.size());
  for (int id : outputs_) out.push_back(values[id]);
  return out;
}

std::vector<LayerPtr> LayerGraph::layers() const {
  std::vector<LayerPtr> out;
  std::unordered_set<const Layer*> seen;
  for (const Node& node : nodes_) {
    if (seen.insert(node.layer.get()).second) out.push_back(node.layer);
  }
  return out;
}

std::vector<Tensor> LayerGraph::trainable_weights() const {
  std::vector<Tensor> out;
  for (const LayerPtr& layer : layers()) {
    for (const Tensor& w : layer->trainable_weights()) out.push_back(w);
  }
  return out;
}

}  // namespace gpuaccel::nn

namespace gpuaccel::nn {

std::vector<Tensor> LayerGraph::added_losses() const {
  std::vector<Tensor> out;
  for (const LayerPtr& layer : layers()) {
    if (const auto* traced = dynamic_cast<const TracedLayer*>(layer.get())) {
      for (Tensor& loss : traced->added_losses()) out.push_back(std::move(loss));
    }
  }
  return out;
}

}  // namespace gpuaccel::nn
