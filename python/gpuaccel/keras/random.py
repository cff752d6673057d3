"""``keras.random``: the draws the Keras guides make in layers and train steps (``normal``,
``uniform``, ``dropout``) and ``SeedGenerator``.

Every draw is made of dropout masks (``_random_draws.py``), the one random op a traced Python
layer's replay runs again, so a ``call()`` that samples (a VAE's reparameterisation) draws new
numbers on every step, in ``fit`` as in an eager call. As gpuaccel's random layers do, a
``seed=`` (an int or a ``SeedGenerator``) is accepted and the numbers come from gpuaccel's global
generator: ``keras.utils.set_random_seed`` (or ``gpuaccel.random.set_seed``) makes a program
repeat its draws; an int seed does not make two calls return the same numbers as Keras's does.
The numbers are not Keras's."""
import numbers

from .. import _C
from .._tensor import Tensor, _shape_arg, zeros
from ..dtypes import as_dtype
from . import _random_draws

__all__ = ["SeedGenerator", "normal", "uniform", "dropout"]


class SeedGenerator:
    """``keras.random.SeedGenerator(seed)``: what a layer holds to pass as ``seed=``; its draws
    come from gpuaccel's global generator (the module's docstring says why)."""

    def __init__(self, seed=None, name=None, **kwargs):
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
            raise ValueError(f"Argument `seed` must be an integer. Received: seed={seed!r}")
        self.seed = seed
        self.name = name or "seed_generator"

    def get_config(self):
        return {"seed": self.seed}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _check_seed(seed):
    if seed is not None and not isinstance(seed, SeedGenerator) and (
            isinstance(seed, bool) or not isinstance(seed, numbers.Integral)):
        raise ValueError("Argument `seed` must be either an integer or an instance of "
                         f"`SeedGenerator`. Received: seed={seed!r} (of type {type(seed)})")


def _float_dtype(dtype, function):
    name = "float32" if dtype is None else as_dtype(dtype).name
    if not as_dtype(name).is_floating:
        raise ValueError(f"keras.random.{function} draws floating-point numbers; got "
                         f"dtype={name!r} (use 'float32', 'float16' or 'bfloat16')")
    return name


def _shape(shape):
    """A shape as ints: a tuple or list (of ints or scalar integer tensors), an int, or a 1-D
    integer tensor (``ops.shape(x)``, ``tf.shape(x)``)."""
    return _shape_arg((shape,) if isinstance(shape, (tuple, list, Tensor)) else (shape,))


def _as(values, dtype):
    return values if dtype == "float32" else _C.cast(values, dtype)


def _anchor():
    """A tensor on the default device, where the draws are made."""
    return zeros(1)


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal draws of ``shape`` with ``mean`` and ``stddev``."""
    _check_seed(seed)
    dtype = _float_dtype(dtype, "normal")
    return _as(_random_draws.normal(_shape(shape), _anchor(), float(mean), float(stddev)),
               dtype)


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Uniform draws of ``shape`` in [minval, maxval)."""
    _check_seed(seed)
    dtype = _float_dtype(dtype, "uniform")
    return _as(_random_draws.uniform(_shape(shape), _anchor(), float(minval), float(maxval)),
               dtype)


def dropout(inputs, rate, noise_shape=None, seed=None):
    """``inputs`` with each entry (or each slice of ``noise_shape``, broadcast) zeroed with
    probability ``rate`` and the kept ones scaled by 1 / (1 - rate), always (no training
    flag: this is the op a Dropout layer applies in training)."""
    _check_seed(seed)
    if isinstance(rate, bool) or not isinstance(rate, numbers.Real) or not 0.0 <= rate < 1.0:
        raise ValueError(f"Invalid value received for argument `rate`. Expected a float value "
                         f"between 0 and 1 (1 excluded). Received: rate={rate!r}")
    if not isinstance(inputs, Tensor):
        from .ops import convert_to_tensor
        inputs = convert_to_tensor(inputs)
    if rate == 0.0:
        return inputs
    if noise_shape is None:
        return _C.dropout(inputs, float(rate), True)
    kept = _random_draws.bernoulli(_shape(noise_shape), 1.0 - rate, inputs)
    scaled = _C.binary("mul", kept, _C.scalar_like(1.0 / (1.0 - rate), kept))
    return _C.binary("mul", inputs, _as(scaled, inputs._dtype_name))
