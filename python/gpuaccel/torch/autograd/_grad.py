"""``torch.autograd.grad`` and ``backward`` over gpuaccel's recorded graph (the one
``tensor.backward()`` walks), with PyTorch's checks; a module of its own so that
``torch.autograd.functional`` builds on them without importing its package.
"""
from ... import _C
from ..._tensor import Tensor, no_grad


def _tensor_list(value, name):
    values = [value] if isinstance(value, Tensor) else list(value)
    for v in values:
        if not isinstance(v, Tensor):
            raise TypeError(f"{name} must be tensors, got {type(v).__name__}")
    return values


def _seeds(outputs, grad_outputs):
    """The output gradients: given ones, or 1 for scalar outputs (PyTorch's implicit seed)."""
    if grad_outputs is None:
        given = [None] * len(outputs)
    else:
        given = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
        if len(given) != len(outputs):
            raise RuntimeError(f"grad requires one output gradient per output: got "
                               f"{len(given)} for {len(outputs)} outputs")
    for k, (out, seed) in enumerate(zip(outputs, given)):
        if not out.requires_grad:
            raise RuntimeError(f"element {k} of tensors does not require grad and does not "
                               f"have a grad_fn")
        if seed is None and out.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        if seed is not None and tuple(seed.shape) != tuple(out.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{k}] has a shape of "
                               f"{tuple(seed.shape)} and output[{k}] has a shape of "
                               f"{tuple(out.shape)}.")
    return given


def refuse_create_graph(create_graph):
    if create_graph:
        raise NotImplementedError(
            "create_graph=True is not supported: gpuaccel's backward functions are not "
            "recorded, so higher-order gradients cannot be taken; use create_graph=False")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=False, is_grads_batched=False):
    """The gradients of ``outputs`` (weighted by ``grad_outputs``) with respect to
    ``inputs``, as a tuple, without touching any ``.grad``."""
    refuse_create_graph(create_graph)
    if is_grads_batched:
        raise NotImplementedError("is_grads_batched=True is not supported; loop over the "
                                  "batch of output gradients")
    outputs = _tensor_list(outputs, "outputs")
    inputs = _tensor_list(inputs, "inputs")
    for t in inputs:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    seeds = _seeds(outputs, grad_outputs)
    with no_grad():
        grads = _C.compute_gradients(outputs, seeds, inputs)
    if not allow_unused and any(g is None for g in grads):
        raise RuntimeError("One of the differentiated Tensors appears to not have been used "
                           "in the graph. Set allow_unused=True if this is the desired "
                           "behavior.")
    return tuple(grads)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates the gradients of ``tensors`` into the leaves' ``.grad`` (or into
    ``inputs``'), as ``sum(t.backward(g))`` would."""
    refuse_create_graph(create_graph)
    tensors = _tensor_list(tensors, "tensors")
    seeds = _seeds(tensors, grad_tensors if grad_tensors is not None else grad_variables)
    for k, (root, seed) in enumerate(zip(tensors, seeds)):
        last = k == len(tensors) - 1
        root.backward(seed, retain_graph=bool(retain_graph) or not last, inputs=inputs)
