// The C++ side of a Python keras.layers.Layer subclass: weights added by its Python build()
// (add_weight), and a forward pass that replays the ops its Python call() ran, recorded once per
// input signature (shapes, dtypes, `training`; nn/op_trace.h). So a model made of Python layers
// trains in the same C++ step as built-in ones, and Python runs only when a new signature is
// traced. A call() the recorder cannot replay runs in Python on every call instead (the eager
// fallback), and the layer reports why once through `warn`.
//
// The Python call returns the layer's output followed by the losses call() added (add_loss);
// added_losses() holds the last call's, which the training step adds to the compiled loss.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "nn/layer.h"
#include "nn/op_trace.h"

namespace gpuaccel::nn {

class TracedLayer : public Layer {
 public:
  // Runs the Python call() on these inputs: the output, then any losses it added.
  using PythonCall = std::function<std::vector<Tensor>(const std::vector<Tensor>&, bool training)>;
  // Told once, the first time a signature cannot be traced, with the reason.
  using Warn = std::function<void(const std::string& reason)>;

  TracedLayer(std::string name, std::string type, PythonCall python_call, Warn warn);

  const char* type() const override { return type_.c_str(); }
  // Output shapes come from the Python layer (its compute_output_shape or a call on zeros).
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

  // A weight created by the Python add_weight with its initial value.
  void add_weight_value(const std::string& name, const Tensor& value, bool trainable);
  // The losses the last call added (add_loss), in the order call() added them.
  std::vector<Tensor> added_losses() const;
  void clear_added_losses();

  // Introspection for tests and the step's warnings: how many times Python's call() ran, and
  // the reason the last untraceable signature gave ("" when every call so far was traced).
  int64_t python_calls() const { return python_calls_; }
  std::string eager_reason() const;
  size_t traced_signatures() const;

 private:
  struct Signature {
    std::vector<Shape> shapes;
    std::vector<int> dtypes;
    bool training;
    bool operator<(const Signature& other) const {
      return std::tie(shapes, dtypes, training) < std::tie(other.shapes, other.dtypes, other.training);
    }
  };
  struct Entry {
    std::shared_ptr<OpTrace> trace;  // null: this signature runs eagerly
    std::string eager_reason;
  };
  std::vector<Tensor> run_python(const std::vector<Tensor>& inputs, bool training);

  std::string type_;
  PythonCall python_call_;
  Warn warn_;
  mutable std::mutex mutex_;
  std::map<Signature, Entry> traces_;
  std::vector<Tensor> added_losses_;
  bool warned_ = false;
  std::atomic<int64_t> python_calls_{0};
};

}  // namespace gpuaccel::nn
