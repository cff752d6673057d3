"""``tf.nn.isotonic_regression``: the closest non-increasing (or non-decreasing) sequence to
each row, in the least-squares sense.

The pool-adjacent-violators algorithm finds the blocks on the host; each output entry is then
the mean of its block, computed as one batched product with a block-averaging matrix, so the
gradient is the block average of the incoming gradient (TF's gradient).
"""
import collections

import numpy as np

from . import _C
from ._convert import convert_to_tensor
from ._tensor import tensor

__all__ = ["isotonic_regression"]

IsotonicRegression = collections.namedtuple("IsotonicRegression", ["output", "segments"])


def _blocks(row, decreasing):
    """The block index of each entry of ``row`` under pool-adjacent-violators."""
    sums, counts = [], []
    for value in row.tolist():
        sums.append(value)
        counts.append(1)
        while len(sums) > 1 and ((sums[-2] / counts[-2] < sums[-1] / counts[-1]) if decreasing
                                 else (sums[-2] / counts[-2] > sums[-1] / counts[-1])):
            last_sum, last_count = sums.pop(), counts.pop()
            sums[-1] += last_sum
            counts[-1] += last_count
    return np.repeat(np.arange(len(counts)), counts)


def isotonic_regression(inputs, decreasing=True, axis=-1):
    """(output, int32 segments) along ``axis``: output is the isotonic fit, segments the block
    of each entry (0, 1, ... per row)."""
    x = convert_to_tensor(inputs)
    axis = axis % x.ndim
    moved = _C.transpose(x, axis, x.ndim - 1) if axis != x.ndim - 1 else x
    n = moved.shape[-1]
    rows = int(np.prod(moved.shape[:-1], dtype=np.int64))
    flat = _C.reshape(_C.contiguous(moved), [rows, n])
    values = _C.detach(flat).numpy().astype(np.float64)
    segments = np.stack([_blocks(r, decreasing) for r in values]) if rows else \
        np.zeros((0, n), np.int64)
    same = segments[:, :, None] == segments[:, None, :]
    averaging = same / same.sum(-1, keepdims=True)
    fitted = _C.matmul(tensor(averaging.astype(np.float32), dtype=x._dtype_name,
                              device=x._device_name), _C.expand_dims(flat, -1))
    out = _C.reshape(fitted, list(moved.shape))
    ids = tensor(segments.reshape(moved.shape).astype(np.int32), device=x._device_name)
    if axis != x.ndim - 1:
        out, ids = (_C.transpose(t, axis, x.ndim - 1) for t in (out, ids))
    return IsotonicRegression(out, ids)
