#include "nn/traced_layer.h"

#include <algorithm>

#include "core/errors.h"

namespace gpuaccel::nn {

TracedLayer::TracedLayer(std::string name, std::string type, TracedFunctionPtr call)
    : Layer(std::move(name)), type_(std::move(type)), call_(std::move(call)) {}

Shape TracedLayer::output_shape(const ShapeList& input_shapes) const {
  (void)input_shapes;
  fail("the output shape of a Python layer is computed by its Python compute_output_shape()");
}

void TracedLayer::add_weight_value(const std::string& name, const Tensor& value, bool trainable) {
  value.impl()->requires_grad = trainable && is_floating(value.dtype());
  // Keras's order: trainable weights first, then non-trainable, each in creation order.
  std::vector<Weight>& all = weights();
  auto position = all.end();
  if (trainable) {
    position = std::find_if(all.begin(), all.end(), [](const Weight& w) { return !w.trainable; });
  }
  all.insert(position, Weight{name, value, trainable});
}

std::vector<Tensor> TracedLayer::added_losses() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return added_losses_;
}

void TracedLayer::clear_added_losses() {
  std::lock_guard<std::mutex> lock(mutex_);
  added_losses_.clear();
}

Tensor TracedLayer::call(const std::vector<Tensor>& raw_inputs, bool training) {
  expect_built();
  std::vector<Tensor> inputs;
  inputs.reserve(raw_inputs.size());
  for (const Tensor& x : raw_inputs) inputs.push_back(cast_input(x));
  const std::vector<Tensor> results = (*call_)(inputs, training);
  std::lock_guard<std::mutex> lock(mutex_);
  added_losses_.assign(results.begin() + 1, results.end());
  return results[0];
}

}  // namespace gpuaccel::nn
