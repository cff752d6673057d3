// The C++ side of a Python keras.layers.Layer subclass: weights added by its Python build()
// (add_weight), and a forward pass that replays the ops its Python call() ran, recorded once per
// input signature (shapes, dtypes, `training`; nn/traced_function.h). So a model made of
// Python layers trains in the same C++ step as built-in ones, and Python runs only when a new
// signature is traced. A call() the recorder cannot replay runs in Python on every call
// instead (the eager fallback), which the TracedFunction reports once.
//
// The Python call returns the layer's output followed by the losses call() added (add_loss);
// added_losses() holds the last call's, which the training step adds to the compiled loss.
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "nn/layer.h"
#include "nn/traced_function.h"

namespace gpuaccel::nn {

class TracedLayer : public Layer {
 public:
  // `call` runs the Python call(): the output, then any losses it added.
  TracedLayer(std::string name, std::string type, TracedFunctionPtr call);

  const char* type() const override { return type_.c_str(); }
  // Output shapes come from the Python layer (its compute_output_shape or a call on zeros).
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

  // A weight created by the Python add_weight with its initial value.
  void add_weight_value(const std::string& name, const Tensor& value, bool trainable);
  // The losses the last call added (add_loss), in the order call() added them.
  std::vector<Tensor> added_losses() const;
  void clear_added_losses();
  const TracedFunctionPtr& traced_call() const { return call_; }

 private:
  std::string type_;
  TracedFunctionPtr call_;
  mutable std::mutex mutex_;
  std::vector<Tensor> added_losses_;
};

}  // namespace gpuaccel::nn
