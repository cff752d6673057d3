"""Shape and array ops with TensorFlow's and PyTorch's names and argument names.

The top level ``gpuaccel`` is the TensorFlow face, so where the two frameworks give one name two
meanings (``transpose``, ``split``, ``gather``) the functions here are TensorFlow's, and a call
with PyTorch's arguments (``transpose(x, 0, 1)``, ``split(x, 2, dim=0)``, ``gather(x, 1, idx)``)
raises ``_unsupported.AmbiguousNameError`` instead of guessing; ``gpuaccel.torch`` (built from
``_torch_ops``) has PyTorch's meanings. Everything is composed of recorded C++ ops, so gradients
flow through all of it.
"""
import numbers

import numpy as np

from . import _C
from . import errors
from ._unsupported import ambiguous
from ._convert import as_tensors, convert_to_tensor, python_integer_dtype
from ._creation import full_like as _full_like
from ._int_range import check_int, check_range
from ._stacking import stack_tensors
from ._tensor import Tensor, _dtype_name, _shape_arg, full as _tensor_full
from .dtypes import INTEGER_NAMES

__all__ = ["reshape", "transpose", "expand_dims", "unsqueeze", "squeeze", "concat", "cat",
           "concatenate", "stack", "unstack", "unbind", "split", "chunk", "gather", "cast",
           "where", "clip_by_value", "clamp", "clip", "pad", "tile", "shape", "rank", "size",
           "numel", "flatten", "broadcast_to", "identity", "one_hot", "fill", "ones_like",
           "zeros_like"]


def _int(value, name):
    """An integer argument (an axis, a count) that the bindings take as int64."""
    return check_int(value, name, error=errors.InvalidArgumentError)


def _axis(axis, ndim, name="axis"):
    axis = _int(axis, name)
    if not -ndim <= axis < max(ndim, 1):
        raise errors.InvalidArgumentError(
            f"{name} {axis} is out of range for a tensor of rank {ndim} (expected "
            f"[{-ndim}, {ndim}))")
    return axis % ndim if ndim else 0


def reshape(tensor, shape, name=None):
    """``tf.reshape(tensor, shape)`` / ``torch.reshape(input, shape)``; one entry may be -1."""
    x = convert_to_tensor(tensor)
    if isinstance(shape, Tensor):
        shape = shape.tolist()
    if isinstance(shape, numbers.Integral):
        shape = [shape]
    return _C.reshape(x, _shape_arg(tuple(shape)))


def transpose(a, perm=None, *dims, conjugate=False, name=None, dim0=None, dim1=None):
    """``tf.transpose(a, perm=None)``: reverses the axes by default, or permutes them."""
    x = convert_to_tensor(a)
    if dims or dim0 is not None or dim1 is not None or isinstance(perm, numbers.Integral):
        raise ambiguous("transpose", "tf.transpose(a, perm) (a permutation of all axes)",
                        "torch.transpose(input, dim0, dim1) (swaps two axes)")
    if perm is None:
        return _C.permute(x, list(range(x.ndim))[::-1])
    if isinstance(perm, Tensor):
        perm = perm.tolist()
    perm = [_int(p, "perm") for p in perm]
    if sorted(p % max(x.ndim, 1) for p in perm) != list(range(x.ndim)) or len(perm) != x.ndim:
        raise errors.InvalidArgumentError(
            f"transpose expects perm to be a permutation of 0..{x.ndim - 1}, got {perm}")
    return _C.permute(x, perm)


def swap_axes(input, dim0, dim1):
    """Two axes swapped (``torch.transpose``'s meaning, ``gpuaccel.torch.transpose``)."""
    return _C.transpose(convert_to_tensor(input), _int(dim0, "dim0"), _int(dim1, "dim1"))


def expand_dims(input, axis, name=None):
    """``tf.expand_dims(input, axis)``: a new size-1 axis at ``axis`` (-1 appends)."""
    x = convert_to_tensor(input)
    axis = _int(axis, "axis")
    if not -x.ndim - 1 <= axis <= x.ndim:
        raise errors.InvalidArgumentError(
            f"axis {axis} is out of range for expand_dims on a tensor of rank {x.ndim} "
            f"(expected [{-x.ndim - 1}, {x.ndim}])")
    return _C.expand_dims(x, axis)


def unsqueeze(input, dim):
    """``torch.unsqueeze(input, dim)``."""
    return expand_dims(input, dim)


def squeeze(input, axis=None, name=None, dim=None):
    """``tf.squeeze(input, axis=None)`` / ``torch.squeeze(input, dim=None)``: drops size-1 axes
    (all of them, or those named)."""
    x = convert_to_tensor(input)
    axis = dim if dim is not None else axis
    if axis is None:
        axes = []
    elif isinstance(axis, (list, tuple)):
        axes = [_int(a, "axis") for a in axis]
    else:
        axes = [_int(axis, "axis")]
    return _C.squeeze(x, axes)


def _tensor_list(values, name):
    if isinstance(values, Tensor):
        return [values[i] for i in range(values.shape[0])]
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"{name} expects a non-empty list of tensors, got {values!r}")
    tensors = [v for v in values if isinstance(v, Tensor)]
    like = tensors[0] if tensors else None
    out = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif like is not None:
            out.append(convert_to_tensor(v, dtype=like.dtype))
        else:
            out.append(convert_to_tensor(v))
    return out


def concat(values, axis, name=None):
    """``tf.concat(values, axis)``: joins tensors along an existing axis."""
    return _C.concat(_tensor_list(values, "concat"), _int(axis, "axis"))


def cat(tensors, dim=0, axis=None):
    """``torch.cat(tensors, dim=0)``."""
    return concat(tensors, dim if axis is None else axis)


concatenate = cat  # torch.concatenate / np.concatenate


def stack(values, axis=0, name=None, dim=None):
    """``tf.stack(values, axis=0)`` / ``torch.stack(tensors, dim=0)``: joins along a new axis."""
    axis = dim if dim is not None else axis
    return stack_tensors(_tensor_list(values, "stack"), axis)


def unstack(value, num=None, axis=0, name=None):
    """``tf.unstack(value, axis=0)``: the slices along ``axis``, that axis removed."""
    x = convert_to_tensor(value)
    axis = _axis(axis, x.ndim)
    if num is not None and num != x.shape[axis]:
        raise ValueError(f"num ({num}) must equal the size of axis {axis} ({x.shape[axis]})")
    return [_C.select(x, axis, i) for i in range(x.shape[axis])]


def unbind(input, dim=0):
    """``torch.unbind(input, dim=0)``."""
    return tuple(unstack(input, axis=dim))


def _split_sizes(total, sizes, axis):
    if sum(sizes) != total or any(s < 0 for s in sizes):
        raise errors.InvalidArgumentError(
            f"split sizes {list(sizes)} must be non-negative and add up to the size of axis "
            f"{axis} ({total})")
    return sizes


def _split_by_sizes(x, sizes, axis):
    pieces, start = [], 0
    for s in sizes:
        specs = [(0, n, 1) for n in x.shape[:axis]] + [(start, start + s, 1)]
        pieces.append(_C.slice(x, specs))
        start += s
    return pieces


def split(value, num_or_size_splits, axis=0, num=None, name=None, dim=None):
    """``tf.split(value, num_or_size_splits, axis=0)``: an int is the number of equal pieces, a
    list their sizes (one may be -1)."""
    if dim is not None:
        raise ambiguous("split", "tf.split(value, num_or_size_splits, axis) (an int is the number "
                        "of pieces)", "torch.split(tensor, split_size, dim) (an int is the size "
                        "of each piece)")
    x = convert_to_tensor(value)
    axis = _axis(axis, x.ndim)
    total = x.shape[axis]
    if isinstance(num_or_size_splits, (list, tuple, Tensor)):
        sizes = _sizes_list(num_or_size_splits)
        if -1 in sizes:
            sizes[sizes.index(-1)] = total - (sum(sizes) + 1)
        return _split_by_sizes(x, _split_sizes(total, sizes, axis), axis)
    n = _positive(num_or_size_splits, "num_or_size_splits")
    if total % n:
        raise errors.InvalidArgumentError(
            f"Number of ways to split should evenly divide the split dimension, but got "
            f"split_dim {axis} (size = {total}) and num_split {n}")
    return _split_by_sizes(x, [total // n] * n, axis)


def split_by_size(tensor, split_size_or_sections, dim=0):
    """``torch.split(tensor, split_size_or_sections, dim=0)``: an int is the size of each piece
    (the last may be smaller), a list the sizes. A tuple, as torch."""
    x = convert_to_tensor(tensor)
    axis = _axis(dim, x.ndim, "dim")
    total = x.shape[axis]
    if isinstance(split_size_or_sections, (list, tuple, Tensor)):
        sizes = _split_sizes(total, _sizes_list(split_size_or_sections), axis)
        return tuple(_split_by_sizes(x, sizes, axis))
    n = _positive(split_size_or_sections, "split_size")
    sizes = [n] * (total // n) + ([total % n] if total % n else [])
    return tuple(_split_by_sizes(x, sizes, axis))


def _sizes_list(sizes):
    return [int(s) for s in (sizes.tolist() if isinstance(sizes, Tensor) else sizes)]


def _positive(value, name):
    n = _int(value, name)
    if n <= 0:
        raise ValueError(f"{name} must be positive, got {n}")
    return n


def chunk(input, chunks, dim=0):
    """``torch.chunk(input, chunks, dim=0)``: at most ``chunks`` pieces of ceil(size / chunks)."""
    x = convert_to_tensor(input)
    chunks = _int(chunks, "chunks")
    if chunks <= 0:
        raise ValueError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    size = -(-x.shape[_axis(dim, x.ndim)] // chunks)
    return split_by_size(x, max(size, 1), dim=dim)


def _check_indices(indices, limit, what):
    values = indices.numpy()
    if values.size and (values.min() < -limit or values.max() >= limit):
        bad = values[(values < -limit) | (values >= limit)].flat[0]
        raise errors.InvalidArgumentError(f"{what} {bad} is not in [0, {limit})")
    return values


def row_starts(lead, n, device):
    """The flat offset of each row of a (*lead, n) tensor, shaped (*lead, 1) (int64): adding an
    index along the last axis gives that entry's offset in the flattened tensor."""
    rows = int(np.prod(lead, dtype=np.int64))
    row_index = _C.tensor_arange(0, rows, 1, "int64", device)
    return _C.reshape(_C.binary("mul", row_index, _C.scalar_like(n, row_index)), list(lead) + [1])


def gather_along(x, dim, index):
    """out[..., j, ...] = x[..., index[..., j, ...], ...] along ``dim`` (``torch.gather``)."""
    axis = _axis(dim, x.ndim, "dim")
    index = convert_to_tensor(index, dtype="int64") if not isinstance(index, Tensor) else index
    if index.ndim != x.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    values = _check_indices(index, x.shape[axis], "index")
    if values.size and values.min() < 0:
        raise RuntimeError(f"index {int(values.min())} is out of bounds for dimension {axis} "
                           f"with size {x.shape[axis]}")
    if any(index.shape[d] > x.shape[d] for d in range(x.ndim) if d != axis):
        raise RuntimeError(f"Size does not match at a dimension other than {axis}: index "
                           f"{list(index.shape)}, input {list(x.shape)}")
    last = x.ndim - 1
    x_last = _C.transpose(x, axis, last) if axis != last else x
    idx_last = _C.transpose(index, axis, last) if axis != last else index
    # Each entry's offset in x_last (cut to index's extent) flattened, gathered as rows of width 1
    # by the row-gather kernel: exact for every dtype and value, differentiable (scatter-add).
    lead = list(idx_last.shape[:-1])
    n = x.shape[axis]
    x_cut = _C.slice(x_last, [(0, k, 1) for k in lead] + [(0, n, 1)]) if lead else x_last
    rows = int(np.prod(lead, dtype=np.int64))
    flat_ids = _C.reshape(_C.binary("add", _C.cast(idx_last, "int64"),
                                    row_starts(lead, n, idx_last._device_name)), [-1])
    table = _C.reshape(_C.contiguous(x_cut), [rows * n, 1])
    out = _C.reshape(_C.embedding(flat_ids, table), list(idx_last.shape))
    return _C.transpose(out, axis, last) if axis != last else out


def gather(params, indices=None, axis=None, batch_dims=0, name=None, validate_indices=None,
           **kwargs):
    """``tf.gather(params, indices, axis=0)``: slices of ``params`` along ``axis`` at ``indices``
    (output shape params.shape[:axis] + indices.shape + params.shape[axis+1:])."""
    x = convert_to_tensor(params)
    if "index" in kwargs or "dim" in kwargs or (
            isinstance(indices, numbers.Integral) and axis is not None):
        raise ambiguous("gather", "tf.gather(params, indices, axis) (slices along an axis)",
                        "torch.gather(input, dim, index) (element-wise along dim)")
    if indices is None:
        raise TypeError("gather() missing 1 required positional argument: 'indices'")
    if kwargs:
        raise TypeError(f"gather() got unexpected arguments {sorted(kwargs)}")
    if batch_dims != 0:
        raise ValueError("gather(batch_dims != 0) is not supported yet; use a loop or einsum")
    axis = _axis(0 if axis is None else axis, x.ndim)
    ids = indices if isinstance(indices, Tensor) else convert_to_tensor(indices, dtype="int64")
    if ids._dtype_name not in ("int32", "int64"):
        raise TypeError(f"indices must be int32 or int64, got {ids._dtype_name}")
    values = _check_indices(ids, x.shape[axis], "indices[...] =")
    if (values < 0).any():
        raise errors.InvalidArgumentError("negative indices are not allowed in gather")
    # The row-gather kernel (through embedding): exact for every dtype and value, differentiable.
    moved = _C.permute(x, [axis] + [d for d in range(x.ndim) if d != axis]) if axis else x
    rest = list(moved.shape[1:])
    table = _C.reshape(_C.contiguous(moved), [moved.shape[0], int(np.prod(rest, dtype=np.int64))])
    rows = _C.embedding(_C.reshape(_C.contiguous(ids), [-1]), table)
    out = _C.reshape(rows, list(ids.shape) + rest)
    if axis:
        k = ids.ndim
        order = list(range(k, k + axis)) + list(range(k)) + list(range(k + axis, out.ndim))
        out = _C.permute(out, order)
    return out


def cast(x, dtype, name=None):
    """``tf.cast(x, dtype)``: floats to integers truncate toward zero, as TF."""
    return _C.cast(convert_to_tensor(x), _dtype_name(dtype))


def where(condition, x=None, y=None, name=None):
    """``tf.where(condition, x, y)`` / ``torch.where(condition, input, other)``: x where the
    condition holds, else y (broadcast), by the select kernel: only the chosen operand is read,
    so an inf or NaN in the branch not taken shows neither in the result nor in the gradients.
    With only ``condition``: the coordinates of its true entries (int64, one row each, as
    tf.where)."""
    cond = convert_to_tensor(condition)
    if x is None and y is None:
        coords = np.argwhere(cond.numpy().astype(bool)).astype(np.int64)
        return convert_to_tensor(coords)
    if x is None or y is None:
        raise ValueError("x and y must both be given or both be None")
    x, y = as_tensors(x, y)
    return _C.where(cond, x, y)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """``tf.clip_by_value(t, min, max)``; the gradient passes where t is inside the range."""
    x = convert_to_tensor(t)
    if clip_value_min is not None:
        x = _C.binary("maximum", *as_tensors(x, clip_value_min))
    if clip_value_max is not None:
        x = _C.binary("minimum", *as_tensors(x, clip_value_max))
    return x


def saturate_cast(value, dtype, name=None):
    """``tf.saturate_cast``: cast with the values first clipped to what ``dtype`` holds (an
    int32 300 becomes uint8 255, a float 3e9 int32's largest float32 below 2**31), never
    wrapped around."""
    x = convert_to_tensor(value)
    target = _dtype_name(dtype)
    integers = INTEGER_NAMES
    if target in integers and x._dtype_name in integers:
        source, kept = np.iinfo(x._dtype_name), np.iinfo(target)
        low, high = max(source.min, kept.min), min(source.max, kept.max)
        if (low, high) != (source.min, source.max):
            x = clip_by_value(x, int(low), int(high))
    elif target in integers and x.dtype.is_floating_point:
        info = np.iinfo(target)
        # The float32 nearest the bounds may lie outside them; step inside.
        high = float(np.nextafter(np.float32(info.max), np.float32(0))) if info.max > 2 ** 24 \
            else float(info.max)
        x = clip_by_value(x, float(info.min), high)
    return _C.cast(x, target)


def clamp(input, min=None, max=None):  # noqa: A002 - torch's argument names
    """``torch.clamp(input, min=None, max=None)``."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    return clip_by_value(input, min, max)


clip = clamp  # torch.clip


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """``tf.pad(tensor, paddings)`` with constant padding: ``paddings`` holds a (before, after)
    pair per axis."""
    x = convert_to_tensor(tensor)
    if str(mode).upper() != "CONSTANT":
        raise ValueError(f"pad mode {mode!r} is not supported yet; only 'CONSTANT' is")
    pairs = np.asarray(paddings.tolist() if isinstance(paddings, Tensor) else paddings)
    if pairs.shape != (x.ndim, 2) or (pairs < 0).any():
        raise errors.InvalidArgumentError(
            f"paddings must be a non-negative [{x.ndim}, 2] list, got {pairs.tolist()}")
    if pairs.size and pairs.dtype.kind not in "iu":  # 1.5, or ints past int64 (dtype object)
        raise errors.InvalidArgumentError(
            f"paddings must be integers that fit in int64, got {pairs.tolist()}")
    for axis, (before, after) in enumerate(pairs.tolist()):
        if before == 0 and after == 0:
            continue
        parts = []
        for count in (before, after):
            shape = list(x.shape)
            shape[axis] = count
            parts.append(_C.tensor_full(shape, float(constant_values), x._dtype_name,
                                        x._device_name))
        x = _C.concat([parts[0], x, parts[1]], axis)
    return x


def tile(input, multiples, name=None):
    """``tf.tile(input, multiples)``: repeats the tensor ``multiples[i]`` times along axis i."""
    return repeat_along_axes(convert_to_tensor(input), multiples, "multiples", "Tile")


def repeat_along_axes(x, counts, arg, op):
    """``x`` repeated ``counts[i]`` times along axis i (tf.tile, torch's Tensor.repeat), made by
    one broadcast: (n0, n1) viewed as (1, n0, 1, n1), broadcast to (c0, n0, c1, n1) and
    reshaped to (c0 * n0, c1 * n1). The broadcast allocates the result once, so a count too
    large for memory is the allocator's typed error naming the size, not a Python list of
    ``count`` tensors."""
    raw = counts.tolist() if isinstance(counts, Tensor) else counts
    if isinstance(raw, (str, bytes)) or not hasattr(raw, "__len__") or len(raw) != x.ndim:
        raise errors.InvalidArgumentError(
            f"[{op}] {arg} must be a list of {x.ndim} non-negative integers (one per axis of "
            f"the input's shape {list(x.shape)}), got {raw!r}", op)
    reps = [check_int(c, f"[{op}] {arg}[{i}]", 0, error=errors.InvalidArgumentError)
            for i, c in enumerate(raw)]
    if all(r == 1 for r in reps):
        return x
    out_shape = [check_range(r * n, f"[{op}] size of axis {i} ({r} x {n})", 0,
                             error=errors.InvalidArgumentError)
                 for i, (r, n) in enumerate(zip(reps, x.shape))]
    try:
        if 0 in out_shape:  # no broadcast: its (count, size) shape may be too large when empty
            return _C.reshape(_C.slice(x, [(0, 0, 1)] + [(0, n, 1) for n in x.shape[1:]]),
                              out_shape)
        spread = [d for n in x.shape for d in (1, n)]
        target = [d for r, n in zip(reps, x.shape) for d in (r, n)]
        return _C.reshape(_C.broadcast_to(_C.reshape(x, spread), target), out_shape)
    except errors.OpError as error:  # out of memory, or more than 2^63 - 1 elements
        detail = error.message.split("] ", 1)[-1] if error.message.startswith("[") else \
            error.message
        raise type(error)(f"[{op}] {arg} {reps} on a tensor of shape {list(x.shape)} gives "
                          f"shape {out_shape}: {detail}", op) from None


def shape(input, out_type="int32", name=None):
    """``tf.shape(input)``: the shape as an int32 tensor."""
    return convert_to_tensor(np.asarray(list(convert_to_tensor(input).shape), dtype=np.int64),
                             dtype=out_type)


def rank(input, name=None):
    return convert_to_tensor(np.int32(convert_to_tensor(input).ndim), dtype="int32")


def size(input, out_type="int32", name=None):
    return convert_to_tensor(np.int64(convert_to_tensor(input).numel()), dtype=out_type)


def numel(input):
    """``torch.numel(input)``: the number of elements, a Python int."""
    return int(convert_to_tensor(input).numel())


def flatten(input, start_dim=0, end_dim=-1):
    """``torch.flatten(input, start_dim=0, end_dim=-1)``."""
    x = convert_to_tensor(input)
    if x.ndim == 0:
        return _C.reshape(x, [1])
    start, end = _axis(start_dim, x.ndim, "start_dim"), _axis(end_dim, x.ndim, "end_dim")
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return _C.reshape(x, list(x.shape[:start]) + [-1] + list(x.shape[end + 1:]))


def broadcast_to(input, shape, name=None):
    """``tf.broadcast_to(input, shape)`` / ``torch.broadcast_to``."""
    return _C.broadcast_to(convert_to_tensor(input), _shape_arg(tuple(shape)))


def identity(input, name=None):
    """``tf.identity``: a copy that stays in the gradient graph."""
    return _C.binary("add", convert_to_tensor(input), _C.scalar_like(0.0, convert_to_tensor(input)))


def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name=None):
    """``tf.one_hot(indices, depth)``: float32 by default; ``on_value``/``off_value`` and
    ``axis`` as TF."""
    ids = indices if isinstance(indices, Tensor) else convert_to_tensor(indices, dtype="int64")
    depth = _int(depth, "depth")
    if depth < 0:
        raise errors.InvalidArgumentError(f"depth must be non-negative, got {depth}")
    name = _dtype_name(dtype) or "float32"
    out = _C.one_hot(ids, depth, name)
    if on_value is not None or off_value is not None:
        on = 1.0 if on_value is None else float(on_value)
        off = 0.0 if off_value is None else float(off_value)
        out = _C.binary("add", _C.binary("mul", out, _C.scalar_like(on - off, out)),
                        _C.scalar_like(off, out))
    if axis is not None and axis != -1:
        out = _C.permute(out, _moved_last(out.ndim, _axis(axis, out.ndim)))
    return out


def _moved_last(ndim, axis):
    order = list(range(ndim - 1))
    order.insert(axis, ndim - 1)
    return order


def fill(dims, value, name=None):
    """``tf.fill(dims, value)``: the dtype follows the value (float32 for floats). Made by the
    core, so a size too large is its typed error naming the size, not NumPy's."""
    scalar = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
    if scalar.ndim != 0:
        raise errors.InvalidArgumentError(f"[Fill] value must be a scalar, got shape "
                                          f"{list(scalar.shape)}", "Fill")
    dtype = ("float32" if scalar.dtype == np.float64 else
             python_integer_dtype(value) or scalar.dtype.name)
    return _tensor_full(dims.tolist() if isinstance(dims, Tensor) else list(dims), scalar.item(),
                        dtype=dtype)


def zeros_like(input, dtype=None, name=None, device=None, requires_grad=False):
    """``tf.zeros_like`` / ``torch.zeros_like``; accepts arrays and lists."""
    return _like(input, 0.0, dtype, device, requires_grad)


def ones_like(input, dtype=None, name=None, device=None, requires_grad=False):
    return _like(input, 1.0, dtype, device, requires_grad)


def _like(input, value, dtype, device, requires_grad):
    return _full_like(input, value, dtype=dtype, device=device, requires_grad=requires_grad)
