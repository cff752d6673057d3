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
from ._int_range import INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN, check_int, check_range
from ._tensor import _device_name, _dtype_name, _shape_arg
from ._torch_generator import drawing_from
from .dtypes import float32
from .math import _into

__all__ = ["zeros", "ones", "full", "empty", "rand", "randn", "randint", "eye", "linspace",
           "full_like", "rand_like", "randn_like", "empty_like", "randint_like"]


def _leaf(t, requires_grad):
    if requires_grad:
        if not t.dtype.is_floating_point:
            raise RuntimeError("Only Tensors of floating point dtype can require gradients")
        t.requires_grad = True
    return t


def zeros(*shape, dtype=float32, device=None, requires_grad=False, name=None, out=None):
    """``torch.zeros(2, 3)`` / ``tf.zeros([2, 3])``; torch's ``out=`` (here and in the other
    factories) writes the values into that tensor and returns it."""
    return _into(_leaf(_tensor.zeros(*shape, dtype=dtype or float32, device=device),
                       requires_grad), out)


def ones(*shape, dtype=float32, device=None, requires_grad=False, name=None, out=None):
    return _into(_leaf(_tensor.ones(*shape, dtype=dtype or float32, device=device),
                       requires_grad), out)


def empty(*shape, dtype=float32, device=None, requires_grad=False, out=None):
    """``torch.empty``: zeros here (reading uninitialised memory teaches nothing)."""
    return zeros(*shape, dtype=dtype, device=device, requires_grad=requires_grad, out=out)


def full(shape, fill_value, dtype=None, device=None, requires_grad=False, out=None):
    return _into(_leaf(_tensor.full(shape, fill_value, dtype=dtype, device=device),
                       requires_grad), out)


def rand(*shape, dtype=float32, device=None, requires_grad=False, generator=None, out=None):
    """Uniform [0, 1) (``torch.rand``), from ``generator`` when one is given."""
    with drawing_from(generator, "rand"):
        values = _tensor.rand(*shape, dtype=dtype or float32, device=device)
    return _into(_leaf(values, requires_grad), out)


def randn(*shape, dtype=float32, device=None, requires_grad=False, generator=None, out=None):
    """Standard normal (``torch.randn``), from ``generator`` when one is given."""
    with drawing_from(generator, "randn"):
        values = _tensor.randn(*shape, dtype=dtype or float32, device=device)
    return _into(_leaf(values, requires_grad), out)


# A float32 uniform carries 24 random bits: spans up to 2**24 are drawn from it on the device;
# wider ones (where u * span could only reach every 2**k-th integer) come from NumPy's integer
# generator, seeded from gpuaccel's, so set_seed still repeats them.
_DEVICE_SPAN = 1 << 24
_INTEGER_RANGES = {"uint8": (0, 255), "int8": (-128, 127), "int16": (-32768, 32767),
                   "int32": (INT32_MIN, INT32_MAX),
                   "int64": (INT64_MIN, INT64_MAX)}


def randint(low, high=None, size=None, dtype="int64", device=None, generator=None):
    """``torch.randint(low=0, high, size)``: integers in [low, high), uniformly (from
    ``generator`` when one is given)."""
    with drawing_from(generator, "randint"):
        return _randint(low, high, size, dtype, device)


def _randint(low, high, size, dtype, device):
    if size is None and isinstance(high, (tuple, list)):  # torch.randint(high, size)
        low, high, size = 0, low, high
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    low, high = check_int(low, "randint: low"), check_int(high, "randint: high")
    if not high > low:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    name = _dtype_name(dtype)
    if name in _INTEGER_RANGES:  # as torch: the values must fit the dtype, not wrap around
        check_range(low, f"randint: low (for {name})", *_INTEGER_RANGES[name])
        check_range(high - 1, f"randint: high - 1 (for {name})", *_INTEGER_RANGES[name])
    shape = _shape_arg(tuple(size))
    span = high - low
    if span > _DEVICE_SPAN:
        seed = int(_tensor.rand(2).numpy().astype(np.float64) @ np.array([2.0**24, 1.0]) * 2**24)
        values = np.random.default_rng(seed).integers(low, high, size=shape, dtype=np.int64)
        out = _tensor.tensor(values, device=device)
        return _C.cast(out, name) if name != "int64" else out
    u = _tensor.rand(*shape, device=device)
    # u * span is non-negative, so the cast's truncation is a floor; the minimum guards the
    # rounding of u * span up to span itself.
    scaled = _C.binary("mul", u, _C.scalar_like(float(span), u))
    floored = _C.cast(scaled, "int64")
    ints = _C.binary("minimum", floored, _C.scalar_like(float(span - 1), floored))
    out = _C.binary("add", ints, _C.scalar_like(float(low), ints))
    return _C.cast(out, name) if name != "int64" else out


def eye(num_rows, num_columns=None, batch_shape=None, dtype=float32, name=None, device=None,
        requires_grad=False, m=None):
    """``tf.eye(num_rows, num_columns=None)`` / ``torch.eye(n, m=None)``: the identity matrix."""
    cols = num_columns if num_columns is not None else (m if m is not None else num_rows)
    for value, arg in ((num_rows, "num_rows"), (cols, "num_columns")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
            raise ValueError(f"{arg} must be a non-negative integer, got {value!r}")
    # made by the core (an index comparison), so a size too large is its typed error
    check_range(int(num_rows) * int(cols), "eye: num_rows x num_columns", 0)
    rows = _C.reshape(_tensor.arange(int(num_rows), device=device), [int(num_rows), 1])
    columns = _C.reshape(_tensor.arange(int(cols), device=device), [1, int(cols)])
    out = _C.cast(_C.binary("equal", rows, columns), _dtype_name(dtype or float32))
    if batch_shape is not None:
        out = _C.broadcast_to(out, _shape_arg(tuple(batch_shape)) + list(out.shape))
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
    # the tensor first: a count too large for memory is the allocator's typed error
    out = _tensor.zeros(check_int(num, "num", 0), dtype=dtype or float32, device=device)
    values = np.linspace(float(start), float(stop), int(num), dtype=np.float32)
    _C.copy_into(_tensor.tensor(values, dtype=out.dtype, device=device), out)
    return _leaf(out, requires_grad)


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
