"""``tf.random.Generator``: a random stream object with its own state, and the global one.

A Generator owns a (key, counter) pair of gpuaccel's counter-based generator; each draw swaps
it in (``_random_samplers.keyed_stream``), draws, and keeps the advanced counter, so two
Generators from the same seed give the same sequence and neither disturbs ``set_seed``'s global
stream. Its ``state`` is an int64 tensor [key, counter, 0]; ``create_rng_state`` gives TF's
initial state layout for a seed ([seed, 0, 0] for Philox, [seed, 0] for ThreeFry).
"""
import enum
import os

import numpy as np

from . import _C, _random_samplers as samplers
from ._convert import convert_to_tensor
from .dtypes import float32

__all__ = ["Algorithm", "Generator", "get_global_generator", "set_global_generator",
           "create_rng_state"]


class Algorithm(enum.Enum):
    """TF's RNG algorithm names (gpuaccel draws from Philox-4x32-10 whichever is named)."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


def _algorithm(alg):
    if alg is None:
        return Algorithm.PHILOX
    if isinstance(alg, Algorithm):
        return alg
    if isinstance(alg, str):
        named = {"philox": Algorithm.PHILOX, "threefry": Algorithm.THREEFRY,
                 "auto_select": Algorithm.AUTO_SELECT}
        if alg.lower() in named:
            return named[alg.lower()]
    elif isinstance(alg, int) and alg in (1, 2, 3):
        return Algorithm(alg)
    raise ValueError(f"Argument `alg` got unsupported value {alg}. Supported values are "
                     f"{[a.name.lower() for a in Algorithm]} or Algorithm members.")


def create_rng_state(seed, alg):
    """``tf.random.create_rng_state``: the initial state TF gives a seed: an int64 tensor
    [seed, 0, 0] for Philox (and auto_select), [seed, 0] for ThreeFry."""
    size = 2 if _algorithm(alg) is Algorithm.THREEFRY else 3
    state = np.zeros(size, np.int64)
    state[:1] = np.array([int(seed) & samplers._MASK64], np.uint64).view(np.int64)
    return convert_to_tensor(state)


class Generator:
    """``tf.random.Generator``: ``from_seed(seed)``, ``from_non_deterministic_state()``,
    ``from_state(state, alg)``; draws ``normal``, ``uniform``, ``truncated_normal``,
    ``binomial``, ``uniform_full_int``; ``make_seeds`` and ``split`` for stateless seeds and
    independent child generators."""

    def __init__(self, copy_from=None, state=None, alg=None):
        if copy_from is not None:
            self._key, self._counter, self._alg = copy_from._key, copy_from._counter, \
                copy_from._alg
            return
        if state is None:
            raise ValueError("Generator needs copy_from or state (or use Generator.from_seed)")
        values = np.asarray(state.numpy() if hasattr(state, "numpy") else state).astype(np.int64)
        self._alg = _algorithm(alg)
        self._key = samplers._mixed(int(values[0]) & samplers._MASK64)
        self._counter = int(values[1]) & samplers._MASK64 if values.size > 1 else 0

    @classmethod
    def from_seed(cls, seed, alg=None):
        return cls(state=create_rng_state(seed, alg or Algorithm.PHILOX), alg=alg)

    @classmethod
    def from_state(cls, state, alg):
        return cls(state=state, alg=alg)

    @classmethod
    def from_non_deterministic_state(cls, alg=None):
        return cls.from_seed(int.from_bytes(os.urandom(8), "little") >> 1, alg)

    @classmethod
    def from_key_counter(cls, key, counter, alg):
        generator = cls.from_seed(0, alg)
        generator._key = int(np.asarray(key).reshape(-1)[0]) & samplers._MASK64
        generator._counter = int(np.asarray(counter).reshape(-1)[0]) & samplers._MASK64
        return generator

    @property
    def algorithm(self):
        return self._alg.value

    @property
    def state(self):
        """int64 [key, counter, 0] (the key and counter as two's-complement int64)."""
        return convert_to_tensor(np.array([self._key, self._counter, 0],
                                          np.uint64).view(np.int64))

    @property
    def key(self):
        return convert_to_tensor(np.array([self._key], np.uint64).view(np.int64))

    def reset_from_seed(self, seed):
        fresh = Generator.from_seed(seed, self._alg)
        self._key, self._counter = fresh._key, fresh._counter

    def _draw(self, sampler, *args):
        with samplers.keyed_stream(self._key, self._counter) as reached:
            out = sampler(*args)
            self._counter = reached()
        return out

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=float32, name=None):
        return self._draw(samplers.normal, shape, mean, stddev, dtype)

    def uniform(self, shape, minval=0, maxval=None, dtype=float32, name=None):
        return self._draw(samplers.uniform, shape, minval, maxval, dtype)

    def uniform_full_int(self, shape, dtype="int64", name=None):
        """Integers over the dtype's whole range (int64 by default: gpuaccel has no uint64,
        TF's default)."""
        return self._draw(samplers.full_range_integers, shape, dtype)

    def truncated_normal(self, shape, mean=0.0, stddev=1.0, dtype=float32, name=None):
        return self._draw(samplers.truncated_normal, tuple(shape), mean, stddev, -2.0, 2.0,
                          dtype)

    def binomial(self, shape, counts, probs, dtype="int32", name=None):
        samplers.check_shape_ends_with(tuple(shape), counts, probs)
        return self._draw(samplers.binomial, tuple(shape), counts, probs, dtype)

    def make_seeds(self, count=1):
        """An int64 (2, count) tensor of stateless seeds: random first row, zero second (as
        TF's)."""
        seeds = np.zeros((2, int(count)), np.int64)
        seeds[0] = self._draw(lambda: samplers.random_int64((int(count),)))
        return convert_to_tensor(seeds)

    def split(self, count=1):
        """``count`` new Generators with independent streams, keyed from this one's draws."""
        keys = self._draw(lambda: samplers.random_int64((int(count),)))
        return [Generator.from_key_counter(int(k), 0, self._alg) for k in keys.reshape(-1)]


_global = []


def get_global_generator():
    """``tf.random.get_global_generator``: the process's Generator (seeded from
    ``set_seed``'s seed when one was set, as TF, else non-deterministically)."""
    if not _global:
        seed = _C.random_seed()
        _global.append(Generator.from_seed(seed))
    return _global[0]


def set_global_generator(generator):
    """``tf.random.set_global_generator``: later ``get_global_generator`` calls return it."""
    if not isinstance(generator, Generator):
        raise TypeError(f"set_global_generator needs a Generator, got {type(generator).__name__}")
    _global[:] = [generator]

