"""Random numbers that a traced Python layer's replay draws afresh (uniform, normal, Bernoulli).

A traced call() replays its recorded ops in C++ (cpp/nn/op_trace.h); ``_C.tensor_random`` is not
replayable (a replay would reuse the first draw), and the dropout op is the one random op a
replay runs again, from gpuaccel's global generator. So every draw here is made of dropout
masks: a Bernoulli(p) keep mask is dropout of ones at rate 1 - p, and a uniform number is 23
fair bits (dropout of ones at rate 0.5) read as a binary fraction, plus 2^-24 so that it lies
strictly inside (0, 1), on a grid of step 2^-23. Every term is a power of two, so the sum is
exact in float32 whatever the order of the reduction. Normals are the normal quantile of such a
uniform (``gpuaccel.math.ndtri``). The price is 23 temporary floats per uniform draw, which a
replayable uniform op in C++ would remove.

Reproducibility comes from ``gpuaccel.random.set_seed`` (or ``keras.utils.set_random_seed``): the
layers' ``seed`` arguments are accepted, as Dropout's is, and the draws come from the global
generator.
"""
import numpy as np

from .. import _C
from .. import math as _math

_UNIFORM_BITS = 23
_BIT_WEIGHTS = (0.5 ** np.arange(1, _UNIFORM_BITS + 1)).astype(np.float32)


def bernoulli(shape, keep_probability, like):
    """Float32 0/1 draws on ``like``'s device, 1 with probability ``keep_probability``."""
    ones = _C.tensor_full(list(shape), 1.0, "float32", like._device_name)
    if keep_probability >= 1.0:
        return ones
    if keep_probability <= 0.0:
        return _C.binary("mul", ones, _C.scalar_like(0.0, ones))
    kept = _C.dropout(ones, 1.0 - keep_probability, True)  # 0 or 1 / keep_probability
    # exactly 1 where kept (1 / p * p need not round to 1)
    return _C.cast(_C.binary("greater", kept, _C.scalar_like(0.0, kept)), "float32")


def uniform(shape, like, minval=0.0, maxval=1.0):
    """Float32 draws in (minval, maxval) on ``like``'s device (shape ``shape``)."""
    bits = bernoulli(list(shape) + [_UNIFORM_BITS], 0.5, like)
    weights = _C.tensor_from_numpy(_BIT_WEIGHTS, like._device_name, None, True)
    fraction = _C.binary("add", _C.reduce("sum", _C.binary("mul", bits, weights), [-1], False),
                         _C.scalar_like(2.0 ** -(_UNIFORM_BITS + 1), bits))
    if minval == 0.0 and maxval == 1.0:
        return fraction
    return _C.binary("add", _C.binary("mul", fraction, _C.scalar_like(maxval - minval, fraction)),
                     _C.scalar_like(minval, fraction))


def normal(shape, like, mean=0.0, stddev=1.0):
    """Float32 normal draws on ``like``'s device (shape ``shape``)."""
    standard = _math.ndtri(uniform(shape, like))
    return _C.binary("add", _C.binary("mul", standard, _C.scalar_like(stddev, standard)),
                     _C.scalar_like(mean, standard))
