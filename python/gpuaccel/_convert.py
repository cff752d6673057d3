"""One door from NumPy arrays, lists and Python numbers into tensors for the functional ops.

TensorFlow's and PyTorch's functions accept ``np.ndarray``, nested lists and scalars wherever a
tensor goes; every op of the TF/PyTorch faces converts its inputs here, and binary ops pair their
operands through ``_promotion`` so scalar/array promotion has one owner.
"""
import numbers

import numpy as np

from . import _tensor
from ._promotion import as_operands, python_integer_dtype
from ._stacking import stack_tensors
from ._tensor import Tensor


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """``tf.convert_to_tensor``: a tensor for ``value`` (returned as is when it already is one
    of ``dtype``). NumPy float64 and Python floats become float32 unless ``dtype`` is float64
    (gpuaccel's default float, as Keras's floatx); Python integers are int32 when they fit (TF's
    rule, ``python_integer_dtype``)."""
    if isinstance(value, Tensor):
        if dtype is not None and value.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype} for Tensor with dtype "
                             f"{value.dtype.name}: {value!r}")
        return value
    if not isinstance(value, (np.ndarray, np.generic, numbers.Number, list, tuple)):
        raise TypeError(f"Failed to convert an object of type {type(value).__name__} to a tensor: "
                        f"expected a tensor, a NumPy array, a list or a number")
    if dtype is None and dtype_hint is not None and not isinstance(value, np.ndarray):
        dtype = dtype_hint
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in value):
        # a list of tensors packs like tf.stack
        return stack_tensors([convert_to_tensor(v, dtype) for v in value], 0)
    return _tensor.tensor(value, dtype=dtype or python_integer_dtype(value))


def as_tensors(a, b):
    """Both operands of a binary op as tensors, promoted by the one owner of the rule
    (``_promotion.as_operands``: a non-tensor side converts next to the tensor side)."""
    return as_operands(a, b)
