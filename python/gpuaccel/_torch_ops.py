"""The top-level PyTorch functions whose meaning differs from TensorFlow's names or that TF
lacks: ``torch.sum/mean(input, dim, keepdim)``, ``torch.max/min`` (a reduction, a
(values, indices) pair with ``dim``, or element-wise with a second tensor), ``torch.std/var``,
``torch.softmax``, ``torch.permute``, ``torch.equal``, grad-mode switches.
"""
import collections

from . import _C
from ._int_range import check_int
from . import _torch_functional as _F
from ._convert import as_tensors, convert_to_tensor
from ._tensor import Tensor

__all__ = ["sum", "mean", "max", "min", "std", "var", "softmax", "log_softmax", "permute",
           "equal", "is_tensor", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "stop_gradient", "executing_eagerly"]

_ValuesIndices = collections.namedtuple("_ValuesIndices", ["values", "indices"])


def _reduce(op):
    def reduce(input, dim=None, keepdim=False, dtype=None, axis=None):
        x = convert_to_tensor(input)
        if dtype is not None:
            x = x.to(dtype)
        dim = axis if dim is None else dim
        return _C.reduce(op, x, list(dim) if isinstance(dim, (list, tuple)) else dim,
                         bool(keepdim))
    reduce.__name__ = op
    reduce.__doc__ = f"``torch.{op}(input, dim=None, keepdim=False)``."
    return reduce


sum = _reduce("sum")  # noqa: A001 - torch's names
mean = _reduce("mean")


def _extreme(op, arg_op):
    def fn(input, dim=None, keepdim=False, other=None):
        x = convert_to_tensor(input)
        if isinstance(dim, Tensor) or other is not None:
            return _C.binary("maximum" if op == "max" else "minimum",
                             *as_tensors(x, dim if other is None else other))
        if dim is None:
            return _C.reduce(op, x, None, False)
        dim = check_int(dim, "dim")
        values = _C.reduce(op, x, dim, bool(keepdim))
        indices = _C.reduce(arg_op, x, dim, bool(keepdim))
        return _ValuesIndices(values, indices)
    fn.__name__ = op
    fn.__doc__ = (f"``torch.{op}(input)`` (a 0-D tensor), ``torch.{op}(input, dim)`` "
                  f"((values, indices)), or ``torch.{op}(input, other)`` (element-wise).")
    return fn


max = _extreme("max", "argmax")  # noqa: A001
min = _extreme("min", "argmin")  # noqa: A001


def var(input, dim=None, unbiased=True, keepdim=False, correction=None):
    """``torch.var``: Bessel-corrected by default (``correction=1``)."""
    return convert_to_tensor(input).var(dim, unbiased, keepdim, correction)


def std(input, dim=None, unbiased=True, keepdim=False, correction=None):
    return convert_to_tensor(input).std(dim, unbiased, keepdim, correction)


def softmax(input, dim, dtype=None):
    """``torch.softmax(input, dim)``."""
    return _F.softmax(input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    return _F.log_softmax(input, dim, dtype)


def permute(input, dims):
    return _C.permute(convert_to_tensor(input), [int(d) for d in dims])


def equal(input, other):
    """``torch.equal``: True when both have the same shape and the same values (a Python bool;
    TF's element-wise ``equal`` is ``gpuaccel.math.equal``)."""
    a, b = as_tensors(input, other)
    return tuple(a.shape) == tuple(b.shape) and bool(
        (_C.detach(a)._numpy() == _C.detach(b)._numpy()).all())


def is_tensor(obj):
    return isinstance(obj, Tensor)


class set_grad_enabled:
    """``torch.set_grad_enabled(mode)``: a function call and a context manager."""

    def __init__(self, mode):
        self._previous = _C.grad_mode_enabled()
        _C.set_grad_mode_enabled(bool(mode))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C.set_grad_mode_enabled(self._previous)
        return False


class enable_grad(set_grad_enabled):
    """``with torch.enable_grad():`` records gradients inside a ``no_grad`` block."""

    def __init__(self):
        super().__init__(True)


def is_grad_enabled():
    return _C.grad_mode_enabled()


def stop_gradient(input, name=None):
    """``tf.stop_gradient``: the same values, no gradient flows back."""
    return _C.detach(convert_to_tensor(input))


def executing_eagerly():
    """Always True: gpuaccel runs every op eagerly (``tf.function`` included)."""
    return True

