"""Random numbers that a traced Python layer's replay draws afresh (uniform, normal, Bernoulli).

A traced call() replays its recorded ops in C++ (cpp/nn/op_trace.h); ``_C.tensor_random`` is not
replayable (a replay would reuse the first draw), and the dropout op is the one random op a
replay runs again, from gpuaccel's global generator. So every draw here is made of dropout
masks: a Bernoulli(p) keep mask is dropout of ones at rate 1 - p, and a uniform number is 23
fair bits (dropout of ones at rate 0.5) read as a binary fraction, plus 2^-24 so that it lies
strictly inside (0, 1), on a grid of step 2^-23. Every term is a power of two, so the sum is
exact in float32 whatever the order of the reduction. Normals are the normal quantile of such a
uniform (``gpuaccel.math.ndtri``). The price is 23 temporary floats per uniform draw, which a
replayable uniform op in C++ would remove. Beta(a, a) and Gamma(a) draws are quantiles of
uniforms too, the CDF computed by quadrature in tensor ops (``_quantiles_by_quadrature``), so
that a (Beta's) parameter may itself be a draw.

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


_QUADRATURE_STEPS = 512


def _power(x, exponent):
    """x ** exponent for x >= 0 and a tensor exponent, as exp(exponent * log x) (0 at x = 0)."""
    return _C.unary("exp", _C.binary("mul", _C.unary("log", x), exponent))


def _quantiles_by_quadrature(uniforms, grid, density, mass):
    """For each of the (n,) ``uniforms`` (at most ``mass``), the point t of the (steps + 1,)
    ``grid`` (from 0) where the integral of ``density`` (its values on the grid; trapezoids,
    normalised to ``mass`` over the grid) reaches u: located by counting, interpolated
    linearly."""
    steps = grid.shape[0] - 1
    trapezoids = _C.binary("mul", _C.binary("mul", _C.binary(
        "add", _C.slice(density, [(1, steps + 1, 1)]), _C.slice(density, [(0, steps, 1)])),
        _C.binary("sub", _C.slice(grid, [(1, steps + 1, 1)]), _C.slice(grid, [(0, steps, 1)]))),
        _C.scalar_like(0.5, density))
    summed = _C.tensor_from_numpy(np.triu(np.ones((steps, steps), np.float32)),
                                  uniforms._device_name, None, True)
    cdf = _C.reshape(_C.matmul(_C.reshape(trapezoids, [1, steps]), summed), [steps])
    cdf = _C.binary("mul", cdf, _C.binary("div", _C.scalar_like(float(mass), cdf),
                                          _C.slice(cdf, [(steps - 1, steps, 1)])))
    cdf = _C.concat([_C.tensor_full([1], 0.0, "float32", uniforms._device_name), cdf], 0)
    below = _C.cast(_C.binary("less", _C.expand_dims(cdf, 0), _C.expand_dims(uniforms, 1)),
                    "float32")
    interval = _C.binary("minimum", _C.binary("maximum", _C.binary(
        "sub", _C.reduce("sum", below, [1], False), _C.scalar_like(1.0, uniforms)),
        _C.scalar_like(0.0, uniforms)), _C.scalar_like(float(steps - 1), uniforms))

    def at(table, index):
        return _C.reshape(_C.embedding(_C.cast(index, "int64"), _C.reshape(
            table, [steps + 1, 1])), list(index.shape))

    following = _C.binary("add", interval, _C.scalar_like(1.0, interval))
    low_cdf = at(cdf, interval)
    width = _C.binary("maximum", _C.binary("sub", at(cdf, following), low_cdf),
                      _C.scalar_like(1e-30, low_cdf))
    fraction = _C.binary("minimum", _C.binary("maximum", _C.binary("div", _C.binary(
        "sub", uniforms, low_cdf), width), _C.scalar_like(0.0, width)),
        _C.scalar_like(1.0, width))
    low = at(grid, interval)
    return _C.binary("add", low, _C.binary("mul", fraction, _C.binary(
        "sub", at(grid, following), low)))


def _grid(top, like):
    """steps + 1 points from 0 to the scalar tensor ``top``."""
    return _C.binary("mul", _C.tensor_from_numpy(np.linspace(
        0.0, 1.0, _QUADRATURE_STEPS + 1).astype(np.float32), like._device_name, None, True), top)


def symmetric_beta_quantiles(uniforms, alpha):
    """Beta(alpha, alpha) quantiles of (n,) ``uniforms`` for a scalar tensor ``alpha``. On
    [0, 1/2] the CDF, after t = x^alpha, integrates the bounded (1 - t^(1/alpha))^(alpha - 1)
    over t in [0, 2^-alpha] (mass 1/2); x = t^(1/alpha), and u > 1/2 mirrors."""
    inverse = _C.binary("div", _C.scalar_like(1.0, alpha), alpha)
    grid = _grid(_C.unary("exp", _C.binary("mul", alpha, _C.scalar_like(
        float(np.log(0.5)), alpha))), uniforms)
    powered = _power(grid, inverse)
    density = _power(_C.binary("sub", _C.scalar_like(1.0, powered), powered),
                     _C.binary("sub", alpha, _C.scalar_like(1.0, alpha)))
    upper = _C.cast(_C.binary("greater", uniforms, _C.scalar_like(0.5, uniforms)), "float32")
    flipped = _C.binary("sub", _C.scalar_like(1.0, uniforms), uniforms)
    lower_half = _C.binary("add", _C.binary("mul", upper, flipped), _C.binary(
        "mul", _C.binary("sub", _C.scalar_like(1.0, upper), upper), uniforms))
    x = _power(_quantiles_by_quadrature(lower_half, grid, density, 0.5), inverse)
    mirrored = _C.binary("sub", _C.scalar_like(1.0, x), x)
    return _C.binary("add", _C.binary("mul", upper, mirrored), _C.binary(
        "mul", _C.binary("sub", _C.scalar_like(1.0, upper), upper), x))


def gamma(shape, like, alpha):
    """Float32 Gamma(alpha) draws (unit scale) for a Python number ``alpha`` > 0: quantiles of
    uniforms, the CDF integrated up to x_max = alpha + 12 sqrt(alpha) + 24 (the mass beyond is
    below 1e-10). Below alpha = 1 the density x^(alpha - 1) e^-x is unbounded at 0, so there the
    integral runs over t = x^alpha, of the bounded exp(-t^(1/alpha))."""
    alpha = float(alpha)
    like32 = _C.tensor_full([], alpha, "float32", like._device_name)
    x_max = alpha + 12.0 * np.sqrt(alpha) + 24.0
    power = min(alpha, 1.0)  # the grid is uniform in t = x^power
    grid = _grid(_C.scalar_like(float(x_max ** power), like32), like32)
    x = _power(grid, _C.scalar_like(1.0 / power, like32))
    density = _C.unary("exp", _C.unary("neg", x))
    if alpha > 1.0:
        density = _C.binary("mul", density, _power(x, _C.scalar_like(alpha - 1.0, like32)))
    uniforms = _C.reshape(uniform([int(np.prod(shape))], like), [-1])
    t = _quantiles_by_quadrature(uniforms, grid, density, 1.0)
    return _C.reshape(_power(t, _C.scalar_like(1.0 / power, t)), list(shape))
