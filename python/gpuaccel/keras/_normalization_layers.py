"""Keras's normalization layers that have no C++ layer (GroupNormalization, RMSNormalization,
UnitNormalization), written in Python from gpuaccel's reductions and element-wise ops and traced
once per input signature into the C++ step (_python_layer.py). BatchNormalization and
LayerNormalization are C++ layers. Like those, they normalize over the last (channels) axis
only."""
import numbers

from .. import _C
from . import _layer_extras
from ._layer_base import Layer


def _last_axis(layer_name, axis):
    if isinstance(axis, (list, tuple)) and len(axis) == 1:
        axis = axis[0]
    if axis != -1:
        raise NotImplementedError(f"{layer_name}: only axis=-1 (the channels axis) is supported "
                                  f"yet; received axis={axis!r}")
    return -1


def _positive_float(value, arg, layer_name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value <= 0:
        raise ValueError(f"{layer_name}: `{arg}` must be a positive float, received "
                         f"{arg}={value!r}")
    return float(value)


def _mean_and_variance(x, axes):
    """Per-group mean and (biased) variance over ``axes``, kept for broadcasting."""
    mean = _C.reduce("mean", x, axes, True)
    variance = _C.reduce("mean", _C.unary("square", _C.binary("sub", x, mean)), axes, True)
    return mean, variance


class GroupNormalization(Layer):
    """``keras.layers.GroupNormalization(groups=32, axis=-1, epsilon=1e-3, center=True,
    scale=True)``: the channels split into ``groups`` groups, each normalized over its channels
    and all spatial positions of one example, then scaled by ``gamma`` and shifted by ``beta``
    (one per channel)."""

    def __init__(self, groups=32, axis=-1, epsilon=1e-3, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", beta_regularizer=None,
                 gamma_regularizer=None, beta_constraint=None, gamma_constraint=None, **kwargs):
        # a Python layer: add_weight takes them (the Extras only resolve and serialize them)
        self._extras = _layer_extras.Extras.of_weights(
            beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer,
            beta_constraint=beta_constraint, gamma_constraint=gamma_constraint)
        if isinstance(groups, bool) or not isinstance(groups, numbers.Integral) or groups < 1:
            raise ValueError(f"GroupNormalization: `groups` must be a positive integer, "
                             f"received groups={groups!r}")
        self.groups = int(groups)
        self.axis = _last_axis("GroupNormalization", axis)
        self.epsilon = _positive_float(epsilon, "epsilon", "GroupNormalization")
        self.center, self.scale = bool(center), bool(scale)
        self.beta_initializer, self.gamma_initializer = beta_initializer, gamma_initializer
        super().__init__(**kwargs)

    def build(self, input_shape):
        channels = input_shape[-1]
        if channels is None:
            raise ValueError(f"Axis {self.axis} of input tensor should have a defined dimension "
                             f"but the layer received an input with shape {input_shape}.")
        if channels < self.groups:
            raise ValueError(f"Number of groups ({self.groups}) cannot be more than the number "
                             f"of channels ({channels}).")
        if channels % self.groups:
            raise ValueError(f"Number of groups ({self.groups}) must be a multiple of the number "
                             f"of channels ({channels}).")
        if self.scale:
            self.gamma = self.add_weight(shape=(channels,), initializer=self.gamma_initializer,
                                         regularizer=self._extras.regularizers["gamma"],
                                         constraint=self._extras.constraints["gamma"],
                                         name="gamma")
        if self.center:
            self.beta = self.add_weight(shape=(channels,), initializer=self.beta_initializer,
                                        regularizer=self._extras.regularizers["beta"],
                                        constraint=self._extras.constraints["beta"], name="beta")

    def call(self, inputs):
        shape = list(inputs.shape)
        channels = shape[-1]
        grouped = _C.reshape(inputs, shape[:-1] + [self.groups, channels // self.groups])
        axes = list(range(1, len(shape) - 1)) + [len(shape)]  # all but the batch and the group
        mean, variance = _mean_and_variance(grouped, axes)
        inverse = _C.unary("rsqrt", _C.binary("add", variance,
                                              _C.scalar_like(self.epsilon, variance)))
        normalized = _C.reshape(_C.binary("mul", _C.binary("sub", grouped, mean), inverse), shape)
        if self.scale:
            normalized = _C.binary("mul", normalized, self.gamma)
        if self.center:
            normalized = _C.binary("add", normalized, self.beta)
        return normalized

    def _layer_config(self):
        return {"groups": self.groups, "axis": self.axis, "epsilon": self.epsilon,
                "center": self.center, "scale": self.scale,
                "beta_initializer": self.beta_initializer,
                "gamma_initializer": self.gamma_initializer, **self._extras.config()}


class RMSNormalization(Layer):
    """``keras.layers.RMSNormalization(axis=-1, epsilon=1e-6)``:
    x / sqrt(mean(x², last axis) + epsilon) * scale, with a trainable ``scale`` per channel."""

    def __init__(self, axis=-1, epsilon=1e-6, **kwargs):
        self.axis = _last_axis("RMSNormalization", axis)
        self.epsilon = _positive_float(epsilon, "epsilon", "RMSNormalization")
        super().__init__(**kwargs)

    def build(self, input_shape):
        self.scale = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="scale")

    def call(self, inputs):
        mean_square = _C.reduce("mean", _C.unary("square", inputs), [-1], True)
        inverse = _C.unary("rsqrt", _C.binary("add", mean_square,
                                              _C.scalar_like(self.epsilon, mean_square)))
        return _C.binary("mul", _C.binary("mul", inputs, inverse), self.scale)

    def _layer_config(self):
        # Keras's build turns the axis into a list, and its config shows it so.
        return {"axis": [self.axis] if self.built else self.axis, "epsilon": self.epsilon}


class UnitNormalization(Layer):
    """``keras.layers.UnitNormalization(axis=-1)``: each vector along the last axis divided by
    its L2 norm (at least 1e-12, as Keras)."""

    def __init__(self, axis=-1, **kwargs):
        self.axis = _last_axis("UnitNormalization", axis)
        super().__init__(**kwargs)

    def call(self, inputs):
        norm = _C.unary("sqrt", _C.reduce("sum", _C.unary("square", inputs), [-1], True))
        return _C.binary("div", inputs, _C.binary("maximum", norm, _C.scalar_like(1e-12, norm)))

    def _layer_config(self):
        return {"axis": self.axis}
