"""Creation functions with PyTorch's keyword arguments (``dtype=``, ``device=``,
``requires_grad=``) and TensorFlow's (``tf.eye``, ``tf.linspace``), over ``_tensor``'s creators.

``torch.randn(3, requires_grad=True)`` makes a leaf that collects ``.grad``; ``*_like`` functions
take the dtype and device of their argument unless told otherwise.
"""
import numbers

import numpy as np

from . import _C
from . import _tensor
from ._convert import convert_to_tensor
from ._tensor import _device_name, _dtype_name, _shape_arg
from .dtypes import float32

__all__ = ["zeros", "ones", "full", "empty", "rand", "randn", "randint", "eye", "linspace",
           "full_like", "rand_like", "randn_like", "empty_like", "randint_like"]


def _leaf(t, requires_grad):
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point dtype can require gradients")
        t.requires_grad = True
    return t


def zeros(*shape, dtype=float32, device=None, requires_grad=False, name=None):
    """``torch.zeros(2, 3)`` / ``tf.zeros([2, 3])``."""
    return _leaf(_tensor.zeros(*shape, dtype=dtype or float32, device=device), requires_grad)


def ones(*shape, dtype=float32, device=None, requires_grad=False, name=None):
    return _leaf(_tensor.ones(*shape, dtype=dtype or float32, device=device), requires_grad)


def empty(*shape, dtype=float32, device=None, requires_grad=False):
    """``torch.empty``: zeros here (reading uninitialised memory teaches nothing)."""
    return zeros(*shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full(shape, fill_value, dtype=None, device=None, requires_grad=False):
    return _leaf(_tensor.full(shape, fill_value, dtype=dtype, device=device), requires_grad)


def rand(*shape, dtype=float32, device=None, requires_grad=False):
    """Uniform [0, 1) (``torch.rand``)."""
    return _leaf(_tensor.rand(*shape, dtype=dtype or float32, device=device), requires_grad)


def randn(*shape, dtype=float32, device=None, requires_grad=False):
    """Standard normal (``torch.randn``)."""
    return _leaf(_tensor.randn(*shape, dtype=dtype or float32, device=device), requires_grad)


def randint(low, high=None, size=None, dtype="int64", device=None):
    """``torch.randint(low=0, high, size)``: integers in [low, high)."""
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    if not high > low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    u = _tensor.rand(*_shape_arg(tuple(size)), device=device)
    # u * span is non-negative, so the cast's truncation is a floor; the minimum guards the
    # rounding of u * span up to span itself.
    span = _C.binary("mul", u, _C.scalar_like(float(high - low), u))
    floored = _C.cast(span, "int64")
    ints = _C.binary("minimum", floored, _C.scalar_like(float(high - low - 1), floored))
    out = _C.binary("add", ints, _C.scalar_like(float(low), ints))
    return _C.cast(out, _dtype_name(dtype)) if _dtype_name(dtype) != "int64" else out


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None, device=None,
        requires_grad=False, m=None):
    """``tf.eye(num_rows, num_columns=None)`` / ``torch.eye(n, m=None)``: the identity matrix."""
    cols = num_columns if num_columns is not None else (m if m is not None else num_rows)
    for value, arg in ((num_rows, "num_rows"), (cols, "num_columns")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{arg} must be a non-negative integer, got {value!r}")
    array = np.eye(int(num_rows), int(cols), dtype=np.float32)
    if batch_shape is not None:
        array = np.broadcast_to(array, tuple(batch_shape) + array.shape).copy()
    out = _tensor.tensor(array, dtype=dtype or float32, device=device)
    return _leaf(out, requires_grad)


def linspace(start, stop=None, num=None, name=None, axis=0, end=None, steps=None, dtype=None,
             device=None, requires_grad=False):
    """``tf.linspace(start, stop, num)`` / ``torch.linspace(start, end, steps)``: ``num``
    evenly spaced values including both ends."""
    stop = end if stop is None else stop
    num = steps if num is None else num
    if stop is None or num is None:
        raise TypeError("linspace() needs start, stop (end) and num (steps)")
    if isinstance(num, bool) or not isinstance(num, numbers.Integral) or num < 0:
        raise ValueError(f"number of steps must be non-negative, got {num!r}")
    values = np.linspace(float(start), float(stop), int(num), dtype=np.float64)
    return _leaf(_tensor.tensor(values.astype(np.float32), dtype=dtype, device=device),
                 requires_grad)


def _like_args(input, dtype, device):
    x = convert_to_tensor(input)
    return x, _dtype_name(dtype) or x._dtype_name, _device_name(device) or x._device_name


def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    """``torch.full_like`` (and ``zeros_like``/``ones_like`` through it)."""
    x, dtype, device = _like_args(input, dtype, device)
    return _leaf(_C.tensor_full(list(x.shape), float(fill_value), dtype, device), requires_grad)


def empty_like(input, dtype=None, device=None, requires_grad=False):
    return full_like(input, 0.0, dtype=dtype, device=device, requires_grad=requires_grad)


def rand_like(input, dtype=None, device=None, requires_grad=False):
    """``torch.rand_like``: uniform [0, 1) with the input's shape, dtype and device."""
    x, dtype, device = _like_args(input, dtype, device)
    return _leaf(_C.tensor_random("uniform", list(x.shape), dtype, device), requires_grad)


def randn_like(input, dtype=None, device=None, requires_grad=False):
    x, dtype, device = _like_args(input, dtype, device)
    return _leaf(_C.tensor_random("normal", list(x.shape), dtype, device), requires_grad)


def randint_like(input, low=0, high=None, dtype=None, device=None):
    x = convert_to_tensor(input)
    out = randint(low, high, tuple(x.shape), dtype="int64", device=device or x._device_name)
    return _C.cast(out, _dtype_name(dtype) or x._dtype_name)
