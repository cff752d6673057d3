"""PyTorch's bitwise functions and operators (``&``, ``|``, ``^``, ``~``, ``<<``, ``>>``,
``torch.bitwise_*``) on the bitwise kernel.

PyTorch's rules: integer and bool tensors (bool only for and/or/xor/not), promoted like any
binary op (``bool & int32`` is int32, ``int32 | int64`` int64); a float operand is a
RuntimeError naming the kernel and the dtype as PyTorch words it. A shift count outside
[0, bits) shifts every bit out (PyTorch 2's definition; 1.13 leaves it to the CPU). The same
operators on the TensorFlow face's tensors mean the same (tf.Tensor's ``&`` is logical on bool
and bitwise on integers too).
"""
import numbers

import numpy as np

from . import _C
from ._promotion import as_operands

_TORCH_DTYPE_NAMES = {"float32": "Float", "float16": "Half", "bfloat16": "BFloat16", "float64": "Double",
                      "int8": "Char", "int16": "Short", "int32": "Int", "int64": "Long",
                      "uint8": "Byte", "bool": "Bool"}
# The name PyTorch's error gives each kernel ("bitwise_and_cpu" not implemented for 'Float').
_KERNEL_NAMES = {"and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
                 "left_shift": "lshift", "right_shift": "rshift"}
_SHIFTS = ("left_shift", "right_shift")


def _refuse_unless_defined(op, *tensors):
    common = tensors[0]._dtype_name if len(tensors) == 1 else _C.result_type(*tensors)
    if common.startswith(("float", "bfloat")) or (op in _SHIFTS and common == "bool"):
        device = "cuda" if tensors[0].device.type == "cuda" else "cpu"
        raise RuntimeError(f'"{_KERNEL_NAMES[op]}_{device}" not implemented for '
                           f"'{_TORCH_DTYPE_NAMES[common]}'")


def _binary(op):
    def fn(input, other):
        a, b = as_operands(input, other, _KERNEL_NAMES[op], ("input", "other"))
        _refuse_unless_defined(op, a, b)
        return _C.bitwise(op, a, b)
    fn.__name__ = fn.__qualname__ = _KERNEL_NAMES[op]
    return fn


bitwise_and = _binary("and")
bitwise_or = _binary("or")
bitwise_xor = _binary("xor")
bitwise_left_shift = _binary("left_shift")
bitwise_right_shift = _binary("right_shift")


def bitwise_not(input):
    """``torch.bitwise_not``: every bit flipped (logical not of a bool tensor)."""
    if input._dtype_name.startswith(("float", "bfloat")):
        device = "cuda" if input.device.type == "cuda" else "cpu"
        raise RuntimeError(f'"bitwise_not_{device}" not implemented for '
                           f"'{_TORCH_DTYPE_NAMES[input._dtype_name]}'")
    return _C.bitwise_not(input)


def _invert_operator(self):
    if self._dtype_name.startswith(("float", "bfloat")):
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return _C.bitwise_not(self)


def _operator(function, reflected=False):
    def method(self, other):
        if not isinstance(other, (_C.Tensor, bool, numbers.Number, np.generic, np.ndarray,
                                  list, tuple)):
            return NotImplemented
        return function(other, self) if reflected else function(self, other)
    return method


METHODS = {"bitwise_and": bitwise_and, "bitwise_or": bitwise_or, "bitwise_xor": bitwise_xor,
           "bitwise_not": bitwise_not, "bitwise_left_shift": bitwise_left_shift,
           "bitwise_right_shift": bitwise_right_shift}

OPERATORS = {"__and__": _operator(bitwise_and), "__rand__": _operator(bitwise_and, True),
             "__or__": _operator(bitwise_or), "__ror__": _operator(bitwise_or, True),
             "__xor__": _operator(bitwise_xor), "__rxor__": _operator(bitwise_xor, True),
             "__lshift__": _operator(bitwise_left_shift),
             "__rlshift__": _operator(bitwise_left_shift, True),
             "__rshift__": _operator(bitwise_right_shift),
             "__rrshift__": _operator(bitwise_right_shift, True),
             "__invert__": _invert_operator}
