"""``tf.random`` / ``torch.manual_seed`` names over the counter-based generator.

Numbers come from Philox-4x32-10 keyed by the seed and indexed by a running counter, so the
same seed gives the same numbers on every device and with any number of threads."""
import numpy as np

from . import _C
from . import _random_samplers as _samplers
from . import _unsupported
from ._tf_candidate_sampling import (all_candidate_sampler, fixed_unigram_candidate_sampler,
                                     log_uniform_candidate_sampler, uniform_candidate_sampler)
from ._random_generator import (Algorithm, Generator, create_rng_state, get_global_generator,
                                set_global_generator)
from ._random_samplers import (as_shape_tuple, check_shape_ends_with, full_range_integers,
                               parameter_shape, normal, uniform)
from ._tensor import set_seed
from .dtypes import as_dtype, float32

__all__ = ["set_seed", "manual_seed", "normal", "uniform", "shuffle", "truncated_normal",
           "categorical", "gamma", "poisson", "stateless_normal", "stateless_uniform",
           "stateless_truncated_normal", "stateless_parameterized_truncated_normal",
           "stateless_categorical", "stateless_binomial", "stateless_gamma", "stateless_poisson",
           "fold_in", "split", "Algorithm", "Generator", "get_global_generator",
           "set_global_generator", "create_rng_state", "all_candidate_sampler",
           "fixed_unigram_candidate_sampler", "log_uniform_candidate_sampler",
           "uniform_candidate_sampler"]

manual_seed = set_seed


def shuffle(value, seed=None, name=None):
    """``tf.random.shuffle``: the rows of ``value`` in a random order drawn from the global
    generator (so ``set_seed`` makes it repeatable)."""
    if seed is not None:
        raise ValueError("per-op seeds are not supported; call gpuaccel.random.set_seed(seed)")
    from ._array_ops import gather
    from ._convert import convert_to_tensor
    x = convert_to_tensor(value)
    if x.ndim == 0:
        raise ValueError("shuffle needs a tensor of rank >= 1")
    keys = _C.tensor_random("uniform", [x.shape[0]], "float32", "cpu")._numpy()
    return gather(x, np.argsort(keys, kind="stable").astype(np.int64))


def _float_dtype(dtype, op):
    if not as_dtype(dtype).is_floating:
        raise TypeError(f"{op} needs a float dtype (float32, float16 or bfloat16), got "
                        f"{as_dtype(dtype).name}")
    return dtype


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, name=None):
    """``tf.random.truncated_normal``: normal draws kept within two standard deviations of
    the mean."""
    _samplers.no_op_seed(seed)
    return _samplers.truncated_normal(as_shape_tuple(shape), mean, stddev, -2.0, 2.0,
                                      _float_dtype(dtype, "truncated_normal"))


def categorical(logits, num_samples, dtype=None, seed=None, name=None):
    """``tf.random.categorical``: (batch, num_samples) class indices drawn from
    softmax(logits) per row (int64 unless ``dtype`` says int32)."""
    _samplers.no_op_seed(seed)
    return _samplers.categorical(logits, num_samples, dtype or "int64")


def gamma(shape, alpha, beta=None, dtype=float32, seed=None, name=None):
    """``tf.random.gamma``: shape + broadcast(alpha, beta).shape Gamma(alpha, rate beta)
    draws."""
    _samplers.no_op_seed(seed)
    full = as_shape_tuple(shape) + tuple(parameter_shape(alpha, beta))
    return _samplers.gamma(full, alpha, beta, _float_dtype(dtype, "gamma"))


def poisson(shape, lam, dtype=float32, seed=None, name=None):
    """``tf.random.poisson``: shape + lam.shape Poisson(lam) draws (float32 by default, as
    TF)."""
    _samplers.no_op_seed(seed)
    return _samplers.poisson(as_shape_tuple(shape) + tuple(parameter_shape(lam)), lam, dtype)


# ---- stateless: seed=(a, b) picks the stream ----

def _stateless(seed, draw, *args):
    with _samplers.keyed_stream(_samplers.key_of(seed)):
        return draw(*args)


def stateless_normal(shape, seed, mean=0.0, stddev=1.0, dtype=float32, name=None,
                     alg="auto_select"):
    """``tf.random.stateless_normal``: the same ``seed`` pair gives the same draws."""
    return _stateless(seed, normal, shape, mean, stddev, _float_dtype(dtype, "stateless_normal"))


def stateless_uniform(shape, seed, minval=0, maxval=None, dtype=float32, name=None,
                      alg="auto_select"):
    """``tf.random.stateless_uniform``: floats in [minval, maxval); integers need both bounds
    (maxval excluded), or neither for the dtype's full range."""
    if not as_dtype(dtype).is_floating:
        if minval is None and maxval is None:
            return _stateless(seed, full_range_integers, shape, dtype)
        if minval is None or maxval is None:
            raise ValueError(f"For integer `dtype` argument {as_dtype(dtype)}, argument "
                             f"`minval` and `maxval` must be both None or not None. Got "
                             f"`minval`={minval} and `maxval`={maxval}.")
    return _stateless(seed, uniform, shape, minval, maxval, dtype)


def stateless_truncated_normal(shape, seed, mean=0.0, stddev=1.0, dtype=float32, name=None,
                               alg="auto_select"):
    return _stateless(seed, _samplers.truncated_normal, as_shape_tuple(shape), mean, stddev, -2.0,
                      2.0, _float_dtype(dtype, "stateless_truncated_normal"))


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0,
                                             maxvals=2.0, name=None):
    """Normal(means, stddevs) draws within [minvals, maxvals] (each broadcast to ``shape``)."""
    host = [np.asarray(v.numpy() if hasattr(v, "numpy") else v, np.float64)
            for v in (means, stddevs, minvals, maxvals)]
    mean, std, low, high = (np.broadcast_to(v, as_shape_tuple(shape)) for v in host)
    if (std <= 0).any() or (low >= high).any():
        from . import errors
        raise errors.InvalidArgumentError("Invalid parameters: stddevs must be positive and "
                                          "minvals below maxvals")
    return _stateless(seed, _samplers.truncated_normal, as_shape_tuple(shape), mean, std,
                      (low - mean) / std, (high - mean) / std, float32)


def stateless_categorical(logits, num_samples, seed, dtype="int64", name=None):
    return _stateless(seed, _samplers.categorical, logits, num_samples, dtype)


def stateless_binomial(shape, seed, counts, probs, output_dtype="int32", name=None):
    """Binomial(counts, probs) draws of ``shape``, which must end with their broadcast shape."""
    shape = as_shape_tuple(shape)
    check_shape_ends_with(shape, counts, probs)
    return _stateless(seed, _samplers.binomial, shape, counts, probs, output_dtype)


def stateless_gamma(shape, seed, alpha, beta=None, dtype=float32, name=None):
    """Gamma(alpha, rate beta) draws of ``shape``, which must end with alpha and beta's
    broadcast shape."""
    shape = as_shape_tuple(shape)
    check_shape_ends_with(shape, alpha, beta)
    return _stateless(seed, _samplers.gamma, shape, alpha, beta,
                      _float_dtype(dtype, "stateless_gamma"))


def stateless_poisson(shape, seed, lam, dtype="int32", name=None):
    shape = as_shape_tuple(shape)
    check_shape_ends_with(shape, lam)
    return _stateless(seed, _samplers.poisson, shape, lam, dtype)


def _seed_tensor(pairs, seed):
    """Seed pairs in the seed's integer dtype (int32 for a Python list, as TF converts one)."""
    from ._convert import convert_to_tensor
    dtype = np.int64 if str(getattr(getattr(seed, "dtype", None), "name",
                                    getattr(seed, "dtype", "int32"))) == "int64" else np.int32
    return convert_to_tensor(np.asarray(pairs, np.uint64).view(np.int64).astype(dtype))


def split(seed, num=2, alg="auto_select"):
    """``tf.random.split``: ``num`` new seed pairs (a (num, 2) tensor of the seed's dtype)
    drawn from ``seed``'s stream."""
    values = _stateless(seed, _samplers.random_int64, (int(num), 2))
    return _seed_tensor(values.view(np.uint64), seed)


def fold_in(seed, data, alg="auto_select"):
    """``tf.random.fold_in``: a new seed pair from ``seed`` and the integer ``data`` (the same
    inputs, the same pair), in data's dtype (int32 for a Python int) as TF's."""
    a, b = _samplers.seed_pair(seed)
    mixed = _samplers._mixed(_samplers.key_of([a, b]) ^ _samplers._mixed(int(data)
                                                                         & _samplers._MASK64))
    return _seed_tensor([mixed >> 32, mixed & 0xFFFFFFFF], data)  # TF: data's dtype


__getattr__ = _unsupported.module_getattr(__name__, "tf.random", {})
