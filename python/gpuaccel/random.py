"""``tf.random`` / ``torch.manual_seed`` names over the counter-based generator.

Numbers come from Philox-4x32-10 keyed by the seed and indexed by a running counter, so the
same seed gives the same numbers on every device and with any number of threads."""
from . import _C
from ._tensor import _device_name, _dtype_name, _shape_arg, set_seed
from .dtypes import float32

__all__ = ["set_seed", "manual_seed", "normal", "uniform"]

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


def uniform(shape, minval=0.0, maxval=1.0, dtype=float32, seed=None, device=None):
    """``tf.random.uniform(shape)`` in [minval, maxval)."""
    if seed is not None:
        raise ValueError("per-op seeds are not supported; call gpuaccel.random.set_seed(seed)")
    if not maxval > minval:
        raise ValueError(f"maxval ({maxval}) must be greater than minval ({minval})")
    t = _C.tensor_random("uniform", _shape_arg(_as_tuple(shape)), _dtype_name(dtype), _device_name(device))
    if (minval, maxval) != (0.0, 1.0):
        t = t * (maxval - minval) + minval
    return t
