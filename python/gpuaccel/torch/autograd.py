"""``torch.autograd`` of the PyTorch face: ``grad``, ``backward``, ``Variable`` and the grad-mode
context managers.

Why: PyTorch's tutorials take gradients with ``torch.autograd.grad(loss, params)`` (the face's
most used torch.autograd name) and older code wraps tensors in ``Variable``. gpuaccel records
the graph of every tensor that requires grad, and its engine computes the gradients of outputs
with respect to any tensors of that graph (``GradientTape.gradient``'s engine) without touching
``.grad``; this module gives it torch's arguments, checks and errors. As in
``Tensor.backward``, ``create_graph=True`` (higher-order gradients) is refused: the backward
functions are not recorded. ``Function`` (custom autograd functions) and ``gradcheck`` are
refused with what to use instead.
"""
from .. import _C, _unsupported
from .._tensor import Tensor, no_grad
from .._torch_ops import enable_grad, set_grad_enabled

__all__ = ["Variable", "backward", "enable_grad", "grad", "no_grad", "set_grad_enabled"]


def _tensors(value, what):
    values = [value] if isinstance(value, Tensor) else list(value)
    for item in values:
        if not isinstance(item, Tensor):
            raise TypeError(f"torch.autograd: {what} must be tensors, got "
                            f"{type(item).__name__}")
    return values


def _seeds(outputs, grad_outputs):
    """One output gradient per output: the given ones, or ones for scalar outputs."""
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    else:
        grad_outputs = [grad_outputs] if isinstance(grad_outputs, Tensor) else \
            list(grad_outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(outputs)} "
                           f"outputs and {len(grad_outputs)} grad_outputs")
    for index, (output, seed) in enumerate(zip(outputs, grad_outputs)):
        if not output.requires_grad:
            raise RuntimeError(f"element {index} of tensors does not require grad and does not "
                               "have a grad_fn")
        if seed is None and output.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
    return grad_outputs


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, is_grads_batched=False):
    """The gradients of ``outputs`` (weighted by ``grad_outputs``) with respect to each of
    ``inputs``, as a tuple; ``.grad`` is not touched. An input the outputs do not depend on is
    an error unless ``allow_unused`` (then its gradient is None)."""
    if create_graph:
        raise NotImplementedError(
            "torch.autograd.grad(create_graph=True) is not supported: gpuaccel's backward "
            "functions are not recorded, so higher-order gradients cannot be taken")
    if is_grads_batched:
        raise NotImplementedError("torch.autograd.grad(is_grads_batched=True) is not supported; "
                                  "loop over the grad_outputs instead")
    outputs = _tensors(outputs, "outputs")
    inputs = _tensors(inputs, "inputs")
    for item in inputs:
        if not item.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    seeds = _seeds(outputs, grad_outputs)
    grads = _C.compute_gradients(outputs, seeds, inputs)
    if not allow_unused and any(g is None for g in grads):
        raise RuntimeError("One of the differentiated Tensors appears to not have been used in "
                           "the graph. Set allow_unused=True if this is the desired behavior.")
    return tuple(grads)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """``torch.autograd.backward``: each tensor's ``backward`` with its gradient, accumulating
    into the leaves' (or ``inputs``') ``.grad``."""
    tensors = _tensors(tensors, "tensors")
    seeds = _seeds(tensors, grad_tensors)
    last = len(tensors) - 1
    for index, (output, seed) in enumerate(zip(tensors, seeds)):
        output.backward(seed, retain_graph=True if index < last else retain_graph,
                        create_graph=create_graph, inputs=inputs)


def Variable(data, requires_grad=False, volatile=False):  # noqa: N802 - torch's name
    """The deprecated ``Variable(tensor, requires_grad=...)``: the tensor itself (tensors and
    Variables are one class since PyTorch 0.4), with ``requires_grad`` set."""
    if not isinstance(data, Tensor):
        raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
    if requires_grad:
        data.requires_grad_(True)
    return data


__getattr__ = _unsupported.module_getattr(__name__, "torch.autograd", {
    "Function": "a composition of gpuaccel.torch functions (autograd differentiates it)",
    "gradcheck": "torch.testing.assert_close of torch.autograd.grad against finite differences",
})
