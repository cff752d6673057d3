#include "nn/traced_layer.h"

#include <algorithm>

#include "core/errors.h"
#include "ops/autograd.h"

namespace gpuaccel::nn {

TracedLayer::TracedLayer(std::string name, std::string type, PythonCall python_call, Warn warn)
    : Layer(std::move(name)),
      type_(std::move(type)),
      python_call_(std::move(python_call)),
      warn_(std::move(warn)) {}

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

std::string TracedLayer::eager_reason() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [signature, entry] : traces_) {
    if (!entry.trace) return entry.eager_reason;
  }
  return "";
}

size_t TracedLayer::traced_signatures() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t count = 0;
  for (const auto& [signature, entry] : traces_) count += entry.trace ? 1 : 0;
  return count;
}

std::vector<Tensor> TracedLayer::run_python(const std::vector<Tensor>& inputs, bool training) {
  ++python_calls_;
  std::vector<Tensor> results = python_call_(inputs, training);
  if (results.empty() || !results[0].defined()) fail("call() must return a tensor");
  return results;
}

Tensor TracedLayer::call(const std::vector<Tensor>& raw_inputs, bool training) {
  expect_built();
  std::vector<Tensor> inputs;
  inputs.reserve(raw_inputs.size());
  for (const Tensor& x : raw_inputs) inputs.push_back(cast_input(x));
  Signature signature{{}, {}, training};
  for (const Tensor& x : inputs) {
    signature.shapes.push_back(x.shape());
    signature.dtypes.push_back(int(x.dtype()));
  }
  std::shared_ptr<OpTrace> trace;
  bool known = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = traces_.find(signature);
    if (found != traces_.end()) {
      known = true;
      trace = found->second.trace;
    }
  }
  std::vector<Tensor> results;
  if (trace) {
    results = trace->replay(inputs);
  } else if (known) {
    results = run_python(inputs, training);  // the eager fallback
  } else {
    OpTraceRecorder recorder(inputs);
    results = run_python(inputs, training);
    trace = recorder.finish(results);
    std::string reason = trace ? "" : recorder.broken_reason();
    bool warn = false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      traces_[signature] = Entry{trace, reason};
      if (!trace && !warned_) warn = warned_ = true;
    }
    if (warn && warn_) warn_(reason);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  added_losses_.assign(results.begin() + 1, results.end());
  return results[0];
}

}  // namespace gpuaccel::nn
