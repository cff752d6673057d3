// The autograd engine (see autograd.h): recording, tapes, and the reverse sweep.
#include "profiler/profiler.h"
#include "ops/autograd.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/errors.h"
#include "ops/creation.h"
#include "ops/elementwise.h"

namespace gpuaccel {

namespace {

thread_local bool t_grad_mode = true;

struct Tape {
  int id;
  std::vector<std::weak_ptr<TensorImpl>> watched;
};
thread_local std::vector<Tape> t_tapes;
thread_local int t_next_tape_id = 1;

Tape* find_tape(int id) {
  for (auto& tape : t_tapes) {
    if (tape.id == id) return &tape;
  }
  return nullptr;
}

bool watched_by_any_tape(const TensorImpl* impl) {
  for (const auto& tape : t_tapes) {
    for (const auto& w : tape.watched) {
      if (w.lock().get() == impl) return true;
    }
  }
  return false;
}

}  // namespace

bool grad_mode_enabled() { return t_grad_mode; }
void set_grad_mode_enabled(bool enabled) { t_grad_mode = enabled; }

int push_tape() {
  const int id = t_next_tape_id++;
  t_tapes.push_back({id, {}});
  return id;
}

void pop_tape(int tape_id) {
  auto it = std::find_if(t_tapes.begin(), t_tapes.end(), [&](const Tape& t) { return t.id == tape_id; });
  if (it != t_tapes.end()) t_tapes.erase(it);
}

void tape_watch(int tape_id, const Tensor& t) {
  Tape* tape = find_tape(tape_id);
  if (tape == nullptr) {
    throw_error(ErrorCode::kRuntime, "GradientTape.watch",
                "the tape is not recording; call watch() inside its `with` block");
  }
  if (!is_floating(t.dtype())) {
    throw_error(ErrorCode::kInvalidArgument, "GradientTape.watch",
                std::string("only floating tensors can be watched, got ") + dtype_name(t.dtype()));
  }
  tape->watched.push_back(t.impl_ptr());
}

bool tape_is_watching(int tape_id, const Tensor& t) {
  Tape* tape = find_tape(tape_id);
  if (tape == nullptr) return false;
  for (const auto& w : tape->watched) {
    if (w.lock().get() == t.impl()) return true;
  }
  return false;
}

bool needs_grad(const Tensor& t) {
  if (!t.defined()) return false;
  const TensorImpl* impl = t.impl();
  return impl->requires_grad || impl->grad_fn != nullptr ||
         (!t_tapes.empty() && watched_by_any_tape(impl));
}

bool any_needs_grad(const std::vector<Tensor>& inputs) {
  for (const Tensor& t : inputs) {
    if (needs_grad(t)) return true;
  }
  return false;
}

namespace {

void attach(const std::shared_ptr<Node>& node, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs) {
  for (const Tensor& t : inputs) node->input_needs_grad().push_back(needs_grad(t));
  for (size_t i = 0; i < outputs.size(); ++i) {
    node->outputs().push_back(outputs[i].impl_ptr());
    outputs[i].impl()->grad_fn = node;
    outputs[i].impl()->grad_fn_output = static_cast<int>(i);
  }
}

}  // namespace

void record(const std::string& name, const std::vector<Tensor>& inputs,
            const std::vector<Tensor>& outputs, Node::BackwardFn backward) {
  if (!t_grad_mode || !any_needs_grad(inputs)) return;
  attach(std::make_shared<Node>(name, inputs, std::move(backward)), inputs, outputs);
}

void record_with_context(const std::string& name, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& outputs, Node::ContextBackwardFn backward,
                         PostActivation output_activation) {
  if (!t_grad_mode || !any_needs_grad(inputs)) return;
  attach(std::make_shared<Node>(name, inputs, std::move(backward), output_activation), inputs,
         outputs);
}

namespace {

// Nodes reachable from the roots, each after every node that consumes its outputs.
std::vector<Node*> reverse_topological_order(const std::vector<Tensor>& roots) {
  std::vector<Node*> postorder;
  std::unordered_set<Node*> visited;
  std::vector<std::pair<Node*, size_t>> stack;
  for (const Tensor& r : roots) {
    Node* start = r.impl()->grad_fn.get();
    if (start == nullptr || visited.count(start)) continue;
    visited.insert(start);
    stack.push_back({start, 0});
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next < node->inputs().size()) {
        const Tensor& input = node->inputs()[next++];
        Node* child = input.defined() ? input.impl()->grad_fn.get() : nullptr;
        if (child != nullptr && !visited.count(child)) {
          visited.insert(child);
          stack.push_back({child, 0});
        }
      } else {
        postorder.push_back(node);
        stack.pop_back();
      }
    }
  }
  std::reverse(postorder.begin(), postorder.end());
  return postorder;
}

void accumulate(std::unordered_map<const TensorImpl*, Tensor>& grads, const TensorImpl* key,
                const Tensor& grad) {
  auto it = grads.find(key);
  if (it == grads.end()) {
    grads.emplace(key, grad);
  } else {
    it->second = add(it->second, grad);
  }
}

// The edges (node, input index) whose gradient may carry the input's producer's fused
// activation (BackwardContext): the consumer takes a context, the producer fused an activation
// into its only output, and that output is read by this edge alone among the sweep's nodes and
// is neither a root nor a source, so its gradient is read by the producer and nothing else.
struct FoldableEdge {
  const Node* consumer;
  size_t input;
};
std::vector<FoldableEdge> foldable_edges(const std::vector<Node*>& order,
                                         const std::vector<Tensor>& roots,
                                         const std::vector<Tensor>& sources) {
  std::vector<FoldableEdge> edges;
  for (const Node* node : order) {
    if (!node->takes_context()) continue;
    for (size_t i = 0; i < node->inputs().size(); ++i) {
      const Tensor& input = node->inputs()[i];
      const Node* producer = input.defined() ? input.impl()->grad_fn.get() : nullptr;
      if (producer != nullptr && producer->output_activation() != PostActivation::kNone &&
          producer->outputs().size() == 1 && node->input_needs_grad()[i]) {
        edges.push_back({node, i});
      }
    }
  }
  if (edges.empty()) return edges;
  auto observed = [&](const TensorImpl* impl) {
    for (const Tensor& t : roots) {
      if (t.impl() == impl) return true;
    }
    for (const Tensor& t : sources) {
      if (t.defined() && t.impl() == impl) return true;
    }
    int readers = 0;
    for (const Node* node : order) {
      for (const Tensor& input : node->inputs()) readers += input.defined() && input.impl() == impl;
    }
    return readers != 1;
  };
  edges.erase(std::remove_if(edges.begin(), edges.end(),
                             [&](const FoldableEdge& e) {
                               return observed(e.consumer->inputs()[e.input].impl());
                             }),
              edges.end());
  return edges;
}

// What run_node tells the nodes about folded activations, for one sweep.
struct Folding {
  std::vector<FoldableEdge> edges;
  // Gradients that arrived with their producer's activation applied.
  std::vector<const TensorImpl*> applied;
};

// The context for `node`'s backward (empty vectors unless it takes one).
BackwardContext context_for(const Node* node, const Folding& folding) {
  BackwardContext context;
  if (!node->takes_context()) return context;
  context.foldable_input_activation.assign(node->inputs().size(), PostActivation::kNone);
  context.input_activation_applied.assign(node->inputs().size(), false);
  for (const FoldableEdge& e : folding.edges) {
    if (e.consumer == node) {
      context.foldable_input_activation[e.input] =
          node->inputs()[e.input].impl()->grad_fn->output_activation();
    }
  }
  for (const auto& weak : node->outputs()) {
    const auto impl = weak.lock();
    context.output_activation_applied.push_back(
        impl != nullptr && std::find(folding.applied.begin(), folding.applied.end(),
                                     impl.get()) != folding.applied.end());
  }
  return context;
}

// Runs one node's backward on the gradients reaching its outputs, adding what it returns to
// its inputs' gradients.
[[noreturn]] void throw_released_graph_error() {
  throw_error(ErrorCode::kRuntime, "backward",
              "Trying to backward through the graph a second time (or directly access saved "
              "tensors after they have already been freed). Saved intermediate values of the "
              "graph are freed when you call .backward() or autograd.grad(). Specify "
              "retain_graph=True if you need to backward through the graph a second time or if "
              "you need to access saved tensors after calling backward.");
}

void run_node(Node* node, std::unordered_map<const TensorImpl*, Tensor>& grads,
              Folding& folding) {
  std::vector<Tensor> grad_outputs;
  bool any = false;
  for (const auto& weak : node->outputs()) {
    auto impl = weak.lock();
    auto it = impl ? grads.find(impl.get()) : grads.end();
    if (it != grads.end()) {
      grad_outputs.push_back(it->second);
      any = true;
    } else {
      grad_outputs.emplace_back();
    }
  }
  if (!any) return;
  if (node->released()) throw_released_graph_error();
  // Unreached outputs of multi-output nodes count as zero gradients.
  for (size_t i = 0; i < grad_outputs.size(); ++i) {
    if (!grad_outputs[i].defined()) {
      auto impl = node->outputs()[i].lock();
      if (impl) grad_outputs[i] = zeros(Tensor(impl).shape(), Tensor(impl).dtype(), Tensor(impl).device());
    }
  }
  std::vector<Tensor> input_grads;
  BackwardContext context = context_for(node, folding);
  {
    profiler::TraceScope scope(profiler::EventKind::kBackward,
                               profiler::enabled() ? profiler::intern(node->name()) : nullptr);
    input_grads = node->backward(grad_outputs, context);
  }
  for (size_t i = 0; i < node->inputs().size() && i < input_grads.size(); ++i) {
    const Tensor& input = node->inputs()[i];
    if (input_grads[i].defined() && node->input_needs_grad()[i]) {
      accumulate(grads, input.impl(), input_grads[i]);
      // Only a foldable edge may report it (its input's gradient has no other contribution).
      if (i < context.input_activation_applied.size() && context.input_activation_applied[i] &&
          context.foldable_input_activation[i] != PostActivation::kNone) {
        folding.applied.push_back(input.impl());
      }
    }
  }
}

}  // namespace

std::vector<Tensor> compute_gradients(const std::vector<Tensor>& roots,
                                      const std::vector<Tensor>& root_grads,
                                      const std::vector<Tensor>& sources) {
  return compute_gradients(roots, root_grads, sources, GradientReadyFn());
}

std::vector<Tensor> compute_gradients(const std::vector<Tensor>& roots,
                                      const std::vector<Tensor>& root_grads,
                                      const std::vector<Tensor>& sources,
                                      const GradientReadyFn& on_ready) {
  GradModeGuard no_grad(false);
  std::unordered_map<const TensorImpl*, Tensor> grads;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Tensor& root = roots[i];
    Tensor seed = i < root_grads.size() && root_grads[i].defined()
                      ? root_grads[i]
                      : ones(root.shape(), root.dtype(), root.device());
    if (seed.shape() != root.shape()) {
      throw_error(ErrorCode::kInvalidArgument, "gradient",
                  "output gradient of shape " + shape_to_string(seed.shape()) +
                      " does not match the output's shape " + shape_to_string(root.shape()));
    }
    accumulate(grads, root.impl(), seed);
  }
  const std::vector<Node*> order = reverse_topological_order(roots);
  // For on_ready: the sources each node is the last user of (in `order`). A source's gradient
  // is final once that node has run; sources no node uses are reported at the end.
  std::unordered_map<const Node*, std::vector<size_t>> final_after;
  if (on_ready) {
    std::unordered_map<const TensorImpl*, const Node*> last_user;
    for (const Node* node : order) {
      for (const Tensor& input : node->inputs()) {
        if (input.defined()) last_user[input.impl()] = node;
      }
    }
    for (size_t s = 0; s < sources.size(); ++s) {
      auto it = last_user.find(sources[s].impl());
      if (it != last_user.end()) final_after[it->second].push_back(s);
    }
  }
  std::vector<bool> reported(sources.size(), false);
  auto report = [&](size_t s) {
    reported[s] = true;
    auto it = grads.find(sources[s].impl());
    on_ready(s, it == grads.end() ? Tensor() : it->second);
  };
  Folding folding{foldable_edges(order, roots, sources), {}};
  for (Node* node : order) {
    run_node(node, grads, folding);
    if (!on_ready) continue;
    auto it = final_after.find(node);
    if (it == final_after.end()) continue;
    for (size_t s : it->second) report(s);
  }
  if (on_ready) {
    for (size_t s = 0; s < sources.size(); ++s) {
      if (!reported[s]) report(s);
    }
  }
  std::vector<Tensor> out;
  for (const Tensor& s : sources) {
    auto it = grads.find(s.impl());
    out.push_back(it == grads.end() ? Tensor() : it->second);
  }
  return out;
}

void backward(const Tensor& root, const Tensor& root_grad, bool retain_graph,
              const std::vector<Tensor>& inputs) {
  if (!needs_grad(root)) {
    throw_error(ErrorCode::kRuntime, "backward",
                "element 0 of tensors does not require grad and does not have a grad_fn "
                "(set requires_grad=True on the inputs you want gradients for)");
  }
  if (!root_grad.defined() && root.numel() != 1) {
    throw_error(ErrorCode::kRuntime, "backward",
                "grad can be implicitly created only for scalar outputs; pass a gradient of "
                "shape " + shape_to_string(root.shape()));
  }
  const std::vector<Node*> graph = reverse_topological_order({root});
  for (const Node* node : graph) {
    if (node->released()) throw_released_graph_error();
  }
  // The tensors whose .grad receives the result: `inputs`, else the leaves reachable from the
  // root that require grad.
  std::vector<Tensor> targets = inputs;
  if (inputs.empty()) {
    std::unordered_set<const TensorImpl*> seen;
    if (root.impl()->requires_grad && root.impl()->grad_fn == nullptr) {
      targets.push_back(root);
      seen.insert(root.impl());
    }
    for (Node* node : graph) {
      for (const Tensor& input : node->inputs()) {
        if (input.defined() && input.impl()->requires_grad && input.impl()->grad_fn == nullptr &&
            !seen.count(input.impl())) {
          seen.insert(input.impl());
          targets.push_back(input);
        }
      }
    }
  }
  const std::vector<Tensor> grads = compute_gradients({root}, {root_grad}, targets);
  GradModeGuard no_grad(false);
  for (size_t i = 0; i < targets.size(); ++i) {
    if (!grads[i].defined()) continue;
    TensorImpl* target = targets[i].impl();
    Tensor g = grads[i];
    if (target->grad) g = add(Tensor(target->grad), g);
    target->grad = g.impl_ptr();
  }
  if (!retain_graph) {
    for (Node* node : graph) node->release_saved_state();
  }
}

}  // namespace gpuaccel
