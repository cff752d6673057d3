"""Rows reduced into segments on the backend's row scatter (cpp/ops/nn.h: segment_sum_rows,
segment_extreme_rows, segment_prod_rows), for every dtype the faces offer: what TF's segment
ops and scatters and PyTorch's ``scatter_reduce``/``index_reduce``/``index_copy`` are built on.
Cost and memory grow with the rows, never with rows x segments (the one-hot products these
replaced asked ``indices x size`` elements).

The kernels take floating, int32 and int64 rows; uint8/int8/int16 and bool are reduced in int32
and brought back here: sums and products wrap to the narrow dtype (two's complement, as PyTorch
and TF; the int32 result wraps consistently since 2^8 and 2^16 divide 2^32), and a max/min is
clipped to the dtype's range (an empty segment's int32 bound becomes the dtype's).
"""
import numpy as np

from . import _C
from ._python_function import record_outputs

_WIDENED = ("uint8", "int8", "int16", "bool")

REDUCTIONS = ("sum", "prod", "max", "min")


def segment_reduce(rows, ids, num_segments, reduction):
    """(num_segments, D) in ``rows``' dtype: the ``reduction`` (sum, prod, max or min) of the
    rows (N, D) whose id (N,) is that segment, combined in order of the ids; an empty segment
    holds 0, 1, or the dtype's lowest (max) / highest (min) value; ids outside
    [0, num_segments) count nowhere. Differentiable in floating rows."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    dtype = rows._dtype_name
    work = _C.cast(rows, "int32") if dtype in _WIDENED else rows
    if reduction == "sum":
        out = _C.segment_sum_rows(work, ids, num_segments)
    elif reduction == "prod":
        out = _C.segment_prod_rows(work, ids, num_segments)
    else:
        out = _C.segment_extreme_rows(work, ids, num_segments, reduction == "max")
    if work is rows:
        return out
    if reduction in ("max", "min"):
        low, high = (0, 1) if dtype == "bool" else (np.iinfo(dtype).min, np.iinfo(dtype).max)
        out = _C.binary("minimum", _C.binary("maximum", out, _C.scalar_like(low, out)),
                        _C.scalar_like(high, out))
    return _C.cast(out, dtype)


def segment_counts(ids, num_segments, device):
    """(num_segments, 1) int32: how many of ``ids`` name each segment."""
    ones = _C.tensor_full([int(np.prod(ids.shape, dtype=np.int64)), 1], 1.0, "int32", device)
    return _C.segment_sum_rows(ones, ids, num_segments)


def _last_writer(ids, num_segments, device):
    """(num_segments, 1) int64: for each segment, the position in ``ids`` of the last id naming
    it, or -1 where none does (a scatter's "a later write wins", as PyTorch's and TF's CPU loops
    run)."""
    count = int(np.prod(ids.shape, dtype=np.int64))
    positions = _C.reshape(_C.tensor_arange(0, count, 1, "int64", device), [count, 1])
    latest = _C.segment_extreme_rows(positions, ids, num_segments, True)
    return _C.binary("maximum", latest, _C.scalar_like(-1, latest))


def last_write(self_rows, destinations, value_rows):
    """``self_rows`` (S, W) with each of ``value_rows`` (K, W) written over the row its
    destination (K,) names, a later write winning. The gradient is PyTorch's scatter's and TF's
    tensor_scatter_nd_update's: self's rows get it where nothing was written, and every write
    gets its destination's, an overwritten one too."""
    if value_rows.shape[0] == 0:
        return self_rows
    segments, device = self_rows.shape[0], self_rows._device_name
    winner = _last_writer(destinations, segments, device)
    written = _C.binary("greater", winner, _C.scalar_like(-1, winner))
    picks = _C.reshape(_C.binary("maximum", winner, _C.scalar_like(0, winner)), [-1])
    out = _C.where(written, _C.embedding(picks, _C.detach(value_rows)), _C.detach(self_rows))

    def backward(grads):
        g = grads[0]
        return [_C.where(written, _C.scalar_like(0, g), g), _C.embedding(destinations, g)]

    record_outputs("ScatterUpdate", [self_rows, value_rows], [out], backward)
    return out
