// Reverse-mode automatic differentiation over a graph recorded as ops run (PyTorch's model,
// which TF's GradientTape also maps onto). An op records a Node only when gradients are wanted:
// grad mode is on and some input requires grad, already has a grad_fn, or is watched by an
// active GradientTape. Nodes hold their inputs strongly and their outputs weakly, so the graph
// lives exactly as long as the tensors that can still reach it.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// What the engine tells a node's backward beyond the gradients, so that an activation fused
// into one op can have its backward done by the next op's backward pass. A node whose op
// fused an activation into its output (Conv2D with activation='relu': Node::output_activation)
// applies the activation's backward to the gradient it receives; the node consuming that
// output (max pooling) may apply it instead, in the pass that writes the gradient, but only
// when that gradient reaches the producer and nothing else: otherwise it would be read as the
// gradient of the activated output, which it no longer is.
struct BackwardContext {
  // Per input: the activation the gradient returned for the input may carry (its producer's
  // output_activation), or kNone where it may not (the input is a root or a source of this
  // sweep, feeds another edge, or its producer fused no activation).
  std::vector<PostActivation> foldable_input_activation;
  // Per input, set by the backward when it applied foldable_input_activation[i].
  std::vector<bool> input_activation_applied;
  // Per output: its gradient arrives with this node's output_activation already applied.
  std::vector<bool> output_activation_applied;
};

class Node {
 public:
  using BackwardFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& grad_outputs)>;
  // A backward that takes part in folding activations (BackwardContext).
  using ContextBackwardFn = std::function<std::vector<Tensor>(
      const std::vector<Tensor>& grad_outputs, BackwardContext& context)>;

  Node(std::string name, std::vector<Tensor> inputs, BackwardFn backward)
      : name_(std::move(name)), inputs_(std::move(inputs)), backward_(std::move(backward)) {}
  Node(std::string name, std::vector<Tensor> inputs, ContextBackwardFn backward,
       PostActivation output_activation)
      : name_(std::move(name)),
        inputs_(std::move(inputs)),
        context_backward_(std::move(backward)),
        output_activation_(output_activation) {}

  const std::string& name() const { return name_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  // Whether input i needed a gradient when the op ran (it required grad, had a grad_fn or was
  // watched by a tape then). Gradients flow only along those edges, even after the tape that
  // watched an input has stopped recording (TF: tape.gradient is called after `with`).
  std::vector<bool>& input_needs_grad() { return input_needs_grad_; }
  const std::vector<bool>& input_needs_grad() const { return input_needs_grad_; }
  std::vector<std::weak_ptr<TensorImpl>>& outputs() { return outputs_; }
  const std::vector<std::weak_ptr<TensorImpl>>& outputs() const { return outputs_; }
  // Gradients for each input (undefined where an input gets none), given one gradient per
  // output (undefined outputs were not reached: treat them as zero).
  // `context` is filled in by the engine (its vectors sized to inputs and outputs) only for a
  // node recorded with a ContextBackwardFn; others ignore it.
  std::vector<Tensor> backward(const std::vector<Tensor>& grad_outputs,
                               BackwardContext& context) const {
    return context_backward_ ? context_backward_(grad_outputs, context) : backward_(grad_outputs);
  }
  bool takes_context() const { return static_cast<bool>(context_backward_); }
  // The activation this node's op fused into its (single) output, whose backward the node's
  // backward applies unless BackwardContext says a consumer already did.
  PostActivation output_activation() const { return output_activation_; }
  // loss.backward() without retain_graph frees what the backward functions saved (PyTorch
  // frees saved tensors the same way); a later backward through this node is then an error.
  void release_saved_state() {
    backward_ = nullptr;
    context_backward_ = nullptr;
    released_ = true;
  }
  bool released() const { return released_; }

 private:
  std::string name_;
  std::vector<Tensor> inputs_;
  std::vector<bool> input_needs_grad_;
  std::vector<std::weak_ptr<TensorImpl>> outputs_;
  BackwardFn backward_;
  ContextBackwardFn context_backward_;
  PostActivation output_activation_ = PostActivation::kNone;
  bool released_ = false;
};

// --- grad mode (torch.no_grad / torch.enable_grad), per thread ---
bool grad_mode_enabled();
void set_grad_mode_enabled(bool enabled);
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(grad_mode_enabled()) { set_grad_mode_enabled(enabled); }
  ~GradModeGuard() { set_grad_mode_enabled(previous_); }

 private:
  bool previous_;
};

// --- GradientTape watching, per thread ---
// A tape id from push_tape; watch() marks tensors the tape differentiates with respect to.
int push_tape();
void pop_tape(int tape_id);
void tape_watch(int tape_id, const Tensor& t);
bool tape_is_watching(int tape_id, const Tensor& t);

// True when an op on these inputs must be recorded.
bool needs_grad(const Tensor& t);
bool any_needs_grad(const std::vector<Tensor>& inputs);

// Records `outputs` as produced by a node named `name` over `inputs`, if any input needs grad
// (and grad mode is on). `backward` runs with grad mode off.
void record(const std::string& name, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs, Node::BackwardFn backward);
// The same, for a backward that takes a BackwardContext; `output_activation` is the activation
// the op fused into its single output (kNone if none).
void record_with_context(const std::string& name, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& outputs, Node::ContextBackwardFn backward,
                         PostActivation output_activation = PostActivation::kNone);

// Gradients of `roots` (seeded with `root_grads`; undefined seeds mean ones) with respect to
// `sources`. An entry is undefined where a source is not connected to the roots.
std::vector<Tensor> compute_gradients(const std::vector<Tensor>& roots,
                                      const std::vector<Tensor>& root_grads,
                                      const std::vector<Tensor>& sources);

// Called once per source, as soon as its gradient is final (every node that uses the source
// has run), with the source's index and its gradient (undefined where it gets none). Sources
// that no node uses are reported after the whole backward pass. Data-parallel training starts
// summing gradients across replicas here while the rest of the backward pass runs
// (distribute/overlapped_all_reduce.h).
using GradientReadyFn = std::function<void(size_t source_index, const Tensor& grad)>;
std::vector<Tensor> compute_gradients(const std::vector<Tensor>& roots,
                                      const std::vector<Tensor>& root_grads,
                                      const std::vector<Tensor>& sources,
                                      const GradientReadyFn& on_ready);

// loss.backward(): accumulates into .grad of every reachable leaf that requires grad, or only
// into `inputs` when given (PyTorch's backward(inputs=...), leaves or not). Unless
// `retain_graph`, the graph's saved state is released afterwards, and a second backward through
// it raises PyTorch's "Trying to backward through the graph a second time" error.
void backward(const Tensor& root, const Tensor& root_grad, bool retain_graph = false,
              const std::vector<Tensor>& inputs = {});

}  // namespace gpuaccel
