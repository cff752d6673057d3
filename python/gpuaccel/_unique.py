"""The distinct entries (or rows) of a tensor, shared by ``tf.unique``/``unique_with_counts``,
``torch.unique``/``unique_consecutive`` and ``keras.ops.unique``.

Composed of device ops: the stable sort kernel orders the entries (rows: one stable sort per
column, last column first, which leaves them in lexicographic order), adjacent entries are
compared on the device, and take_along_last_axis gathers by the positions found. The one host
read is the "differs from its neighbour" flags (one byte an entry): the number of distinct
entries sizes the outputs, so it must reach the host anyway, and the group numbering (a running
count of the flags) is cheap there. A stable order keeps each group's first occurrence first,
which is how TensorFlow's first-appearance order is recovered. NaN differs from itself, so
each NaN is its own entry (TensorFlow's answer).
"""
import collections

import numpy as np

from . import _C

# sorted values (axis first), the inverse (a group per original entry), counts and the
# position of each group's first occurrence: all int64 tensors on x's device.
Groups = collections.namedtuple("Groups", ["values", "inverse", "counts", "first"])


def _int64(array, like):
    return _C.tensor_from_numpy(np.ascontiguousarray(array, np.int64), like._device_name, None,
                                True)


def take(x, positions):
    """x[positions] along axis 0 (positions: an int64 vector tensor), any dtype, on the
    device: the rows of x as the columns take_along_last_axis reads."""
    k = positions.shape[0]
    if x.ndim == 1:
        out = _C.take_along_last_axis(_C.reshape(x, [1, x.shape[0]]), _C.reshape(positions, [1, k]))
        return _C.reshape(out, [k])
    rest = list(x.shape[1:])
    width = int(np.prod(rest, dtype=np.int64))
    columns = _C.contiguous(_C.transpose(_C.reshape(_C.contiguous(x), [x.shape[0], width]), 0, 1))
    index = _C.contiguous(_C.broadcast_to(_C.reshape(positions, [1, k]), [width, k]))
    picked = _C.transpose(_C.take_along_last_axis(columns, index), 0, 1)
    return _C.reshape(_C.contiguous(picked), [k] + rest)


def _lexicographic_order(rows):
    """The stable lexicographic order of the rows of the 2-D ``rows`` (int64 positions)."""
    n, width = rows.shape
    columns = _C.contiguous(_C.transpose(rows, 0, 1))
    order = None
    for j in reversed(range(width)):
        column = _C.reshape(_C.slice(columns, [(j, j + 1, 1), (0, n, 1)]), [n])
        if column._dtype_name == "bool":  # sorted as the 0/1 it holds
            column = _C.cast(column, "int32")
        keys = column if order is None else take(column, order)
        _, step = _C.sort(keys, -1, False)
        order = step if order is None else take(order, step)
    return order


def _differs_from_previous(rows):
    """Host bool flags: row i differs from row i - 1 (row 0: True)."""
    n = rows.shape[0]
    if n < 2:
        return np.ones(n, bool)
    ahead = _C.slice(rows, [(1, n, 1), (0, rows.shape[1], 1)])
    behind = _C.slice(rows, [(0, n - 1, 1), (0, rows.shape[1], 1)])
    if rows._dtype_name in ("bool", "uint8", "int8", "int16"):  # int32 holds these exactly
        ahead, behind = _C.cast(ahead, "int32"), _C.cast(behind, "int32")
    same = _C.cast(_C.binary("equal", ahead, behind), "int32")
    all_same = _C.reduce("min", same, [1], False)
    return np.concatenate([[True], _C.detach(all_same).numpy() == 0])


def _groups(slices, order):
    """Groups of the (n, width) ``slices`` visited in ``order`` (None: as they are)."""
    ordered = slices if order is None else take(slices, order)
    flags = _differs_from_previous(ordered)
    n = flags.size
    starts = np.flatnonzero(flags)
    counts = np.diff(np.append(starts, n))
    group = np.cumsum(flags) - 1
    group_t = _int64(group, slices)
    if order is None:
        inverse, first = group_t, _int64(starts, slices)
    else:
        _, inverse_order = _C.sort(order, -1, False)  # the inverse permutation
        inverse = take(group_t, inverse_order)
        first = take(order, _int64(starts, slices))
    return Groups(take(ordered, _int64(starts, slices)), inverse, _int64(counts, slices), first)


def _as_slices(x, axis):
    """x with ``axis`` first, as (n, width) rows; and the shape of one slice."""
    if axis is None:
        return _C.reshape(_C.contiguous(x), [x.numel(), 1]), []
    moved = _C.contiguous(_C.transpose(x, 0, axis)) if axis else _C.contiguous(x)
    rest = list(moved.shape[1:])
    return _C.reshape(moved, [moved.shape[0], int(np.prod(rest, dtype=np.int64))]), rest


def _restore(values, rest, axis):
    """The distinct (k, width) slices back in x's layout (axis None: a vector)."""
    k = values.shape[0]
    if axis is None:
        return _C.reshape(values, [k])
    out = _C.reshape(values, [k] + rest)
    return _C.contiguous(_C.transpose(out, 0, axis)) if axis else out


def unique(x, axis=None, first_appearance=False):
    """Groups of the entries of ``x`` (flattened; or its slices along ``axis``), distinct
    values in ascending (lexicographic) order, or in order of first appearance."""
    x = _C.detach(x)
    slices, rest = _as_slices(x, axis)
    if slices.shape[0] == 0:
        empty = _int64(np.zeros(0), x)
        return Groups(_restore(slices, rest, axis), empty, empty, empty)
    order = _lexicographic_order(slices)
    g = _groups(slices, order)
    if first_appearance:
        _, by_first = _C.sort(g.first, -1, False)
        _, rank = _C.sort(by_first, -1, False)
        g = Groups(take(g.values, by_first), take(rank, g.inverse), take(g.counts, by_first),
                   take(g.first, by_first))
    return g._replace(values=_restore(g.values, rest, axis))


def unique_consecutive(x, axis=None):
    """Groups of runs of equal neighbouring entries (slices), in their order in x."""
    x = _C.detach(x)
    slices, rest = _as_slices(x, axis)
    if slices.shape[0] == 0:
        empty = _int64(np.zeros(0), x)
        return Groups(_restore(slices, rest, axis), empty, empty, empty)
    g = _groups(slices, None)
    return g._replace(values=_restore(g.values, rest, axis))
