"""``tf.sort``, ``tf.argsort`` and ``tf.math.top_k`` / ``tf.nn.top_k``: TensorFlow's spellings
of the sort kernel (``_C.sort``, stable). TensorFlow sorts along ``axis`` with a ``direction``
string, returns int32 indices, and takes top_k along the last axis only. With NaN, TF's own
order is not a total order (its sort negates and takes top_k); ours puts NaN last ascending and
first descending, as NumPy and PyTorch.
"""
import collections

from . import _C, errors
from ._convert import convert_to_tensor
from ._int_range import check_int

TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])

_DIRECTIONS = {"ASCENDING": False, "DESCENDING": True}


def _descending(direction):
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return _DIRECTIONS[direction]


def _axis(values, axis):
    if values.ndim == 0:
        raise ValueError("sort needs a tensor of rank at least 1, got a scalar")
    return check_int(axis, "axis")


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """``tf.sort``: ``values`` sorted along ``axis`` (equal entries keep their order)."""
    x = convert_to_tensor(values)
    return _C.sort(x, _axis(x, axis), _descending(direction))[0]


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """``tf.argsort``: the int32 indices that sort ``values`` along ``axis`` (always stable)."""
    x = convert_to_tensor(values)
    return _C.cast(_C.sort(x, _axis(x, axis), _descending(direction))[1], "int32")


def top_k(input, k=1, sorted=True, index_type="int32", name=None):  # noqa: A002 -- TF's names
    """``tf.math.top_k``: the ``k`` largest entries along the last axis, largest first, and
    their indices (the lower index first among equal entries, as TensorFlow)."""
    x = convert_to_tensor(input)
    k = check_int(k, "k")
    if x.ndim == 0:
        raise errors.InvalidArgumentError("top_k needs an input of rank at least 1, got a scalar")
    if not 0 <= k <= x.shape[-1]:
        raise errors.InvalidArgumentError(
            f"top_k needs 0 <= k <= the last dimension ({x.shape[-1]}), got k={k}")
    values, indices = _C.sort(x, -1, True)
    return TopKV2(values[..., :k], _C.cast(indices[..., :k], str(index_type)))
