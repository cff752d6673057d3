"""``torch.autograd.functional``: ``vjp`` and ``jacobian`` of a Python function, by reverse mode
over ``torch.autograd.grad`` (one backward pass per output element for the Jacobian).

As in PyTorch, the function runs on detached copies of the inputs that require grad (the
caller's tensors are untouched), results come back detached, an input the outputs do not use
gets zeros (``strict=True`` makes that an error), and a tuple of inputs or outputs gives a tuple
of results. gpuaccel records no backward graph of a backward pass, so ``create_graph=True``
and everything built on it (``hessian``, ``jvp``, ``hvp``, ``vhp``) are refused.
"""
from ... import _C
from ... import _unsupported
from ..._array_ops import ones_like, stack, zeros_like
from ..._creation import eye
from ..._tensor import Tensor
from ..._torch_ops import enable_grad
from ._grad import grad, refuse_create_graph

__all__ = ["vjp", "jacobian"]


def _as_tuple(value, name, function_name):
    """``(is_tuple, tensors)``: PyTorch's rule that only a tuple (or list) gives tuple results."""
    if isinstance(value, Tensor):
        return False, (value,)
    if isinstance(value, (tuple, list)) and all(isinstance(v, Tensor) for v in value):
        return True, tuple(value)
    raise TypeError(f"The {name} given to {function_name} must be either a Tensor or a tuple of "
                    f"Tensors but the given {name} has type {type(value).__name__}.")


def _run(func, inputs, function_name):
    """The outputs of ``func`` on detached inputs that require grad, recorded."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", function_name)
    inputs = tuple(_C.detach(x).requires_grad_(True) for x in inputs)
    with enable_grad():
        outputs = func(*inputs)
    is_outputs_tuple, outputs = _as_tuple(outputs, "outputs of the user-provided function",
                                          function_name)
    return is_inputs_tuple, inputs, is_outputs_tuple, outputs


def _gradients(outputs, inputs, seeds, strict, function_name):
    """d(sum(outputs * seeds)) / d(inputs), zeros for unused inputs unless ``strict``."""
    used = [k for k, out in enumerate(outputs) if out.requires_grad]
    found = grad([outputs[k] for k in used], inputs, [seeds[k] for k in used],
                 allow_unused=True) if used else (None,) * len(inputs)
    result = []
    for k, (g, x) in enumerate(zip(found, inputs)):
        if g is None:
            if strict:
                raise RuntimeError(f"The output of the user-provided function is independent of "
                                   f"input {k}. This is not allowed in strict mode.")
            g = zeros_like(x)
        result.append(g)
    return tuple(result)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    """``(func(*inputs), v^T J)``: the outputs and the vector-Jacobian product with ``v`` (which
    may be left out when the output has one element)."""
    refuse_create_graph(create_graph)
    is_inputs_tuple, inputs, is_outputs_tuple, outputs = _run(func, inputs, "vjp")
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        seeds = (ones_like(outputs[0]),)
    else:
        _, seeds = _as_tuple(v, "v", "vjp")
        if len(seeds) != len(outputs):
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(outputs)} but "
                               f"got {len(seeds)}.")
        for k, (seed, out) in enumerate(zip(seeds, outputs)):
            if tuple(seed.shape) != tuple(out.shape):
                raise RuntimeError(f"Entry {k} in v has invalid size: should be "
                                   f"{tuple(out.shape)} but got {tuple(seed.shape)}.")
    products = _gradients(outputs, inputs, seeds, strict, "vjp")
    outputs = tuple(_C.detach(out) for out in outputs)
    return (outputs if is_outputs_tuple else outputs[0],
            products if is_inputs_tuple else products[0])


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False,
             strategy="reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``: for output i and input j a tensor of shape
    ``outputs[i].shape + inputs[j].shape`` (nested tuples as the arguments are tuples).
    ``vectorize`` only changes PyTorch's speed, so it is accepted and changes nothing here."""
    refuse_create_graph(create_graph)
    if strategy != "reverse-mode":
        raise NotImplementedError(f"jacobian(strategy={strategy!r}) is not supported: gpuaccel "
                                  f"has no forward-mode AD; use strategy='reverse-mode'")
    is_inputs_tuple, inputs, is_outputs_tuple, outputs = _run(func, inputs, "jacobian")
    rows = []
    for out in outputs:
        flat_rows = [[] for _ in inputs]
        identity = eye(out.numel(), dtype=out.dtype, device=out.device)
        for index in range(out.numel()):
            seed = _C.reshape(identity[index], list(out.shape))
            seeds = tuple(seed if other is out else zeros_like(other) for other in outputs)
            for j, g in enumerate(_gradients(outputs, inputs, seeds, strict, "jacobian")):
                flat_rows[j].append(g)
        rows.append(tuple(
            _C.reshape(stack(per_input, 0) if per_input else zeros_like(x),
                       list(out.shape) + list(x.shape))
            for per_input, x in zip(flat_rows, inputs)))
    if not is_inputs_tuple:
        rows = [row[0] for row in rows]
    return tuple(rows) if is_outputs_tuple else rows[0]


__getattr__ = _unsupported.module_getattr(__name__, "torch.autograd.functional", {
    name: "jacobian / vjp (gpuaccel records no graph of a backward pass, so second "
          "derivatives and forward mode are not there)"
    for name in ("hessian", "jvp", "hvp", "vhp")})
