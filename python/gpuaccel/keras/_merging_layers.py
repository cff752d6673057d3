"""Keras's merging layers: Add and Concatenate are C++ layers (cpp/nn/merging.*); the ones that
have no C++ layer (Subtract, Multiply, Average, Maximum, Minimum, Dot) are written in Python
from gpuaccel's element-wise ops and einsum, traced once per input signature into the C++ step
(_python_layer.py). Also Keras's functional forms of all eight (``keras.layers.add(inputs)`` is
``Add()(inputs)``)."""
import functools
import numbers

from .. import _C
from .. import linalg as _linalg
from .. import math as _math
from .._int_range import check_range
from ._layer_base import Layer, _cpp_layers


class _Merge(Layer):
    """Merging layers take a list of tensors: ``Add()([a, b])``."""

    def _call_inputs(self, inputs, **kwargs):
        kwargs.pop("mask", None)
        if kwargs:
            raise TypeError(f"{type(self).__name__}.call() got unexpected keyword arguments "
                            f"{sorted(kwargs)}")
        if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
            raise ValueError(f"A merge layer should be called on a list of at least 2 inputs. "
                             f"Got {len(inputs) if isinstance(inputs, (list, tuple)) else 1} "
                             "inputs.")
        return list(inputs)


class Add(_Merge):
    """``keras.layers.Add()``: the element-wise sum of same-shaped inputs."""

    def _make_cpp(self):
        return _cpp_layers.Add(self.name)


class Concatenate(_Merge):
    """``keras.layers.Concatenate(axis=-1)``."""

    def __init__(self, axis=-1, **kwargs):
        if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
            raise TypeError(f"Concatenate: axis must be an int, got {axis!r}")
        self.axis = check_range(int(axis), "axis")
        super().__init__(**kwargs)

    def _make_cpp(self):
        return _cpp_layers.Concatenate(self.name, self.axis)

    def _layer_config(self):
        return {"axis": self.axis}


def _fold(op, inputs):
    return functools.reduce(lambda a, b: _C.binary(op, a, b), inputs)


class _TwoInputMerge(_Merge):
    """A merge layer defined on exactly two inputs; ``_keras_name`` names it in the error (as
    Keras does, also for a user's subclass)."""
    _keras_name = None

    def _call_inputs(self, inputs, **kwargs):
        inputs = super()._call_inputs(inputs, **kwargs)
        if len(inputs) != 2:
            raise ValueError(f"A `{self._keras_name}` layer should be called on exactly 2 "
                             f"inputs. Received: {len(inputs)} inputs")
        return inputs


class Subtract(_TwoInputMerge):
    """``keras.layers.Subtract()([a, b])``: a - b."""
    _keras_name = "Subtract"

    def call(self, inputs):
        return _C.binary("sub", inputs[0], inputs[1])


class Multiply(_Merge):
    """``keras.layers.Multiply()``: the element-wise product of its inputs."""

    def call(self, inputs):
        return _fold("mul", inputs)


class Maximum(_Merge):
    """``keras.layers.Maximum()``: the element-wise maximum of its inputs."""

    def call(self, inputs):
        return _fold("maximum", inputs)


class Minimum(_Merge):
    """``keras.layers.Minimum()``: the element-wise minimum of its inputs."""

    def call(self, inputs):
        return _fold("minimum", inputs)


class Average(_Merge):
    """``keras.layers.Average()``: the element-wise mean of its inputs."""

    def call(self, inputs):
        total = _fold("add", inputs)
        return _C.binary("mul", total, _C.scalar_like(1.0 / len(inputs), total))


class Dot(_TwoInputMerge):
    """``keras.layers.Dot(axes, normalize=False)([a, b])``: per example, the sum of products
    of a's axis ``axes[0]`` with b's axis ``axes[1]`` (Keras's batch_dot); the result keeps a's
    other axes, then b's, and is (batch, 1) when both are vectors. ``normalize=True`` L2-
    normalizes both along those axes first (cosine similarity)."""
    _keras_name = "Dot"

    def __init__(self, axes, normalize=False, **kwargs):
        if isinstance(axes, numbers.Integral) and not isinstance(axes, bool):
            pair = (int(axes), int(axes))
        elif isinstance(axes, (list, tuple)) and len(axes) == 2 and all(
                isinstance(a, numbers.Integral) and not isinstance(a, bool) for a in axes):
            pair = (int(axes[0]), int(axes[1]))
        else:
            raise TypeError("Invalid type/value for `axes` argument. Expected an integer or a "
                            f"list/tuple of 2 integers. Received: axes={axes!r}")
        self.axes = axes if isinstance(axes, numbers.Integral) else tuple(axes)
        self._axis_pair = pair
        self.normalize = bool(normalize)
        super().__init__(**kwargs)

    def call(self, inputs):
        a, b = inputs
        axis_a, axis_b = (axis % t.ndim for axis, t in zip(self._axis_pair, (a, b)))
        if axis_a == 0 or axis_b == 0:
            raise ValueError(f"Dot: the batch axis cannot be contracted; received axes="
                             f"{self.axes} for inputs of shapes {tuple(a.shape)} and "
                             f"{tuple(b.shape)}")
        if a.shape[axis_a] != b.shape[axis_b]:
            raise ValueError(f"Incompatible input shapes: axis values {a.shape[axis_a]} (at axis "
                             f"{axis_a}) != {b.shape[axis_b]} (at axis {axis_b}). Full input "
                             f"shapes: {tuple(a.shape)}, {tuple(b.shape)}")
        if self.normalize:
            a = _math.l2_normalize(a, axis=axis_a)
            b = _math.l2_normalize(b, axis=axis_b)
        letters = iter("bcdefghijklmnopqrstuvwxy")
        a_sub = ["a"] + [next(letters) for _ in range(a.ndim - 1)]
        b_sub = ["a"] + [next(letters) for _ in range(b.ndim - 1)]
        b_sub[axis_b] = "z"
        a_sub[axis_a] = "z"
        out_sub = ["a"] + [s for s in a_sub[1:] if s != "z"] + [s for s in b_sub[1:] if s != "z"]
        result = _linalg.einsum(f"{''.join(a_sub)},{''.join(b_sub)}->{''.join(out_sub)}", a, b)
        if result.ndim == 1:
            result = _C.reshape(result, [result.shape[0], 1])
        return result

    def _layer_config(self):
        return {"axes": self.axes, "normalize": self.normalize}


def _functional(layer_class):
    """Keras's lower-case form of a merging layer: ``name(inputs, **kwargs)`` is
    ``LayerClass(**kwargs)(inputs)``."""
    def merge(inputs, **kwargs):
        return layer_class(**kwargs)(inputs)
    merge.__name__ = merge.__qualname__ = layer_class.__name__.lower()
    merge.__doc__ = (f"``keras.layers.{merge.__name__}(inputs)``: "
                     f"``{layer_class.__name__}(**kwargs)(inputs)``.")
    return merge


add, subtract, multiply, average, maximum, minimum = map(
    _functional, (Add, Subtract, Multiply, Average, Maximum, Minimum))


def concatenate(inputs, axis=-1, **kwargs):
    """``keras.layers.concatenate(inputs, axis=-1)``: ``Concatenate(axis)(inputs)``."""
    return Concatenate(axis=axis, **kwargs)(inputs)


def dot(inputs, axes=-1, **kwargs):
    """``keras.layers.dot([a, b], axes=-1, normalize=False)``: ``Dot(axes)([a, b])``."""
    return Dot(axes=axes, **kwargs)(inputs)
