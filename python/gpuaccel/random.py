"""``tf.random`` / ``torch.manual_seed`` names over the counter-based generator.

Numbers come from Philox-4x32-10 keyed by the seed and indexed by a running counter, so the
same seed gives the same numbers on every device and with any number of threads."""
import numpy as np

from . import _C
from . import _unsupported
from ._tensor import _device_name, _dtype_name, _shape_arg, set_seed
from .dtypes import as_dtype, float32

__all__ = ["set_seed", "manual_seed", "normal", "uniform", "shuffle"]

manual_seed = set_seed


def _as_tuple(shape):
    return tuple(shape) if isinstance(shape, (list, tuple)) else (shape,)


def normal(shape, mean=0.0, stddev=1.0, dtype=float32, seed=None, device=None):
    """``tf.random.normal(shape)``. A per-call ``seed`` is not supported (use set_seed)."""
    if seed is not None:
        raise ValueError("per-op seeds are not supported; call gpuaccel.random.set_seed(seed)")
    t = _C.tensor_random("normal", _shape_arg(_as_tuple(shape)), _dtype_name(dtype), _device_name(device))
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
    t = _C.tensor_random("uniform", _shape_arg(_as_tuple(shape)), _dtype_name(dtype), _device_name(device))
    if (minval, maxval) != (0.0, 1.0):
        t = t * (maxval - minval) + minval
    return t


def _uniform_integers(shape, minval, maxval, dtype, device):
    """TF's integer ``uniform``: ``maxval`` is required and excluded."""
    if maxval is None:
        raise ValueError(f"Must specify maxval for integer dtype {as_dtype(dtype).name}")
    from ._creation import randint
    return randint(int(minval), int(maxval), tuple(shape), dtype=dtype, device=device)


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


__getattr__ = _unsupported.module_getattr(__name__, "tf.random", {
    "truncated_normal": "normal(...) clipped with clip_by_value, or keras.initializers",
    "categorical": "np.random on probabilities from .numpy()",
    "Generator": "set_seed plus the module's functions",
})
