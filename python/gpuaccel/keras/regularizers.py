"""``gpuaccel.keras.regularizers``: Keras 3's weight penalties (L1, L2, L1L2,
OrthogonalRegularizer), ``get``/``serialize``/``deserialize``.

Why: Keras models add ``kernel_regularizer=keras.regularizers.l2(1e-4)`` to their weights, and
the penalty joins the loss. Each regularizer here is Keras's formula
(keras/src/regularizers/regularizers.py) written with gpuaccel's differentiable ops, so calling
it inside a traced Python layer records it into the C++ step. ``add_weight(regularizer=...)``
of a Python layer adds the weight's penalty to the layer's losses on every call, as Keras does
(keras/_python_layer.py).
"""
import math

import numpy as np

from .. import _C
from .._convert import convert_to_tensor
from .._creation import eye
from ..linalg import matmul
from .._array_ops import transpose
from ._registry import KerasObjectRegistry

__all__ = ["Regularizer", "L1", "L2", "L1L2", "OrthogonalRegularizer", "l1", "l2", "l1_l2",
           "orthogonal_regularizer", "get", "serialize", "deserialize"]

_EPSILON = 1e-7  # keras.backend.epsilon()


def _non_negative(value, name):
    if isinstance(value, bool) or not isinstance(value, (float, int)) or \
            math.isinf(value) or math.isnan(value) or value < 0:
        raise ValueError(f"Invalid value for argument {name}: expected a non-negative float."
                         f"Received: {name}={value}")
    return float(value)


def _total(x):
    return _C.reduce("sum", x, None, False)


def _scaled(factor, x):
    return _C.binary("mul", _C.scalar_like(float(factor), x), x)


class Regularizer:
    """Keras's base: ``__call__(x)`` returns the scalar penalty of weight ``x``."""

    def __call__(self, x):
        return 0.0

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def get_config(self):
        raise NotImplementedError(f"{self} does not implement get_config()")


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x^2)``."""

    def __init__(self, l1=0.0, l2=0.0):
        self.l1 = _non_negative(0.0 if l1 is None else l1, "l1")
        self.l2 = _non_negative(0.0 if l2 is None else l2, "l2")

    def __call__(self, x):
        x = convert_to_tensor(x)
        penalty = _C.scalar_like(0.0, x)
        if self.l1 != 0.0:
            penalty = _C.binary("add", penalty, _scaled(self.l1, _total(_C.unary("abs", x))))
        if self.l2 != 0.0:
            penalty = _C.binary("add", penalty, _scaled(self.l2, _total(_C.unary("square", x))))
        return penalty

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``l1 * sum(|x|)``."""

    def __init__(self, l1=0.01):
        self.l1 = _non_negative(0.01 if l1 is None else l1, "l1")

    def __call__(self, x):
        return _scaled(self.l1, _total(_C.unary("abs", convert_to_tensor(x))))

    def get_config(self):
        return {"l1": float(np.float32(self.l1))}  # Keras keeps it as a float32 tensor


class L2(Regularizer):
    """``l2 * sum(x^2)``."""

    def __init__(self, l2=0.01):
        self.l2 = _non_negative(0.01 if l2 is None else l2, "l2")

    def __call__(self, x):
        return _scaled(self.l2, _total(_C.unary("square", convert_to_tensor(x))))

    def get_config(self):
        return {"l2": self.l2}


class OrthogonalRegularizer(Regularizer):
    """``factor * mean |cosine|`` over the pairs of rows (or columns) of a 2D weight: pushes
    them towards orthogonality."""

    def __init__(self, factor=0.01, mode="rows"):
        self.factor = _non_negative(factor, "factor")
        if mode not in {"rows", "columns"}:
            raise ValueError("Invalid value for argument `mode`. Expected one of "
                             f'{{"rows", "columns"}}. Received: mode={mode}')
        self.mode = mode

    def __call__(self, inputs):
        x = convert_to_tensor(inputs)
        if len(x.shape) != 2:
            raise ValueError("Inputs to OrthogonalRegularizer must have rank 2. Received: "
                             f"inputs.shape={tuple(x.shape)}")
        axis = 1 if self.mode == "rows" else 0
        # Keras's normalize: x * min(rsqrt(sum(x^2)), 1 / epsilon) along the axis.
        square_sum = _C.reduce("sum", _C.unary("square", x), [axis], True)
        inverse_norm = _C.binary("minimum", _C.unary("rsqrt", square_sum),
                                 _C.scalar_like(1.0 / _EPSILON, x))
        x = _C.binary("mul", x, inverse_norm)
        if self.mode == "rows":
            product, size = matmul(x, transpose(x)), x.shape[0]
        else:
            product, size = matmul(transpose(x), x), x.shape[1]
        off_diagonal = _C.binary("mul", product, _C.binary(
            "sub", _C.scalar_like(1.0, product), eye(size)))
        pairs = size * (size - 1.0) / 2.0
        return _scaled(self.factor * 0.5 / pairs, _total(_C.unary("abs", off_diagonal)))

    def get_config(self):
        return {"factor": float(np.float32(self.factor)), "mode": self.mode}  # as Keras


l1, l2, l1_l2, orthogonal_regularizer = L1, L2, L1L2, OrthogonalRegularizer

# Keras's ALL_OBJECTS_DICT: class names and their snake_case ('l1l2' for L1L2), plus the
# namespace's aliases.
_BY_NAME = {"Regularizer": Regularizer, "regularizer": Regularizer, "L1": L1, "l1": L1,
            "L2": L2, "l2": L2, "L1L2": L1L2, "l1l2": L1L2, "l1_l2": L1L2,
            "OrthogonalRegularizer": OrthogonalRegularizer,
            "orthogonal_regularizer": OrthogonalRegularizer}


_REGISTRY = KerasObjectRegistry("regularizer", "keras.regularizers", Regularizer, _BY_NAME)


def serialize(regularizer):
    """Keras's dict: module, class_name, config, registered_name."""
    return _REGISTRY.serialize(regularizer)


def deserialize(config, custom_objects=None):
    """A regularizer from Keras's dict or a name."""
    return _REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """None -> None; a name -> a new instance with the defaults; a dict -> deserialize; a
    regularizer or callable -> itself (a class -> an instance)."""
    return _REGISTRY.get(identifier)
