"""``torch.autograd.Function`` with PyTorch's semantics, on the autograd node whose backward is
Python (gpuaccel/_python_function.py): static ``forward(ctx, ...)`` / ``backward(ctx, *grads)``
(or ``forward(...)`` plus ``setup_context``), ``apply``, the ctx API, and the errors PyTorch
gives for a backward returning the wrong number of gradients or wrong shapes.

Differences: ``saved_tensors`` are detached aliases (higher-order gradients are not supported,
so a backward never needs their graph, and an output saved by ``save_for_backward`` would
otherwise keep its own node alive in a cycle Python cannot see). With
``set_materialize_grads(False)``, an output backward did not reach arrives as zeros rather than
None.
"""
import functools

from ... import _C
from ..._creation import zeros
from ..._python_function import broadcastable_to, fresh_output, record_outputs, sum_to_shape
from ..._tensor import Tensor, no_grad

__all__ = ["Function", "FunctionCtx", "once_differentiable"]


class FunctionCtx:
    """The ``ctx`` handed to ``forward``/``setup_context`` and ``backward``."""

    def __init__(self, needs_input_grad):
        self.needs_input_grad = needs_input_grad
        self.materialize_grads = True
        self._saved = ()
        self._non_differentiable = []
        self._dirty = []

    def save_for_backward(self, *tensors):
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{len(self._saved)} is of type {type(t).__name__}")
        self._saved = tuple(None if t is None else _C.detach(t) for t in tensors)

    def save_for_forward(self, *tensors):
        self.save_for_backward(*tensors)

    @property
    def saved_tensors(self):
        return self._saved

    def mark_non_differentiable(self, *tensors):
        self._non_differentiable.extend(tensors)

    def mark_dirty(self, *tensors):
        self._dirty.extend(tensors)

    def set_materialize_grads(self, value):
        self.materialize_grads = bool(value)


def _needs_grad(value):
    return isinstance(value, Tensor) and value.requires_grad


class _FunctionMeta(type):
    """Gives each Function subclass the name of its backward node (the repr's
    ``grad_fn=<ExpBackward>``, as PyTorch names the ``grad_fn`` class)."""

    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_name = name + "Backward"


class Function(metaclass=_FunctionMeta):
    """Subclass with static ``forward`` and ``backward``; call ``MyFunction.apply(...)``."""

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: "
                           "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args, **kwargs):
        grad_on = _C.grad_mode_enabled()
        ctx = FunctionCtx(tuple(grad_on and _needs_grad(a) for a in args))
        separate_setup = cls.setup_context is not Function.setup_context
        with no_grad():
            if separate_setup:
                result = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, result)
            else:
                result = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(result, tuple)
        results = [result] if single else list(result)
        tensor_inputs = [a for a in args if isinstance(a, Tensor)]
        differentiable = [isinstance(r, Tensor) and r.dtype.is_floating_point
                          and not any(r is n for n in ctx._non_differentiable)
                          for r in results]
        results = [fresh_output(r, tensor_inputs) if d else r
                   for r, d in zip(results, differentiable)]
        recorded = [r for r, d in zip(results, differentiable) if d]
        if recorded and any(ctx.needs_input_grad):
            # What backward needs of the outputs, not the outputs (they own the node: holding
            # them would make a cycle through C++ that Python's collector cannot see).
            undifferentiated = [None if d or not isinstance(r, Tensor)
                                else (tuple(r.shape), r.dtype, r.device)
                                for r, d in zip(results, differentiable)]
            record_outputs(cls.__name__, tensor_inputs, recorded,
                           functools.partial(_run_backward, cls, ctx, args, differentiable,
                                             undifferentiated))
        return results[0] if single else tuple(results)


def _run_backward(cls, ctx, args, differentiable, undifferentiated, grads):
    """The node's backward: PyTorch's checks around the user's ``backward``."""
    grads = iter(grads)
    grad_outputs = []
    for d, spec in zip(differentiable, undifferentiated):
        if d:
            grad_outputs.append(next(grads))
        elif spec is not None and ctx.materialize_grads:
            shape, dtype, device = spec
            grad_outputs.append(zeros(shape, dtype=dtype, device=device))
        else:
            grad_outputs.append(None)
    returned = cls.backward(ctx, *grad_outputs)
    returned = list(returned) if isinstance(returned, tuple) else [returned]
    name = cls._backward_name
    if len(returned) != len(args):
        if len(returned) < len(args) or any(g is not None for g in returned[len(args):]):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {len(args)}, got {len(returned)})")
        returned = returned[:len(args)]
    input_grads = []
    for i, (arg, grad) in enumerate(zip(args, returned)):
        if not isinstance(arg, Tensor):
            if grad is not None:
                raise RuntimeError(f"function {name} returned a gradient different than None "
                                   f"at position {i + 1}, but the corresponding forward input "
                                   "was not a Variable")
            continue
        if grad is None or not ctx.needs_input_grad[i]:
            input_grads.append(None)
            continue
        if not isinstance(grad, Tensor):
            raise TypeError(f"function {name} returned a gradient of type "
                            f"{type(grad).__name__} at position {i + 1}; expected a Tensor "
                            "or None")
        if tuple(grad.shape) != tuple(arg.shape):
            if not broadcastable_to(arg.shape, grad.shape):
                raise RuntimeError(f"Function {name} returned an invalid gradient at index "
                                   f"{i} - got {list(grad.shape)} but expected shape "
                                   f"compatible with {list(arg.shape)}")
            grad = sum_to_shape(grad, arg.shape)
        input_grads.append(grad)
    return input_grads


def once_differentiable(fn):
    """``torch.autograd.function.once_differentiable``: the backward runs without recording
    (gpuaccel's backwards always do: higher-order gradients are not supported)."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with no_grad():
            return fn(ctx, *args)

    return wrapper
