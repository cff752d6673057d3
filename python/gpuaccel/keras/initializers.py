"""``gpuaccel.keras.initializers``: Keras 3's initializer classes, their lowercase aliases, and
``get``/``serialize``/``deserialize``.

Why a module: Keras code builds weights with ``keras.initializers.HeNormal()(shape)`` in custom
layers (``add_weight(initializer=...)``) and reads their configs in saved models. The
distributions, fan rules, truncation and variance correction are Keras's
(keras/src/initializers/random_initializers.py). The draws come from NumPy's PCG64: with an
integer ``seed`` every call gives the same values (as Keras's seeded initializers do); with
``seed=None`` each call is seeded from gpuaccel's global generator, so
``gpuaccel.random.set_seed`` (``keras.utils.set_random_seed``) makes a run repeatable. The numbers
are not Keras's own (its generator is another), their distribution is.
"""
import math
import numbers

import numpy as np

from .. import _C
from .._tensor import tensor as _make_tensor
from ._registry import KerasObjectRegistry

__all__ = ["Initializer", "Constant", "Zeros", "Ones", "Identity", "IdentityInitializer",
           "Orthogonal", "OrthogonalInitializer", "RandomNormal", "RandomUniform",
           "TruncatedNormal", "VarianceScaling", "GlorotNormal", "GlorotUniform", "HeNormal",
           "HeUniform", "LecunNormal", "LecunUniform", "constant", "zeros", "ones", "identity",
           "orthogonal", "random_normal", "random_uniform", "truncated_normal",
           "variance_scaling", "glorot_normal", "glorot_uniform", "he_normal", "he_uniform",
           "lecun_normal", "lecun_uniform", "get", "serialize", "deserialize"]

# The standard deviation of a standard normal truncated at +-2 (cpp/nn/initializers.h).
_TRUNCATED_STDDEV_CORRECTION = 0.87962566103423978


def _shape(shape):
    try:
        dims = tuple(shape)
    except TypeError:
        dims = (shape,)
    for d in dims:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0:
            raise ValueError(f"An initializer's shape must hold non-negative integers. "
                             f"Received: shape={shape!r}")
    return tuple(int(d) for d in dims)


def _as_tensor(array, dtype):
    dtype = "float32" if dtype is None else str(getattr(dtype, "name", dtype))
    value = _make_tensor(np.ascontiguousarray(np.asarray(array, np.float32)))
    return value if dtype == "float32" else _C.cast(value, dtype)


def compute_fans(shape, input_axes=None, output_axes=None):
    """Keras's (fan_in, fan_out): the product over the given axes, else by rank (a kernel of
    rank > 2 multiplies its last two dims by the receptive field)."""
    shape = tuple(shape)
    if input_axes is not None and output_axes is not None:
        return (int(np.prod([shape[a] for a in input_axes])),
                int(np.prod([shape[a] for a in output_axes])))
    if len(shape) < 1:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive_field = int(np.prod(shape[:-2]))
    return shape[-2] * receptive_field, shape[-1] * receptive_field


class Initializer:
    """Keras's base: ``__call__(shape, dtype=None)``, ``get_config``, ``from_config``,
    ``clone``."""

    def __call__(self, shape, dtype=None):
        raise NotImplementedError("Initializer subclasses must implement `__call__()`.")

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def clone(self):
        return self.__class__.from_config(self.get_config())


class Constant(Initializer):
    """Every value ``value`` (a scalar)."""

    def __init__(self, value=0.0):
        self.value = value

    def __call__(self, shape, dtype=None):
        return _as_tensor(np.full(_shape(shape), self.value, np.float32), dtype)

    def get_config(self):
        return {"value": self.value}


class Zeros(Initializer):
    def __call__(self, shape, dtype=None):
        return _as_tensor(np.zeros(_shape(shape), np.float32), dtype)


class Ones(Initializer):
    def __call__(self, shape, dtype=None):
        return _as_tensor(np.ones(_shape(shape), np.float32), dtype)


class Identity(Initializer):
    """``gain`` times the identity matrix (2D shapes only). Its config is ``{}``, as Keras's."""

    def __init__(self, gain=1.0):
        self.gain = gain

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        if len(shape) != 2:
            raise ValueError("Identity matrix initializer can only be used for 2D matrices. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        return _as_tensor(self.gain * np.eye(*shape, dtype=np.float32), dtype)


class RandomInitializer(Initializer):
    """The seeded initializers' shared part: ``seed`` (an int, or None) and the generator."""

    def __init__(self, seed=None):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise ValueError("`seed` argument should be an instance of "
                             "`keras.random.SeedGenerator()` or an integer. "
                             f"Received: seed={seed!r}")
        self.seed = seed

    def _generator(self):
        if self.seed is not None:
            return np.random.default_rng(int(self.seed))
        from .. import random as global_generator
        words = global_generator.uniform((4,)).numpy()  # 24 random bits each
        return np.random.default_rng([int(w * 2 ** 24) for w in words])

    def get_config(self):
        return {"seed": self.seed}


def _truncated_standard_normal(generator, shape):
    """Standard normals cut at +-2 (the values outside are redrawn), as Keras's."""
    values = generator.standard_normal(shape)
    outside = np.abs(values) > 2.0
    while outside.any():
        values[outside] = generator.standard_normal(int(outside.sum()))
        outside = np.abs(values) > 2.0
    return values


class RandomNormal(RandomInitializer):
    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev = mean, stddev
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        values = self._generator().normal(self.mean, self.stddev, _shape(shape))
        return _as_tensor(values, dtype)

    def get_config(self):
        return {**super().get_config(), "mean": self.mean, "stddev": self.stddev}


class TruncatedNormal(RandomNormal):
    """Normal numbers more than two standard deviations from the mean redrawn."""

    def __call__(self, shape, dtype=None):
        values = _truncated_standard_normal(self._generator(), _shape(shape))
        return _as_tensor(self.mean + self.stddev * values, dtype)


class RandomUniform(RandomInitializer):
    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval = minval, maxval
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        values = self._generator().uniform(self.minval, self.maxval, _shape(shape))
        return _as_tensor(values, dtype)

    def get_config(self):
        return {**super().get_config(), "minval": self.minval, "maxval": self.maxval}


class VarianceScaling(RandomInitializer):
    """Keras's fan-scaled draws: variance ``scale / fan`` (fan_in, fan_out or their mean), from
    a truncated normal (std corrected for the truncation), an untruncated normal or a uniform
    on [-sqrt(3 var), sqrt(3 var)]."""

    _MODES = ("fan_in", "fan_out", "fan_avg")
    _DISTRIBUTIONS = ("truncated_normal", "untruncated_normal", "uniform")

    def __init__(self, scale=1.0, mode="fan_in", distribution="truncated_normal", seed=None,
                 input_axes=None, output_axes=None):
        if not isinstance(scale, numbers.Real) or scale <= 0.0:
            raise ValueError("Argument `scale` must be positive float. "
                             f"Received: scale={scale}")
        if mode not in self._MODES:
            raise ValueError(f"Invalid `mode` argument: {mode}. Please use one of "
                             f"{set(self._MODES)}")
        distribution = str(distribution).lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in self._DISTRIBUTIONS:
            raise ValueError(f"Invalid `distribution` argument: {distribution}. Please use one "
                             f"of {set(self._DISTRIBUTIONS)}")
        self.scale, self.mode, self.distribution = scale, mode, distribution
        self.input_axes, self.output_axes = input_axes, output_axes
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        fan_in, fan_out = compute_fans(shape, self.input_axes, self.output_axes)
        fan = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}
        variance = self.scale / max(1.0, fan[self.mode])
        generator = self._generator()
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(variance) / _TRUNCATED_STDDEV_CORRECTION
            values = stddev * _truncated_standard_normal(generator, shape)
        elif self.distribution == "untruncated_normal":
            values = generator.normal(0.0, math.sqrt(variance), shape)
        else:
            limit = math.sqrt(3.0 * variance)
            values = generator.uniform(-limit, limit, shape)
        return _as_tensor(values, dtype)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "mode": self.mode,
                "distribution": self.distribution, "input_axes": self.input_axes,
                "output_axes": self.output_axes}


def _variance_scaling_preset(class_name, scale, mode, distribution, doc):
    """A VarianceScaling subclass with fixed scale/mode/distribution (GlorotUniform...), whose
    config holds only seed and the axes, as Keras's."""

    def __init__(self, seed=None, input_axes=None, output_axes=None):
        VarianceScaling.__init__(self, scale, mode, distribution, seed, input_axes, output_axes)

    def get_config(self):
        return {"seed": self.seed, "input_axes": self.input_axes,
                "output_axes": self.output_axes}

    return type(class_name, (VarianceScaling,), {"__init__": __init__, "get_config": get_config,
                                                 "__doc__": doc, "__module__": __name__})


GlorotNormal = _variance_scaling_preset("GlorotNormal", 1.0, "fan_avg", "truncated_normal",
                                        "Truncated normal, std sqrt(2 / (fan_in + fan_out)).")
GlorotUniform = _variance_scaling_preset("GlorotUniform", 1.0, "fan_avg", "uniform",
                                         "Uniform in +-sqrt(6 / (fan_in + fan_out)).")
HeNormal = _variance_scaling_preset("HeNormal", 2.0, "fan_in", "truncated_normal",
                                    "Truncated normal, std sqrt(2 / fan_in).")
HeUniform = _variance_scaling_preset("HeUniform", 2.0, "fan_in", "uniform",
                                     "Uniform in +-sqrt(6 / fan_in).")
LecunNormal = _variance_scaling_preset("LecunNormal", 1.0, "fan_in", "truncated_normal",
                                       "Truncated normal, std sqrt(1 / fan_in).")
LecunUniform = _variance_scaling_preset("LecunUniform", 1.0, "fan_in", "uniform",
                                        "Uniform in +-sqrt(3 / fan_in).")


class Orthogonal(RandomInitializer):
    """``gain`` times an orthogonal matrix (the Q of a normal matrix's QR decomposition, signs
    fixed by R's diagonal), reshaped: rows are all dims but the last."""

    def __init__(self, gain=1.0, seed=None):
        self.gain = gain
        super().__init__(seed)

    def __call__(self, shape, dtype=None):
        shape = _shape(shape)
        if len(shape) < 2:
            raise ValueError("The tensor to initialize must be at least two-dimensional. "
                             f"Received: shape={shape} of rank {len(shape)}.")
        rows, cols = int(np.prod(shape[:-1])), shape[-1]
        a = self._generator().standard_normal((max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(a)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _as_tensor(self.gain * q.reshape(shape), dtype)

    def get_config(self):
        return {"seed": self.seed, "gain": self.gain}


IdentityInitializer = Identity
OrthogonalInitializer = Orthogonal
constant, zeros, ones, identity, orthogonal = Constant, Zeros, Ones, Identity, Orthogonal
random_normal, random_uniform, truncated_normal = RandomNormal, RandomUniform, TruncatedNormal
variance_scaling = VarianceScaling
glorot_normal, glorot_uniform = GlorotNormal, GlorotUniform
he_normal, he_uniform, lecun_normal, lecun_uniform = HeNormal, HeUniform, LecunNormal, LecunUniform

_CLASSES = (Constant, Zeros, Ones, Identity, Orthogonal, RandomNormal, RandomUniform,
            TruncatedNormal, VarianceScaling, GlorotNormal, GlorotUniform, HeNormal, HeUniform,
            LecunNormal, LecunUniform)
# Keras's lookup: class names, their snake_case aliases, and 'IdentityInitializer' etc.
_BY_NAME = {cls.__name__: cls for cls in _CLASSES}
_BY_NAME.update({name: value for name, value in globals().items()
                 if isinstance(value, type) and value in _CLASSES and name[:1].islower()})
_BY_NAME.update(IdentityInitializer=Identity, OrthogonalInitializer=Orthogonal)


_REGISTRY = KerasObjectRegistry("initializer", "keras.initializers", Initializer, _BY_NAME,
                                unknown_hint="accepted: {names}")


def serialize(initializer):
    """Keras's dict: module, class_name, config, registered_name."""
    return _REGISTRY.serialize(initializer)


def deserialize(config, custom_objects=None):
    """An initializer from Keras's dict (``class_name`` and ``config``) or a name."""
    return _REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """None -> None; a name ('he_normal', 'HeNormal') -> a new instance; a dict -> deserialize;
    an initializer or any callable -> itself."""
    return _REGISTRY.get(identifier)
