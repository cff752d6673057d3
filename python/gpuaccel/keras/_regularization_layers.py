"""Keras's regularization layers that have no C++ layer (ActivityRegularization,
SpatialDropout1D/2D/3D, GaussianNoise, GaussianDropout, AlphaDropout), written in Python from
gpuaccel's ops and traced once per input signature into the C++ step (_python_layer.py).

Spatial dropout draws its mask with the dropout op on a (batch, 1, ..., channels) tensor of ones:
the dropout op is the one random op a trace replays (a fresh mask every step, from gpuaccel's
global generator), and the broadcast product drops whole feature maps, as Keras does.
"""
import numbers

from .. import _C
from . import _random_draws
from ._layer_base import Layer, _data_format


class ActivityRegularization(Layer):
    """``keras.layers.ActivityRegularization(l1=0.0, l2=0.0)``: the identity that adds
    (l1 * sum(|x|) + l2 * sum(x²)) / batch size to the model's loss, as Keras's activity
    regularizers do."""

    def __init__(self, l1=0.0, l2=0.0, **kwargs):
        for value, arg in ((l1, "l1"), (l2, "l2")):
            if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
                raise ValueError(f"ActivityRegularization: `{arg}` must be a non-negative float, "
                                 f"received {arg}={value!r}")
        self.l1, self.l2 = float(l1), float(l2)
        super().__init__(**kwargs)

    def call(self, inputs):
        penalty = None
        if self.l1:
            penalty = _C.binary("mul", _C.reduce("sum", _C.unary("abs", inputs), None, False),
                                _C.scalar_like(self.l1, inputs))
        if self.l2:
            squares = _C.binary("mul", _C.reduce("sum", _C.unary("square", inputs), None, False),
                                _C.scalar_like(self.l2, inputs))
            penalty = squares if penalty is None else _C.binary("add", penalty, squares)
        if penalty is not None:
            if inputs.ndim:  # Keras divides an activity penalty by the batch size
                penalty = _C.binary("mul", penalty, _C.scalar_like(1.0 / inputs.shape[0], penalty))
            self.add_loss(penalty)
        return inputs

    def _layer_config(self):
        return {"l1": self.l1, "l2": self.l2}


class _SpatialDropout(Layer):
    """Drops whole channels: one keep/drop draw per (example, channel), shared over the
    spatial axes of channels-last inputs of rank ``_rank``."""
    _rank = None

    def __init__(self, rate, seed=None, **kwargs):
        self.rate = _check_unit_interval(rate, "rate")
        self.seed = seed  # accepted as Dropout does; the mask comes from the global generator
        super().__init__(**kwargs)

    def call(self, inputs, training=None):
        if inputs.ndim != self._rank:
            raise ValueError(f"{type(self).__name__} expects inputs of rank {self._rank} "
                             f"(batch, ..., channels), received shape {tuple(inputs.shape)}")
        if not training or self.rate == 0.0:
            return inputs
        mask_shape = [inputs.shape[0]] + [1] * (self._rank - 2) + [inputs.shape[-1]]
        ones = _C.tensor_full(mask_shape, 1.0, inputs._dtype_name, inputs._device_name)
        return _C.binary("mul", inputs, _C.dropout(ones, self.rate, True))

    def _layer_config(self):
        return {"rate": self.rate, "seed": self.seed}

    def get_config(self):
        config = super().get_config()
        del config["trainable"]  # Keras's spatial dropout configs have no `trainable`
        return config


class SpatialDropout1D(_SpatialDropout):
    """``keras.layers.SpatialDropout1D(rate)`` on (batch, steps, channels)."""
    _rank = 3


class SpatialDropout2D(_SpatialDropout):
    """``keras.layers.SpatialDropout2D(rate)`` on (batch, height, width, channels)."""
    _rank = 4

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        self.data_format = _data_format(data_format)
        super().__init__(rate, seed=seed, **kwargs)

    def _layer_config(self):
        return {**super()._layer_config(), "data_format": self.data_format}


class SpatialDropout3D(SpatialDropout2D):
    """``keras.layers.SpatialDropout3D(rate)`` on (batch, d1, d2, d3, channels)."""
    _rank = 5


def _check_unit_interval(value, arg):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 <= value <= 1:
        raise ValueError(f"Invalid value received for argument `{arg}`. Expected a float value "
                         f"between 0 and 1. Received: {arg}={value!r}")
    return float(value)


class _NoiseLayer(Layer):
    """A layer that perturbs its inputs while training and is the identity otherwise; the
    draws replay with every step (``_random_draws``)."""
    _amount_arg = None

    def __init__(self, amount, seed=None, **kwargs):
        setattr(self, self._amount_arg, _check_unit_interval(amount, self._amount_arg))
        self.seed = seed  # accepted as Dropout's; draws come from the global generator
        super().__init__(**kwargs)

    def call(self, inputs, training=False):
        if not training or getattr(self, self._amount_arg) == 0.0:
            return inputs
        return self._perturb(inputs)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def _layer_config(self):
        return {self._amount_arg: getattr(self, self._amount_arg), "seed": self.seed}


def _in_dtype_of(x, like):
    return x if x._dtype_name == like._dtype_name else _C.cast(x, like._dtype_name)


class GaussianNoise(_NoiseLayer):
    """``keras.layers.GaussianNoise(stddev)``: adds N(0, stddev²) noise while training."""
    _amount_arg = "stddev"

    def __init__(self, stddev, seed=None, **kwargs):  # Keras's argument names (for configs)
        super().__init__(stddev, seed=seed, **kwargs)

    def _perturb(self, inputs):
        noise = _random_draws.normal(inputs.shape, inputs, 0.0, self.stddev)
        return _C.binary("add", inputs, _in_dtype_of(noise, inputs))


class GaussianDropout(_NoiseLayer):
    """``keras.layers.GaussianDropout(rate)``: multiplies by N(1, rate / (1 - rate)) noise
    while training."""
    _amount_arg = "rate"

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, seed=seed, **kwargs)

    def _perturb(self, inputs):
        noise = _random_draws.normal(inputs.shape, inputs, 1.0,
                                     (self.rate / (1.0 - self.rate)) ** 0.5)
        return _C.binary("mul", inputs, _in_dtype_of(noise, inputs))


class AlphaDropout(_NoiseLayer):
    """``keras.layers.AlphaDropout(rate, noise_shape=None)``: dropout for SELU networks; a
    dropped value becomes SELU's negative saturation, and an affine map a * x + b keeps the
    mean and variance of standard-normal inputs."""
    _amount_arg = "rate"
    _SELU_ALPHA = 1.6732632423543772848170429916717
    _SELU_SCALE = 1.0507009873554804934193349852946

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        super().__init__(rate, seed=seed, **kwargs)

    def _perturb(self, inputs):
        shape = list(inputs.shape) if self.noise_shape is None else [
            inputs.shape[i] if d is None else d for i, d in enumerate(self.noise_shape)]
        kept = _in_dtype_of(_random_draws.bernoulli(shape, 1.0 - self.rate, inputs), inputs)
        saturation = -self._SELU_ALPHA * self._SELU_SCALE
        a = ((1 - self.rate) * (1 + self.rate * saturation ** 2)) ** -0.5
        b = -a * saturation * self.rate
        dropped = _C.binary("mul", _C.binary("sub", _C.scalar_like(1.0, kept), kept),
                            _C.scalar_like(saturation, kept))
        x = _C.binary("add", _C.binary("mul", inputs, kept), dropped)
        return _C.binary("add", _C.binary("mul", x, _C.scalar_like(a, x)), _C.scalar_like(b, x))

    def _layer_config(self):
        return {**super()._layer_config(), "noise_shape": self.noise_shape}
