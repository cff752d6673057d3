// An autograd node whose backward is a Python callable: the one C++ piece under
// torch.autograd.Function, tf.custom_gradient and the linear-algebra ops whose forward runs in
// LAPACK on the host (python/gpuaccel/_python_function.py). The engine calls node backwards
// with the GIL released, so the node takes the GIL to call Python; it owns the callable through
// HeldPythonCallable, which drops it with the GIL held whenever the graph dies or is released.
// A Python exception raised by the backward travels out of backward()/gradient() unchanged.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "bindings/bindings.h"
#include "bindings/held_python_callable.h"
#include "nn/op_trace.h"
#include "ops/creation.h"
#include "ops/autograd.h"

namespace py = pybind11;

namespace gpuaccel::bindings {

namespace {

// Records `outputs` as made from `inputs` by a node named `name` whose backward is
// `backward(grad_outputs: list[Tensor]) -> sequence of Tensor | None` (one per input). Returns
// whether a node was recorded (grad mode on and some input needing a gradient).
bool record_python_function(const std::string& name, const std::vector<Tensor>& inputs,
                            const std::vector<Tensor>& outputs, py::function backward) {
  // A replay of a traced layer would rerun the forward's ops without this node.
  nn::OpTraceRecorder::note_unreplayable("records a Python-defined backward (" + name + ")");
  for (const Tensor& out : outputs) {
    for (const Tensor& in : inputs) {
      if (out.impl() == in.impl()) {
        throw py::value_error(name + ": an output is also an input; return an alias "
                                     "(detach() of it) so the input keeps its own gradient");
      }
    }
  }
  if (!grad_mode_enabled() || !any_needs_grad(inputs)) return false;
  auto held = std::make_shared<HeldPythonCallable>(std::move(backward));
  const size_t input_count = inputs.size();
  // The engine leaves the gradient of an output that died unreached undefined; Python gets
  // zeros of the output's shape instead (what the engine gives for a live unreached output).
  struct OutputMeta {
    Shape shape;
    DType dtype;
    LogicalDevice device;
  };
  std::vector<OutputMeta> output_meta;
  for (const Tensor& out : outputs) output_meta.push_back({out.shape(), out.dtype(), out.device()});
  record(name, inputs, outputs,
         [held, input_count, name, output_meta](const std::vector<Tensor>& grad_outputs) {
           std::vector<Tensor> grads = grad_outputs;
           for (size_t i = 0; i < grads.size(); ++i) {
             if (!grads[i].defined()) {
               grads[i] = zeros(output_meta[i].shape, output_meta[i].dtype, output_meta[i].device);
             }
           }
           py::gil_scoped_acquire gil;
           py::object result = (*held)(grads);
           std::vector<Tensor> input_grads;
           for (py::handle g : result) {
             input_grads.push_back(g.is_none() ? Tensor() : g.cast<Tensor>());
           }
           if (input_grads.size() != input_count) {
             throw py::value_error(name + ": the Python backward returned " +
                                   std::to_string(input_grads.size()) + " gradients for " +
                                   std::to_string(input_count) + " inputs");
           }
           return input_grads;
         });
  return true;
}

// The leaves requiring grad that `roots` were computed from, other than `excluded`
// (tf.custom_gradient's `variables`: the variables its function read besides its arguments).
std::vector<Tensor> reachable_leaves(const std::vector<Tensor>& roots,
                                     const std::vector<Tensor>& excluded) {
  std::vector<Tensor> leaves;
  // The excluded tensors end the walk: what made them is no concern of the function.
  std::unordered_set<const TensorImpl*> seen;
  for (const Tensor& t : excluded) seen.insert(t.impl());
  std::unordered_set<const Node*> visited;
  std::vector<const Node*> stack;
  for (const Tensor& root : roots) {
    if (!seen.count(root.impl()) && root.impl()->grad_fn) {
      stack.push_back(root.impl()->grad_fn.get());
    }
  }
  while (!stack.empty()) {
    const Node* node = stack.back();
    stack.pop_back();
    if (!visited.insert(node).second) continue;
    for (const Tensor& input : node->inputs()) {
      if (!input.defined() || seen.count(input.impl())) continue;
      if (input.impl()->grad_fn) {
        stack.push_back(input.impl()->grad_fn.get());
      } else if (input.impl()->requires_grad) {
        seen.insert(input.impl());
        leaves.push_back(input);
      }
    }
  }
  return leaves;
}

}  // namespace

void init_python_function(py::module_& m) {
  m.def("record_python_function", &record_python_function, py::arg("name"), py::arg("inputs"),
        py::arg("outputs"), py::arg("backward"),
        "Records outputs as made from inputs by a node whose backward is the Python callable "
        "backward(grad_outputs) -> one Tensor or None per input; False when nothing needed "
        "a gradient.");
  m.def("reachable_leaves", &reachable_leaves, py::arg("roots"), py::arg("excluded"),
        "The leaves requiring grad that roots were computed from, each once, other than "
        "excluded.");
}

}  // namespace gpuaccel::bindings
