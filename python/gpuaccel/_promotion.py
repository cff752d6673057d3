"""Operands of binary ops: how Python numbers, NumPy scalars and arrays, and lists meet a tensor.

The dtype rule itself (PyTorch's type promotion) is owned by the C++ core
(``cpp/ops/type_promotion.h``): every binary op promotes its two tensors there, and
``_C.scalar_operand`` turns a Python number into the 0-d tensor that rule asks for. This module
only decides what *kind* of operand a Python value is, so every face (operators,
``gpuaccel.math``, ``gpuaccel.nn``, the TensorFlow and PyTorch names) converts operands the
same way:

- a ``Tensor`` is used as it is;
- a Python or NumPy ``bool``/``int``/``float`` is a "wrapped number": it does not widen the
  tensor's dtype within its category (``float16_tensor * 0.5`` stays float16) but lifts it to
  a higher one (``int_tensor * 0.5`` is float32); a value the result dtype cannot hold
  (``int32_tensor + 2**40``) is an ``InvalidArgumentError``, never a wrapped or saturated value;
- a NumPy array or a (nested) list/tuple becomes a tensor of its own dtype on the other
  operand's device (a list of Python integers is int32 when they fit, as TensorFlow converts
  it: ``python_integer_dtype``), then promotes like a tensor; float64 becomes float32 (gpuaccel's default
  float) unless the other operand is float64, whose precision it then keeps.

Use ``as_operand(value, like)`` for one operand next to a tensor and ``as_operands(x, y)`` when
either side may be a non-tensor (``gpuaccel.math.maximum(2.5, t)``).
"""
import numbers

import numpy as np

from . import _C
from ._int_range import INT32_MAX, INT32_MIN
from .dtypes import as_dtype

Tensor = _C.Tensor


_NUMBER_TYPES = (bool, numbers.Real, np.bool_, np.integer, np.floating)


def python_integer_dtype(value):
    """TensorFlow's dtype for Python integers: 'int32' when every one of them fits, 'int64' when
    one does not (``tf.constant([1, 2])`` is int32, ``tf.constant(2**40)`` int64); None when
    ``value`` (a number or nested lists/tuples) holds anything else: floats, only bools, NumPy
    data (whose own dtype stands), tensors."""
    leaves, pending, integers = [], [value], False
    while pending:
        item = pending.pop()
        if isinstance(item, (list, tuple)):
            pending.extend(item)
        elif isinstance(item, bool):
            continue
        elif type(item) is int:  # noqa: E721 - not a NumPy integer, not a bool subclass
            integers = True
            leaves.append(item)
        else:
            return None
    if not integers:
        return None
    low, high = INT32_MIN, INT32_MAX
    return "int32" if all(low <= v <= high for v in leaves) else "int64"


def array_to_tensor(value, device=None, keep_float64=False):
    """A NumPy array or nested list as a tensor of its own dtype (float64 -> float32 unless
    ``keep_float64``; Python integers int32 when they fit, as TF converts them)."""
    array = np.asarray(value)
    dtype = ("float64" if keep_float64 and array.dtype == np.float64 else
             None if isinstance(value, np.ndarray) else python_integer_dtype(value))
    return _C.tensor_from_numpy(array, device, dtype, True)


def as_operand(value, like, op="binary"):
    """``value`` as the tensor operand of a binary op whose other operand is tensor ``like``.

    Returns NotImplemented for values that are no operand (so Python's operator protocol can
    try the other side, and raise its own TypeError)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _NUMBER_TYPES):
        return _C.scalar_operand(value, like, op)
    if isinstance(value, (np.ndarray, list, tuple)):
        return array_to_tensor(value, like._device_name, like._dtype_name == "float64")
    return NotImplemented


def as_assigned_value(value, target):
    """``value`` for ``target[...] = value``: numbers in target's dtype (refused when it cannot
    hold them); arrays and lists as tensors (the copy converts them)."""
    if isinstance(value, Tensor):
        return value
    if isinstance(value, _NUMBER_TYPES):
        return _C.scalar_operand(value, target, "Assign", True)
    if isinstance(value, (np.ndarray, list, tuple)):
        return array_to_tensor(value, target._device_name, target._dtype_name == "float64")
    raise TypeError(f"[Assign] the value must be a tensor, a number, a NumPy array or a list, "
                    f"got {type(value).__name__} {value!r}")


def as_operands(x, y, op="binary", names=("x", "y")):
    """Both operands of a binary function as tensors: a non-tensor side converts next to the
    tensor side; when neither is a tensor, ``x`` becomes one first (NumPy's defaults: Python
    ints int64, floats float32) and ``y`` follows it."""
    if not isinstance(x, Tensor):
        if isinstance(y, Tensor):
            converted = as_operand(x, y, op)
            if converted is NotImplemented:
                raise _not_an_operand(op, names[0], x)
            return converted, y
        x = array_to_tensor(_check_convertible(x, op, names[0]))
    converted = as_operand(y, x, op)
    if converted is NotImplemented:
        raise _not_an_operand(op, names[1], y)
    return x, converted


def as_tensor(value, op, name, dtype=None, device=None):
    """A tensor argument that may also be given as a NumPy array, a list or a number."""
    if isinstance(value, Tensor):
        return value
    tensor = array_to_tensor(_check_convertible(value, op, name), device,
                             dtype is not None and as_dtype(dtype).name == "float64")
    return tensor if dtype is None else _C.cast(tensor, dtype)


def _check_convertible(value, op, name):
    if isinstance(value, (bool, numbers.Real, np.bool_, np.number, np.ndarray, list, tuple)):
        return value
    raise _not_an_operand(op, name, value)


def _not_an_operand(op, name, value):
    return TypeError(f"[{op}] {name} must be a tensor, a NumPy array, a list or a number, "
                     f"got {type(value).__name__} {value!r}")
