"""``keras.utils``: the helpers course code calls from ``keras.utils``.

``set_random_seed`` seeds every generator a training run draws from, as Keras 3's does:
Python's ``random``, NumPy's global generator and gpuaccel's (weight initializers, dropout,
``fit``'s shuffling, which draws its seed from gpuaccel's generator). With
``gpuaccel.config.experimental.enable_op_determinism()`` two runs on the same machine then
produce the same weights.
"""
import numbers
import random as _python_random

import numpy as np

from .. import random as _gpuaccel_random

__all__ = ["set_random_seed"]


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy's and gpuaccel's generators with ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError("Expected `seed` argument to be an integer. "
                         f"Received: seed={seed!r} (of type {type(seed)})")
    if not 0 <= seed < 2 ** 32:
        # NumPy's legacy global seed takes 32 bits; Keras passes the seed straight to it.
        raise ValueError(f"`seed` must be in [0, 2**32). Received: seed={seed}")
    seed = int(seed)
    _python_random.seed(seed)
    np.random.seed(seed)
    _gpuaccel_random.set_seed(seed)
