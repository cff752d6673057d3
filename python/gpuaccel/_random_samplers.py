"""The distributions of ``tf.random`` beyond uniform and normal (truncated normal, categorical,
gamma, Poisson, binomial), each drawn from whichever counter-based stream is current, and the
keyed streams that make TF's stateless ``seed=(a, b)`` functions and ``tf.random.Generator``.

One sampler serves the three ways TF draws: the global stream (``tf.random.gamma``), a stream
keyed by a seed pair (``tf.random.stateless_gamma``: the same pair gives the same numbers, a
different pair different ones) and a Generator's own stream. ``keyed_stream`` swaps the C++
generator's (key, counter) in and out around a draw, so a stateless or Generator draw leaves the
global stream where it was.

The numbers cannot be TF's (its Philox streams are keyed differently); the distributions are.
Truncated normals come by inversion of the normal CDF, gamma by Marsaglia and Tsang's method,
Poisson and binomial by inversion of the CDF on the host (with a normal approximation for
very large means, where TF's samplers also switch method).
"""
import math
import statistics

import numpy as np

from . import _C, errors
from ._convert import convert_to_tensor
from ._random_streams import _MASK64, keyed_stream  # noqa: F401 - re-exported
from ._tensor import _device_name, _dtype_name, _shape_arg
from .dtypes import INTEGER_NAMES, as_dtype, float32



def _mixed(value):
    """SplitMix64's finalizer: nearby seeds give unrelated keys."""
    value = (value + 0x9E3779B97F4A7C15) & _MASK64
    value = ((value ^ (value >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    value = ((value ^ (value >> 27)) * 0x94D049BB133111EB) & _MASK64
    return value ^ (value >> 31)


def no_op_seed(seed):
    """Refuses a per-op ``seed=`` (gpuaccel's stateful draws come from the global stream)."""
    if seed is not None:
        raise ValueError("per-op seeds are not supported; call gpuaccel.random.set_seed(seed) "
                         "or use the stateless_* functions")


def seed_pair(seed):
    """A stateless seed (a shape-[2] integer tensor, array or list) as two Python ints, with
    TF's error for another shape."""
    values = np.asarray(seed.numpy() if hasattr(seed, "numpy") else seed)
    if values.dtype.kind not in "iu":
        raise TypeError(f"seed must be int32 or int64, got {values.dtype}")
    if values.shape != (2,):
        raise errors.InvalidArgumentError(
            f"seed must have shape [2], not [{','.join(map(str, values.shape))}]")
    return int(values[0]), int(values[1])


def key_of(seed):
    """The 64-bit generator key of a stateless seed pair."""
    a, b = seed_pair(seed)
    return _mixed(_mixed(a & _MASK64) ^ (b & _MASK64))


def as_shape_tuple(shape):
    return tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)


def normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, device=None):
    """``tf.random.normal(shape)``. A per-call ``seed`` is not supported (use set_seed)."""
    if seed is not None:
        raise ValueError("per-op seeds are not supported; call gpuaccel.random.set_seed(seed)")
    t = _C.tensor_random("normal", _shape_arg(as_shape_tuple(shape)), _dtype_name(dtype),
                         _device_name(device))
    if stddev != 1.0:
        t = t * stddev
    if mean != 0.0:
        t = t + mean
    return t


def uniform(shape, minval=0.0, maxval=None, dtype=float32, seed=None, device=None):
    """``tf.random.uniform(shape)`` in [minval, maxval)."""
    if seed is not None:
        raise ValueError("per-op seeds are not supported; call gpuaccel.random.set_seed(seed)")
    if not as_dtype(dtype).is_floating:
        return _uniform_integers(shape, minval, maxval, dtype, device)
    maxval = 1.0 if maxval is None else maxval
    if not maxval > minval:
        raise ValueError(f"maxval ({maxval}) must be greater than minval ({minval})")
    t = _C.tensor_random("uniform", _shape_arg(as_shape_tuple(shape)), _dtype_name(dtype),
                         _device_name(device))
    if (minval, maxval) != (0.0, 1.0):
        t = t * (maxval - minval) + minval
    return t


def _uniform_integers(shape, minval, maxval, dtype, device):
    """TF's integer ``uniform``: ``maxval`` is required and excluded."""
    if maxval is None:
        raise ValueError(f"Must specify maxval for integer dtype {as_dtype(dtype).name}")
    from ._creation import randint
    return randint(int(minval), int(maxval), tuple(shape), dtype=dtype, device=device)



def full_range_integers(shape, dtype):
    """Integers over ``dtype``'s whole range, from the current stream."""
    name = as_dtype(dtype).name
    if name not in INTEGER_NAMES:
        raise ValueError(f"uniform_full_int needs an integer dtype, got {name}")
    values = random_int64(tuple(as_shape_tuple(shape)))
    return _C.tensor_from_numpy(np.ascontiguousarray(values.astype(name)), None, None, True)


def random_int64(shape):
    """int64 values covering the full 64-bit range, from the current stream."""
    halves = _C.tensor_random("uniform", [*shape, 4], "float32", "cpu").numpy()
    words = (halves * 65536.0).astype(np.uint64) & np.uint64(0xFFFF)
    value = np.zeros(shape, np.uint64)
    for i in range(4):
        value = (value << np.uint64(16)) | words[..., i]
    return value.view(np.int64)


def parameter_shape(*values):
    return np.broadcast_shapes(*(np.shape(v.numpy() if hasattr(v, "numpy") else v)
                                 for v in values if v is not None))


def check_shape_ends_with(shape, *parameters):
    tail = tuple(parameter_shape(*parameters))
    if tail and tuple(shape[len(shape) - len(tail):]) != tail:
        raise errors.InvalidArgumentError("Shape passed in must end with broadcasted shape.")


def uniform_array(shape):
    """Uniform [0, 1) float64 values on the host, from the current stream."""
    return _C.tensor_random("uniform", [int(d) for d in shape], "float32", "cpu").numpy() \
        .astype(np.float64)


def normal_array(shape):
    return _C.tensor_random("normal", [int(d) for d in shape], "float32", "cpu").numpy() \
        .astype(np.float64)


def _as_host(value):
    return np.asarray(value.numpy() if hasattr(value, "numpy") else value, dtype=np.float64)


def _result(array, dtype):
    return convert_to_tensor(np.ascontiguousarray(array).astype(as_dtype(dtype).as_numpy_dtype))


_ERFC = np.vectorize(math.erfc, otypes=[np.float64])
_NORMAL_QUANTILE = np.vectorize(statistics.NormalDist().inv_cdf, otypes=[np.float64])


def _normal_cdf(x):
    return 0.5 * _ERFC(-np.asarray(x, np.float64) / math.sqrt(2.0))


def truncated_normal(shape, mean, stddev, lower, upper, dtype):
    """Normal(mean, stddev) restricted to [lower, upper] (in standard units, per entry
    broadcast to ``shape``), by inverting the normal CDF on a uniform draw between the bounds'
    probabilities (float64 on the host, Python's NormalDist quantile); bounds right of 0 are
    mirrored left, where the CDF's small values keep their precision."""
    lower = np.broadcast_to(np.asarray(lower, np.float64), shape)
    upper = np.broadcast_to(np.asarray(upper, np.float64), shape)
    mirrored = lower > 0
    low = np.where(mirrored, -upper, lower)
    high = np.where(mirrored, -lower, upper)
    p_low, p_high = _normal_cdf(low), _normal_cdf(high)
    p = p_low + uniform_array(shape) * (p_high - p_low)
    z = np.clip(_NORMAL_QUANTILE(np.clip(p, 1e-300, 1.0 - 1e-16)), low, high)
    z = np.where(mirrored, -z, z)
    return _result(_as_host(mean) + _as_host(stddev) * z, dtype)


def categorical(logits, num_samples, dtype):
    """``num_samples`` class indices per row of ``logits`` (batch, classes), by the Gumbel-max
    trick: argmax(logits + Gumbel noise) is a draw from softmax(logits)."""
    if as_dtype(dtype).name not in ("int32", "int64"):
        raise ValueError(f"Argument `dtype` got invalid value {as_dtype(dtype)}. Accepted "
                         f"dtypes are (int32, int64).")
    table = _as_host(logits)
    if table.ndim != 2:
        raise errors.InvalidArgumentError(
            f"logits should be a matrix, got shape [{','.join(map(str, table.shape))}]")
    batch, classes = table.shape
    u = np.clip(uniform_array((batch, int(num_samples), classes)), 1e-30, 1.0 - 1e-7)
    noisy = table[:, None, :] + -np.log(-np.log(u))
    return _result(np.argmax(noisy, axis=-1), dtype)


def gamma(shape, alpha, beta, dtype):
    """Gamma(alpha, rate beta) draws of ``shape`` (alpha and beta broadcast to it): Marsaglia
    and Tsang's squeeze method, vectorized over eight rounds of candidates (an entry still
    rejected after eight, probability below 1e-10, takes the mode); alpha < 1 by boosting,
    Gamma(alpha + 1) * U ** (1 / alpha)."""
    a = np.broadcast_to(_as_host(alpha), shape)
    if (a <= 0).any():
        raise errors.InvalidArgumentError(f"alpha must be positive, got {a[a <= 0].flat[0]}")
    boosted = np.where(a < 1.0, a + 1.0, a)
    d = boosted - 1.0 / 3.0
    c = 1.0 / np.sqrt(9.0 * d)
    out = d.copy()
    pending = np.ones(shape, bool)
    for _ in range(8):
        x, u = normal_array(shape), uniform_array(shape)
        v = (1.0 + c * x) ** 3
        with np.errstate(invalid="ignore", divide="ignore"):
            accept = (v > 0) & (np.log(np.maximum(u, 1e-300)) <
                                0.5 * x * x + d - d * v + d * np.log(np.where(v > 0, v, 1.0)))
        take = pending & accept
        out[take] = (d * v)[take]
        pending &= ~take
    small = a < 1.0
    out = np.where(small, out * uniform_array(shape) ** (1.0 / a), out)
    rate = 1.0 if beta is None else np.broadcast_to(_as_host(beta), shape)
    return _result(out / rate, dtype)


_LARGE_MEAN = 500.0  # inversion walks ~mean steps; above, the normal approximation is exact
# to a fraction of a count in distribution


def poisson(shape, lam, dtype):
    """Poisson(lam) draws of ``shape`` (lam broadcast to it) by inverting the CDF on a uniform
    draw; lam >= 500 by the rounded normal approximation."""
    lam = np.broadcast_to(_as_host(lam), shape)
    if (lam < 0).any():
        raise errors.InvalidArgumentError(f"lam must be non-negative, got {lam[lam < 0].flat[0]}")
    u = uniform_array(shape)
    small = np.where(lam < _LARGE_MEAN, lam, 0.0)
    k = np.zeros(shape)
    p = np.exp(-small)
    cdf = p.copy()
    step = 0
    while (live := u > cdf).any() and step < 10 * _LARGE_MEAN:
        step += 1
        p = p * small / step
        k += live
        cdf += p
    approx = np.maximum(np.round(lam + np.sqrt(lam) * normal_array(shape)), 0.0)
    return _result(np.where(lam < _LARGE_MEAN, k, approx), dtype)


def binomial(shape, counts, probs, dtype):
    """Binomial(counts, probs) draws of ``shape`` by inverting the CDF (probabilities above 1/2
    through n - Binomial(n, 1 - p)); counts above 1000 by the rounded, clipped normal
    approximation."""
    n = np.broadcast_to(np.round(_as_host(counts)), shape)
    p = np.broadcast_to(_as_host(probs), shape)
    if (n < 0).any() or ((p < 0) | (p > 1)).any():
        raise errors.InvalidArgumentError("binomial needs counts >= 0 and probs in [0, 1]")
    flipped = p > 0.5
    q = np.where(flipped, 1.0 - p, p)
    exact = n <= 1000
    n_exact = np.where(exact, n, 0.0)
    u = uniform_array(shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(q < 1.0, q / (1.0 - q), 0.0)
    pmf = (1.0 - q) ** n_exact
    cdf = pmf.copy()
    k = np.zeros(shape)
    while (live := (u > cdf) & (k < n_exact)).any():
        pmf = pmf * (n_exact - k) / (k + 1.0) * ratio
        k += live
        cdf += pmf
    approx = np.clip(np.round(n * q + np.sqrt(n * q * (1 - q)) * normal_array(shape)), 0, n)
    draws = np.where(exact, k, approx)
    return _result(np.where(flipped, n - draws, draws), dtype)
