"""The top-level PyTorch functions whose meaning differs from TensorFlow's names or that TF
lacks: ``torch.sum/mean(input, dim, keepdim)``, ``torch.max/min`` (a reduction, a
(values, indices) pair with ``dim``, or element-wise with a second tensor), ``torch.std/var``,
``torch.softmax``, ``torch.permute``, grad-mode switches; and PyTorch's meaning of the names both
frameworks have (``split``, ``argmax``, ``transpose``, ``gather``, ``where``, ``equal``,
``range``), which only ``gpuaccel.torch`` exports: the top level ``gpuaccel`` is TensorFlow's.
"""
import collections

import numpy as np

from . import _C
from . import _array_ops
from ._int_range import check_int
from . import _torch_functional as _F
from ._convert import as_tensors, convert_to_tensor
from ._creation import _leaf
from ._tensor import Tensor, tensor

__all__ = ["sum", "mean", "max", "min", "std", "var", "softmax", "log_softmax", "permute",
           "equal", "is_tensor", "enable_grad", "set_grad_enabled", "is_grad_enabled",
           "stop_gradient", "executing_eagerly", "split", "argmax", "argmin", "transpose",
           "gather", "where", "range", "norm"]

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



def split(tensor, split_size_or_sections, dim=0):
    """``torch.split``: an int is the size of each piece (the last may be smaller)."""
    return _array_ops.split_by_size(tensor, split_size_or_sections, dim)


def _arg_extreme(op):
    def fn(input, dim=None, keepdim=False):
        x = convert_to_tensor(input)
        if dim is not None:
            return _C.reduce(op, x, check_int(dim, "dim"), bool(keepdim))
        flat = _C.reduce(op, _C.reshape(x, [-1]), 0, False)  # the index in the flattened tensor
        return _C.reshape(flat, [1] * x.ndim) if keepdim else flat
    fn.__name__ = op
    fn.__doc__ = (f"``torch.{op}(input, dim=None, keepdim=False)``: without ``dim``, the index "
                  f"in the flattened tensor.")
    return fn


argmax = _arg_extreme("argmax")
argmin = _arg_extreme("argmin")


def transpose(input, dim0, dim1):
    """``torch.transpose(input, dim0, dim1)``: two axes swapped."""
    return _array_ops.swap_axes(input, dim0, dim1)


def gather(input, dim, index, sparse_grad=False):
    """``torch.gather(input, dim, index)``: out[i][j] = input[index[i][j]][j] for dim 0."""
    return _array_ops.gather_along(convert_to_tensor(input), dim, index)


def where(condition, input=None, other=None):
    """``torch.where(condition, input, other)``; with only ``condition``, a tuple of index
    tensors, one per dimension (``torch.nonzero(condition, as_tuple=True)``)."""
    if input is None and other is None:
        cond = convert_to_tensor(condition)
        coords = np.nonzero(_C.detach(cond)._numpy().astype(bool))
        return tuple(convert_to_tensor(c.astype(np.int64)).to(device=cond._device_name)
                     for c in coords)
    return _array_ops.where(condition, input, other)


def range(start=0, end=None, step=1, dtype=None, device=None, requires_grad=False):  # noqa: A001
    """``torch.range(start, end, step=1)``: deprecated in PyTorch, and unlike ``arange`` (and
    ``tf.range``) it includes ``end``; float32 by default."""
    if end is None:
        raise TypeError("range() missing required argument 'end'")
    if step == 0 or (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    count = int(np.floor((end - start) / step)) + 1
    values = start + step * np.arange(count, dtype=np.float64)
    return _leaf(tensor(values.astype(np.float32), dtype=dtype or "float32", device=device),
                 requires_grad)


def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """``torch.norm(input, p='fro', dim=None, keepdim=False)`` (Frobenius / 2-norm)."""
    return convert_to_tensor(input).norm(p, dim, keepdim)
