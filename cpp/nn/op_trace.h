// A Python layer's call() recorded once per input signature and replayed in C++ (as tf.function
// traces): while a recorder is active on this thread, every op the Python code runs through the
// bindings appends a closure that reruns it on new inputs. Replaying the closures in order is the
// layer's forward pass without Python, so the training step keeps the GIL released.
//
// Values an op reads that the trace did not produce (the layer's weights, Python constants) are
// captured by reference: weights are updated in place, so a replay reads their current values.
// What cannot be replayed marks the recording broken with a reason, and the layer runs its
// Python call() eagerly instead (nn/traced_layer.h): a host read of a traced value (Python
// control flow on tensor values), a random draw or an in-place write inside call(), or an input
// derived from traced values by something the recorder did not see.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tensor/tensor.h"

namespace gpuaccel::nn {

// Reruns one recorded op on its (replayed) inputs.
using ReplayFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

class OpTrace {
 public:
  // The outputs for these inputs (as many as were traced), by running the recorded ops.
  std::vector<Tensor> replay(const std::vector<Tensor>& inputs) const;
  size_t op_count() const { return ops_.size(); }

 private:
  friend class OpTraceRecorder;
  struct Op {
    ReplayFn fn;
    std::vector<int> inputs;   // value ids; -1 for an absent optional input
    std::vector<int> outputs;  // value ids
  };
  int num_inputs_ = 0;
  std::vector<std::pair<int, Tensor>> constants_;  // value id, captured tensor
  std::vector<Op> ops_;
  std::vector<int> outputs_;
  int num_values_ = 0;
};

// Records the ops run on this thread between begin() and finish(). Recorders nest (a traced
// layer calling another traced layer): only the innermost records; a Pause stops recording
// while a recorded op runs code that would record on its own (a sublayer's call()).
class OpTraceRecorder {
 public:
  // Starts recording with `inputs` as the trace's inputs.
  explicit OpTraceRecorder(const std::vector<Tensor>& inputs);
  ~OpTraceRecorder();
  OpTraceRecorder(const OpTraceRecorder&) = delete;
  OpTraceRecorder& operator=(const OpTraceRecorder&) = delete;

  // Stops recording; the trace computing `outputs`, or null with broken_reason() set.
  std::shared_ptr<OpTrace> finish(const std::vector<Tensor>& outputs);
  const std::string& broken_reason() const { return broken_; }

  // The hooks the op bindings call; no-ops when nothing is recording on this thread.
  static bool active();
  static void record(const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
                     ReplayFn fn);
  // A host read of `t` (numpy(), item(), bool()): breaks the trace when t is a traced value.
  static void note_host_read(const Tensor& t);
  // Something a replay cannot repeat ran (`what` says what): breaks the trace.
  static void note_unreplayable(const std::string& what);

  class Pause {
   public:
    Pause();
    ~Pause();
    Pause(const Pause&) = delete;
    Pause& operator=(const Pause&) = delete;

   private:
    OpTraceRecorder* saved_;
  };

 private:
  int value_id(const Tensor& t);
  void break_with(const std::string& reason);

  std::shared_ptr<OpTrace> trace_;
  std::unordered_map<const TensorImpl*, int> ids_;
  // Keeps every traced value alive until finish(), so a freed impl's address is never reused
  // for another value while ids_ maps it.
  std::vector<Tensor> seen_;
  std::string broken_;
  OpTraceRecorder* previous_;
};

}  // namespace gpuaccel::nn
