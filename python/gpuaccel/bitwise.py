"""``tf.bitwise``: and/or/xor/invert and the shifts of integer tensors, on the bitwise kernel.

TensorFlow's rules, which differ from PyTorch's (``gpuaccel.torch``'s operators): both operands
must already share one dtype of int32, int64 or uint8 (a Python number takes the tensor's), bool
is refused, and a shift count is clamped to [0, bits - 1] (TF's kernels do so: ``1 << 40`` in
int32 is ``1 << 31``), where the kernel itself would shift every bit out. ``keras.ops`` uses the
same shifts (its TensorFlow backend calls these).
"""
import numbers

import numpy as np

from . import _C
from .errors import InvalidArgumentError
from ._promotion import array_to_tensor
from ._tensor import Tensor
from .dtypes import INTEGER_NAMES

__all__ = ["bitwise_and", "bitwise_or", "bitwise_xor", "invert", "left_shift", "right_shift"]

_ALLOWED = INTEGER_NAMES
_BITS = {name: 8 * np.dtype(name).itemsize for name in INTEGER_NAMES}


def _operand(value, like, tf_op):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (bool, numbers.Number, np.generic)) and like is not None:
        return _C.scalar_operand(value, like, tf_op, True)  # in like's dtype, refused if it cannot
    return array_to_tensor(value, None if like is None else like._device_name)


def _checked(x, y, tf_op):
    x = _operand(x, y if isinstance(y, Tensor) else None, tf_op)
    y = _operand(y, x, tf_op)
    for t in (x, y):
        if t._dtype_name not in _ALLOWED:
            raise InvalidArgumentError(
                f"Value for attr 'T' of {t._dtype_name} is not in the list of allowed values: "
                f"{', '.join(_ALLOWED)} [Op:{tf_op}]")
    if x._dtype_name != y._dtype_name:
        raise InvalidArgumentError(
            f"cannot compute {tf_op} as input #1(zero-based) was expected to be a "
            f"{x._dtype_name} tensor but is a {y._dtype_name} tensor [Op:{tf_op}]")
    return x, y


def clamped_shift_counts(counts):
    """TensorFlow's shift counts: clamped to [0, bits - 1] of their (integer) dtype."""
    bits = _BITS[counts._dtype_name]
    wide = _C.cast(counts, "int64")
    low, high = (_C.scalar_operand(v, wide, "Assign", True) for v in (0, bits - 1))
    return _C.cast(_C.binary("minimum", _C.binary("maximum", wide, low), high), counts._dtype_name)


def bitwise_and(x, y, name=None):
    return _C.bitwise("and", *_checked(x, y, "BitwiseAnd"))


def bitwise_or(x, y, name=None):
    return _C.bitwise("or", *_checked(x, y, "BitwiseOr"))


def bitwise_xor(x, y, name=None):
    return _C.bitwise("xor", *_checked(x, y, "BitwiseXor"))


def invert(x, name=None):
    x, _ = _checked(x, x, "Invert")
    return _C.bitwise_not(x)


def left_shift(x, y, name=None):
    x, y = _checked(x, y, "LeftShift")
    return _C.bitwise("left_shift", x, clamped_shift_counts(y))


def right_shift(x, y, name=None):
    x, y = _checked(x, y, "RightShift")
    return _C.bitwise("right_shift", x, clamped_shift_counts(y))
