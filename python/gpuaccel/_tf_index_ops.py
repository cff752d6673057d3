"""TensorFlow's data-dependent indexing: ``tf.strided_slice``, ``tf.tensor_scatter_nd_*`` and
``tf.scatter_nd``, ``tf.boolean_mask``, ``tf.dynamic_partition``/``dynamic_stitch`` and
``tf.unique`` (the last on the sort kernel, ``_unique``).

Each reads its integer indices on the host (as gather_nd does), checks them with TF's errors,
and turns them into one gather of the values (a slice where it is a plain range) or one row
scatter (``_row_scatter``: the tensor's rows and the updates reduced into the rows they land
on), so float results stay differentiable through the gather's and the scatter's gradients.
"""
import collections

import numpy as np

from . import _C, _row_scatter, _unique, errors
from ._array_ops import cast, concat, gather, reshape
from ._convert import convert_to_tensor
from ._tensor import Tensor, tensor

__all__ = ["strided_slice", "tensor_scatter_nd_add", "tensor_scatter_nd_sub",
           "tensor_scatter_nd_min", "tensor_scatter_nd_max", "tensor_scatter_nd_update",
           "dynamic_partition", "dynamic_stitch", "unique", "unique_with_counts", "scatter_nd",
           "boolean_mask"]


def _host_ints(values, what):
    array = np.asarray(values.numpy() if isinstance(values, Tensor) else values)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{what} must be int32 or int64, got {array.dtype}")
    return array.astype(np.int64)


def _picked(table, index):
    """gather(table, index) for any index shape, empty included."""
    if index.size == 0:
        return _C.tensor_full(list(index.shape) + list(table.shape[1:]), 0.0,
                              table._dtype_name, table._device_name)
    return gather(table, tensor(np.ascontiguousarray(index, np.int64),
                                device=table._device_name), axis=0)


# ---- strided_slice ----

def _python_index(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                  shrink_axis_mask):
    """TF's strided-slice spec as the NumPy index it means (TF's __getitem__ builds the spec
    from that index, so the two read alike)."""
    items = []
    for i, (b, e, s) in enumerate(zip(begin, end, strides)):
        if ellipsis_mask >> i & 1:
            items.append(Ellipsis)
        elif new_axis_mask >> i & 1:
            items.append(None)
        elif shrink_axis_mask >> i & 1:
            items.append(int(b))
        else:
            if s == 0:
                raise errors.InvalidArgumentError(f"strides[{i}] must be non-zero")
            items.append(slice(None if begin_mask >> i & 1 else int(b),
                               None if end_mask >> i & 1 else int(e), int(s)))
    return items


def _indexed(x, items):
    """``x[items]`` with NumPy's meaning of ints, slices (any step), None and one Ellipsis: a
    slice per positive-step range, a gather per reversed one."""
    used = sum(1 for item in items if item is not None and item is not Ellipsis)
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items = items[:at] + [slice(None)] * (x.ndim - used) + items[at + 1:]
    else:
        items = items + [slice(None)] * (x.ndim - used)
    out, axis, final_shape = x, 0, []
    for item in items:
        if item is None:
            final_shape.append(1)
            continue
        size = x.shape[axis]
        if isinstance(item, int):
            if not -size <= item < size:
                raise errors.InvalidArgumentError(
                    f"slice index {item} of dimension {axis} out of bounds.")
            item = slice(item % size, item % size + 1, 1)
        else:
            final_shape.append(len(range(*item.indices(size))))
        start, stop, step = item.indices(size)
        picks = np.arange(start, stop, step)
        if step > 0 and (step == 1 or picks.size <= 1):
            out = _C.slice(out, [(0, n, 1) for n in out.shape[:axis]] +
                           [(start, max(stop, start), 1)])
        elif picks.size:
            out = gather(out, tensor(picks, device=out._device_name), axis=axis)
        else:
            out = _C.slice(out, [(0, n, 1) for n in out.shape[:axis]] + [(0, 0, 1)])
        axis += 1
    return reshape(_C.contiguous(out), final_shape)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """``tf.strided_slice``: input_[begin:end:strides] per axis, with TF's masks (a set bit
    ignores that axis's begin or end, stands for '...', adds an axis, or takes the single
    index begin[i] and drops the axis)."""
    x = convert_to_tensor(input_)
    begin, end = _host_ints(begin, "begin"), _host_ints(end, "end")
    strides = np.ones_like(begin) if strides is None else _host_ints(strides, "strides")
    if not begin.shape == end.shape == strides.shape or begin.ndim != 1:
        raise ValueError(f"begin, end and strides must be vectors of one length, got shapes "
                         f"{begin.shape}, {end.shape} and {strides.shape}")
    if bin(ellipsis_mask).count("1") > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    return _indexed(x, _python_index(begin, end, strides, begin_mask, end_mask, ellipsis_mask,
                                     new_axis_mask, shrink_axis_mask))


# ---- tensor_scatter_nd_* ----

def _scatter_positions(tensor, indices, updates, op):
    """The flat row of ``tensor`` (seen as (prod of its first K axes, rest)) each update lands
    on, with TF's checks, and the updates as rows."""
    index = _host_ints(indices, "indices")
    if index.ndim < 1 or not 1 <= index.shape[-1] <= tensor.ndim:
        raise errors.InvalidArgumentError(
            f"indices must end in index vectors of 1 to {tensor.ndim} entries, got shape "
            f"{list(index.shape)}")
    if updates._dtype_name != tensor._dtype_name:
        raise errors.InvalidArgumentError(
            f"cannot compute {op} as input #2(zero-based) was expected to be a "
            f"{tensor._dtype_name} tensor but is a {updates._dtype_name} tensor")
    depth = index.shape[-1]
    expected = list(index.shape[:-1]) + list(tensor.shape[depth:])
    if list(updates.shape) != expected:
        raise errors.InvalidArgumentError(
            f"updates must have shape indices.shape[:-1] + tensor.shape[{depth}:] = {expected}, "
            f"got {list(updates.shape)}")
    leading = np.asarray(tensor.shape[:depth], np.int64)
    vectors = index.reshape(-1, depth)
    outside = ((vectors < 0) | (vectors >= leading)).any(axis=1)
    if outside.any():
        i = int(np.argmax(outside))
        raise errors.InvalidArgumentError(
            f"indices[{i}] = {vectors[i].tolist()} does not index into shape "
            f"{list(tensor.shape)}")
    positions = (np.ravel_multi_index(tuple(vectors.T), tuple(leading))
                 if vectors.size else np.zeros(0, np.int64))
    rows = int(np.prod(leading))
    tail = list(tensor.shape[depth:])
    return positions, rows, reshape(updates, [len(positions)] + tail), tail


def _scatter(target, indices, updates, op, reduction):
    """Each output row reduces (``reduction``: sum, min or max) the target's row with the
    updates landing on it; 'update' takes the last update landing there, else the row."""
    x = convert_to_tensor(target)
    # A tensor keeps its dtype (a mismatch is an error); arrays and lists take the tensor's, as
    # TF converts an op's non-tensor inputs to its dtype.
    u = updates if isinstance(updates, Tensor) else convert_to_tensor(np.asarray(updates),
                                                                      dtype=x.dtype)
    positions, rows, update_rows, tail = _scatter_positions(x, indices, u, op)
    count = len(positions)
    width = int(np.prod(tail, dtype=np.int64))
    own_rows, update_rows = reshape(x, [rows, width]), reshape(update_rows, [count, width])
    if reduction == "update":  # a later update to a row wins, as TF's CPU
        landing = tensor(positions.astype(np.int64), device=x._device_name)
        return reshape(_row_scatter.last_write(own_rows, landing, update_rows), list(x.shape))
    # x's own rows first, then the updates, into one row scatter: each output row combines its
    # own row with the updates landing on it in order (TF's CPU loop), and a max/min's gradient
    # splits evenly between the tied entries, x's included (TF's rule).
    data = concat([own_rows, update_rows], 0)
    ids = tensor(np.concatenate([np.arange(rows, dtype=np.int64), positions.astype(np.int64)]),
                 device=x._device_name)
    return reshape(_row_scatter.segment_reduce(data, ids, rows, reduction), list(x.shape))


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tf.tensor_scatter_nd_add``: ``tensor`` with each update added at its index (repeated
    indices add up)."""
    return _scatter(tensor, indices, updates, "TensorScatterAdd", "sum")


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tf.tensor_scatter_nd_sub``: ``tensor`` with each update subtracted at its index."""
    return _scatter(tensor, indices, _C.unary("neg", convert_to_tensor(updates)),
                    "TensorScatterSub", "sum")


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """``tf.tensor_scatter_nd_min``: each indexed entry the minimum of itself and its updates."""
    return _scatter(tensor, indices, updates, "TensorScatterMin", "min")


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """``tf.tensor_scatter_nd_max``: each indexed entry the maximum of itself and its updates."""
    return _scatter(tensor, indices, updates, "TensorScatterMax", "max")


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tf.tensor_scatter_nd_update``: ``tensor`` with the entries at ``indices`` replaced by
    ``updates`` (for a repeated index, the last update; every update gets its entry's gradient,
    an overwritten one too, as TF's)."""
    return _scatter(tensor, indices, updates, "TensorScatterUpdate", "update")


def scatter_nd(indices, updates, shape, name=None):
    """``tf.scatter_nd``: a zero tensor of ``shape`` (updates' dtype) with each update added at
    its index (repeated indices add up); differentiable in the updates."""
    u = convert_to_tensor(updates)
    dims = [int(d) for d in np.asarray(shape.numpy() if isinstance(shape, Tensor) else shape)
            .reshape(-1)]
    if any(d < 0 for d in dims):
        raise errors.InvalidArgumentError(f"shape must be non-negative, got {dims}")
    zeros = _C.tensor_full(dims, 0.0, u._dtype_name, u._device_name)
    return _scatter(zeros, indices, u, "ScatterNd", "sum")


# ---- boolean_mask ----

def boolean_mask(tensor, mask, axis=None, name=None):
    """``tf.boolean_mask``: the entries (or slices) of ``tensor`` where the K-D ``mask`` holds,
    its K dimensions (from ``axis``, default 0) flattened into one; differentiable (a gather)."""
    x = convert_to_tensor(tensor)
    m = np.asarray(mask.numpy() if isinstance(mask, Tensor) else mask)
    if m.dtype != np.bool_:
        raise TypeError(f"mask must be a bool tensor, got {m.dtype}")
    if m.ndim == 0:
        raise ValueError("mask cannot be scalar.")
    axis = 0 if axis is None else int(axis) % max(x.ndim, 1)
    covered = list(x.shape[axis:axis + m.ndim])
    if covered != list(m.shape):
        raise ValueError(f"Shapes {x.shape[axis:axis + m.ndim]} and {list(m.shape)} are "
                         f"incompatible")
    merged = list(x.shape[:axis]) + [int(m.size)] + list(x.shape[axis + m.ndim:])
    flat = reshape(x, merged)
    positions = np.ascontiguousarray(np.flatnonzero(m.reshape(-1)), np.int64)
    return gather(flat, _C.tensor_from_numpy(positions, x._device_name, None, True), axis=axis)


# ---- dynamic_partition / dynamic_stitch ----

def dynamic_partition(data, partitions, num_partitions, name=None):
    """``tf.dynamic_partition``: a list of ``num_partitions`` tensors, the i-th holding (in
    order) the slices of ``data`` whose partition is i."""
    x = convert_to_tensor(data)
    part = _host_ints(partitions, "partitions")
    if list(x.shape[:part.ndim]) != list(part.shape):
        raise errors.InvalidArgumentError(
            f"data.shape must start with partitions.shape, got data.shape = {list(x.shape)}, "
            f"partitions.shape = {list(part.shape)}")
    flat = part.reshape(-1)
    bad = np.flatnonzero((flat < 0) | (flat >= num_partitions))
    if bad.size:
        raise errors.InvalidArgumentError(
            f"partitions[{bad[0]}] = {flat[bad[0]]} is not in [0, {num_partitions})")
    table = reshape(x, [flat.size] + list(x.shape[part.ndim:]))
    return [_picked(table, np.flatnonzero(flat == i)) for i in range(num_partitions)]


def dynamic_stitch(indices, data, name=None):
    """``tf.dynamic_stitch``: merged[indices[m][i]] = data[m][i] (a later m wins for a repeated
    index); length max(index) + 1, rows no index names are zero. An overwritten entry gets no
    gradient (TF's gradient gives it the gradient of the entry that overwrote it)."""
    if len(indices) != len(data):
        raise ValueError(f"dynamic_stitch needs one data tensor per indices tensor, got "
                         f"{len(indices)} and {len(data)}")
    index_arrays = [_host_ints(i, "indices") for i in indices]
    tensors = [convert_to_tensor(d) for d in data]
    tail = list(tensors[0].shape[index_arrays[0].ndim:])
    rows = []
    for m, (index, values) in enumerate(zip(index_arrays, tensors)):
        if list(values.shape) != list(index.shape) + tail:
            raise errors.InvalidArgumentError(
                f"data[{m}].shape = {list(values.shape)} does not start with indices[{m}].shape "
                f"= {list(index.shape)} followed by {tail}")
        rows.append(reshape(values, [index.size] + tail))
    flat = np.concatenate([i.reshape(-1) for i in index_arrays]) if index_arrays else \
        np.zeros(0, np.int64)
    if (flat < 0).any():
        raise errors.InvalidArgumentError(f"indices must be non-negative, got {flat.tolist()}")
    size = int(flat.max()) + 1 if flat.size else 0
    zero_row = flat.size
    chosen = np.full(size, zero_row, np.int64)
    chosen[flat] = np.arange(flat.size)  # the last write to a position wins
    like = tensors[0]
    table = concat(rows + [_C.tensor_full([1] + tail, 0.0, like._dtype_name, like._device_name)],
                   0)
    return _picked(table, chosen)


# ---- unique ----

Unique = collections.namedtuple("Unique", ["y", "idx"])
UniqueWithCounts = collections.namedtuple("UniqueWithCounts", ["y", "idx", "count"])

def _unique_parts(x, out_idx):
    x = convert_to_tensor(x)
    if x.ndim != 1:
        raise errors.InvalidArgumentError("unique expects a 1D vector.")
    g = _unique.unique(x, first_appearance=True)  # TF keeps first-appearance order
    return g.values, cast(g.inverse, out_idx), cast(g.counts, out_idx)


def unique(x, out_idx="int32", name=None):
    """``tf.unique``: (y, idx): the distinct entries of the 1-D ``x`` in order of first
    appearance, and for each entry of x its position in y."""
    y, idx, _ = _unique_parts(x, out_idx)
    return Unique(y, idx)


def unique_with_counts(x, out_idx="int32", name=None):
    """``tf.unique_with_counts``: (y, idx, count), count[i] how often y[i] appears in x."""
    return UniqueWithCounts(*_unique_parts(x, out_idx))
