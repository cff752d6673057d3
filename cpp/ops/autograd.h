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

#include "tensor/tensor.h"

namespace gpuaccel {

class Node {
 public:
  using BackwardFn = std::function<std::vector<Tensor>(const std::vector<Tensor>& grad_outputs)>;

  Node(std::string name, std::vector<Tensor> inputs, BackwardFn backward)
      : name_(std::move(name)), inputs_(std::move(inputs)), backward_(std::move(backward)) {}

  const std::string& name() const { return name_; }
  const std::vector<Tensor>& inputs() const { return inputs_; }
  // Whether input i needed a gradient when the op ran (it required grad, had a grad_fn or was
  // watched by a tape then). Gradients flow only along those edges, even after the tape that
  // watched an input has stopped recording (TF: tape.gradient is called after `with`).
  std::vector<bool>& input_needs_grad() { return input_needs_grad_; }
  std::vector<std::weak_ptr<TensorImpl>>& outputs() { return outputs_; }
  // Gradients for each input (undefined where an input gets none), given one gradient per
  // output (undefined outputs were not reached: treat them as zero).
  std::vector<Tensor> backward(const std::vector<Tensor>& grad_outputs) const {
    return backward_(grad_outputs);
  }

 private:
  std::string name_;
  std::vector<Tensor> inputs_;
  std::vector<bool> input_needs_grad_;
  std::vector<std::weak_ptr<TensorImpl>> outputs_;
  BackwardFn backward_;
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

// loss.backward(): accumulates into .grad of every reachable leaf that requires grad.
void backward(const Tensor& root, const Tensor& root_grad);

}  // namespace gpuaccel
