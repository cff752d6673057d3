"""``tf.clip_by_norm`` and ``tf.clip_by_global_norm``: gradient clipping by L2 norm as a
training loop written by hand calls it (Keras's optimizers clip inside their C++ step through
``clipnorm`` / ``global_clipnorm`` instead), composed from differentiable ops.
"""
import numbers

from . import _C
from . import math as _math
from ._array_ops import ones_like, where
from ._convert import convert_to_tensor


def _clip_norm(value):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value < 0:
        raise ValueError(f"clip_norm must be a non-negative number, got {value!r}")
    return float(value)


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """``t * clip_norm / max(l2norm(t), clip_norm)``, the norm over ``axes`` (all by default);
    an all-zero tensor stays zero (the norm's gradient is not taken at 0)."""
    t, clip_norm = convert_to_tensor(t), _clip_norm(clip_norm)
    squares = _C.reduce("sum", _C.unary("square", t), None if axes is None else list(axes), True)
    nonzero = _math.greater(squares, 0.0)
    norm = where(nonzero, _C.unary("sqrt", where(nonzero, squares, ones_like(squares))),
                 squares)
    return t * clip_norm / _math.maximum(norm, clip_norm)


def global_norm(t_list):
    """sqrt of the summed squares of every tensor in ``t_list`` (None entries skipped)."""
    tensors = [convert_to_tensor(t) for t in t_list if t is not None]
    if not tensors:
        raise ValueError("global_norm needs at least one tensor, got none")
    return _C.unary("sqrt", _math.add_n([_C.reduce("sum", _C.unary("square", t), None, False)
                                         for t in tensors]))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """``([t * clip_norm / max(global_norm, clip_norm) for t in t_list], global_norm)``; None
    entries stay None."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"clip_by_global_norm needs a list of tensors, got "
                        f"{type(t_list).__name__}")
    clip_norm = _clip_norm(clip_norm)
    norm = global_norm(t_list) if use_norm is None else convert_to_tensor(use_norm)
    scale = clip_norm / _math.maximum(norm, clip_norm)
    return [None if t is None else convert_to_tensor(t) * scale for t in t_list], norm
