"""TensorFlow's top-level spellings of the NumPy-style array ops in ``_numpy_ops``.

``tf.roll``, ``tf.reverse``, ``tf.repeat`` and ``tf.meshgrid`` compute what ``keras.ops``'s
roll/flip/repeat/meshgrid compute, but take TF's argument names (``input``, ``tensor``), a
``name``, and TF's required arguments (tf.roll needs ``axis``; tf.reverse reverses only the axes
listed, never all of them), so the TensorFlow face gets these thin adapters rather than the
Keras functions themselves. The few here with no NumPy twin (sequence_mask, identity_n,
shape_n, histogram_fixed_width, reverse_sequence...) are TF-only conveniences composed from the
same ops.
"""
import numpy as np

from . import _C, _numpy_ops, _row_scatter, errors
from . import math as _math
from ._array_ops import (cast, clip_by_value, expand_dims, gather, gather_along, identity,
                         reshape, shape, stack)
from ._convert import convert_to_tensor, python_integer_dtype
from . import _tensor
from ._tensor import arange
from .dtypes import as_dtype
from .keras import ops as _keras_ops


def roll(input, shift, axis, name=None):  # noqa: A002 -- TF's argument name
    """``tf.roll``: entries shifted ``shift`` places along ``axis`` (ints or equal-length
    lists), wrapping around."""
    if axis is None:
        raise ValueError("tf.roll needs axis (an int or a list of ints, one per shift), got None")
    return _numpy_ops.roll(input, shift, axis)


def reverse(tensor, axis, name=None):
    """``tf.reverse``: ``tensor`` with the axes listed in ``axis`` (a list of ints) reversed."""
    if axis is None or not isinstance(axis, (list, tuple)):
        raise TypeError(f"tf.reverse needs axis as a list of ints (e.g. [0] or [-1]), "
                        f"got {axis!r}")
    return _numpy_ops.flip(tensor, tuple(axis))


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """``tf.repeat``: each entry repeated ``repeats`` times along ``axis`` (the flattened
    tensor when None)."""
    return _numpy_ops.repeat(input, repeats, axis)


def meshgrid(*args, indexing="xy", name=None):
    """``tf.meshgrid``: coordinate grids, Cartesian ('xy', the default) or matrix ('ij')
    indexing."""
    return _numpy_ops.meshgrid(*args, indexing=indexing)


def slice(input_, begin, size, name=None):  # noqa: A001 -- TF's name
    """``tf.slice``: the block of ``size`` starting at ``begin`` (a -1 in size: to the end)."""
    x = convert_to_tensor(input_)
    if len(begin) != x.ndim or len(size) != x.ndim:
        raise ValueError(f"tf.slice needs one begin and one size per axis of the input's "
                         f"{x.ndim}, got begin {list(begin)} and size {list(size)}")
    return _keras_ops.slice(x, begin, size)


def unravel_index(indices, dims, name=None):
    """``tf.unravel_index``: the coordinates of flat ``indices`` in an array of shape ``dims``,
    stacked on a first axis of length len(dims)."""
    return stack(list(_keras_ops.unravel_index(indices, dims)), 0)


def sequence_mask(lengths, maxlen=None, dtype="bool", name=None):
    """``tf.sequence_mask``: mask[..., j] = j < lengths[...], ``maxlen`` columns (the longest
    length by default)."""
    lengths = convert_to_tensor(lengths)
    if lengths.dtype.is_floating_point:
        raise TypeError(f"sequence_mask needs integer lengths, got {lengths.dtype.name}")
    if maxlen is None:
        maxlen = int(_C.reduce("max", lengths, None, False).numpy()) if lengths.size else 0
    columns = arange(0, int(maxlen), dtype=lengths.dtype.name, device=lengths.device.name)
    return cast(_math.less(columns, expand_dims(lengths, -1)), dtype)


def identity_n(input, name=None):  # noqa: A002
    """``tf.identity_n``: a list with tf.identity of each tensor of ``input``."""
    return [identity(x) for x in input]


def shape_n(input, out_type="int32", name=None):  # noqa: A002
    """``tf.shape_n``: a list with tf.shape of each tensor of ``input``."""
    return [shape(x, out_type) for x in input]



def gather_nd(params, indices, batch_dims=0, name=None):
    """``tf.gather_nd``: for each index vector in the last axis of ``indices`` (K entries), the
    slice params[i0, ..., iK-1]; one gather on params viewed as (prod of its first K dims,
    rest), so the gradient flows to params. The indices are read on the host to check them
    (each entry against its own axis, as TF)."""
    if batch_dims != 0:
        raise NotImplementedError(f"gather_nd with batch_dims={batch_dims} is not supported "
                                  "yet; use batch_dims=0")
    params = convert_to_tensor(params)
    index = np.asarray(indices.numpy() if hasattr(indices, "numpy") else indices)
    if index.dtype.kind not in "iu" or index.ndim < 1 or not 1 <= index.shape[-1] <= params.ndim:
        raise TypeError(f"gather_nd needs integer indices whose last axis holds index vectors "
                        f"of 1 to {params.ndim} entries, got {index.dtype} of shape "
                        f"{index.shape}")
    leading = params.shape[:index.shape[-1]]
    bad = (index < 0) | (index >= np.asarray(leading))
    if bad.any():
        raise errors.InvalidArgumentError(
            f"gather_nd index {index[bad.any(axis=-1)][0].tolist()} is out of range for params "
            f"of shape {tuple(params.shape)}")
    flat_index = np.ravel_multi_index(tuple(np.moveaxis(index, -1, 0)), tuple(leading))
    table = reshape(params, [int(np.prod(leading)), *params.shape[len(leading):]])
    return gather(table, convert_to_tensor(flat_index.astype(np.int64)), axis=0)


def searchsorted(sorted_sequence, values, side="left", out_type="int32", name=None):
    """``tf.searchsorted``: for each entry of ``values`` (..., M), how many entries of the
    matching row of ``sorted_sequence`` (..., N) lie before it ('left': are smaller, 'right':
    are not larger). An all-pairs count: N * M work per row."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    boundaries, queries = convert_to_tensor(sorted_sequence), convert_to_tensor(values)
    if boundaries.ndim < 1 or tuple(boundaries.shape[:-1]) != tuple(queries.shape[:-1]):
        raise ValueError(f"sorted_sequence {tuple(boundaries.shape)} and values "
                         f"{tuple(queries.shape)} must share every axis but the last")
    before = _math.less if side == "left" else _math.less_equal
    counted = before(expand_dims(boundaries, -2), expand_dims(queries, -1))  # (..., M, N)
    return cast(_C.reduce("sum", cast(counted, "int32"), [-1], False), out_type)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype="int32", name=None):
    """``tf.histogram_fixed_width_bins``: the bin of each value among ``nbins`` equal bins
    over ``value_range``; values outside go to the first or last bin."""
    x = convert_to_tensor(values)
    low, high = (float(v) for v in (value_range.numpy().tolist()
                                    if hasattr(value_range, "numpy") else value_range))
    if not high > low:
        raise ValueError(f"value_range must be [low, high] with high > low, got {[low, high]}")
    scaled = (x - low) / (high - low)
    bins = _math.floor(scaled * float(nbins))
    return cast(clip_by_value(bins, 0.0, float(nbins - 1)), dtype)


def histogram_fixed_width(values, value_range, nbins=100, dtype="int32", name=None):
    """``tf.histogram_fixed_width``: how many values fall in each of ``nbins`` equal bins
    over ``value_range`` (outliers counted in the first or last bin)."""
    bins = reshape(histogram_fixed_width_bins(values, value_range, nbins, "int64"), [-1])
    counts = _row_scatter.segment_counts(bins, int(nbins), bins._device_name)
    return cast(reshape(counts, [int(nbins)]), dtype)


def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=0, name=None):  # noqa: A002
    """``tf.reverse_sequence``: for each batch entry b, its first seq_lengths[b] entries along
    ``seq_axis`` reversed, the rest kept. The lengths are read on the host to build the
    index."""
    x = convert_to_tensor(input)
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis (the axis to reverse), got None")
    seq_axis, batch_axis = seq_axis % x.ndim, batch_axis % x.ndim
    lengths = np.asarray(seq_lengths.numpy() if hasattr(seq_lengths, "numpy") else seq_lengths)
    steps = x.shape[seq_axis]
    if seq_axis == batch_axis or lengths.shape != (x.shape[batch_axis],) or \
            (lengths < 0).any() or (lengths > steps).any():
        raise errors.InvalidArgumentError(
            f"reverse_sequence needs seq_axis != batch_axis and one length in "
            f"[0, {steps}] per batch entry ({x.shape[batch_axis]}), got {lengths.tolist()}")
    position = np.arange(steps)[None, :]
    index = np.where(position < lengths[:, None], lengths[:, None] - 1 - position, position)
    shape = [1] * x.ndim
    shape[batch_axis], shape[seq_axis] = x.shape[batch_axis], steps
    order = (0, 1) if batch_axis < seq_axis else (1, 0)
    index = np.broadcast_to(np.transpose(index, order).reshape(shape), tuple(x.shape))
    return gather_along(x, seq_axis, convert_to_tensor(np.ascontiguousarray(index, np.int64)))


def bitcast(input, type, name=None):  # noqa: A002 -- TF's names
    """``tf.bitcast``: the same bytes read as ``type``. A wider type takes the last axis's
    entries together (that axis must have itemsize ratio entries), a narrower one adds a last
    axis of them, as TF. Computed on the host; not differentiable (TF's is not either)."""
    x = convert_to_tensor(input)
    source, target = x.dtype.as_numpy_dtype, as_dtype(type).as_numpy_dtype
    values = np.ascontiguousarray(x.detach().numpy())
    ratio = np.dtype(target).itemsize / np.dtype(source).itemsize
    if ratio > 1:
        if not values.ndim or values.shape[-1] != ratio:
            raise errors.InvalidArgumentError(
                f"Cannot bitcast from {x.dtype.name} to {as_dtype(type).name}: the last "
                f"dimension must be {int(ratio)}, got shape {list(values.shape)}")
        out = values.view(target).reshape(values.shape[:-1])
    else:
        out = values.reshape(values.shape + (1,)).view(target) if ratio < 1 else \
            values.view(target)
    return convert_to_tensor(np.ascontiguousarray(out)).to(device=x._device_name)


def tf_range(start, limit=None, delta=1, dtype=None, name="range"):
    """``tf.range(start, limit, delta)``: Python integers count in int32 when the bounds fit (TF's
    dtype; ``torch.arange``'s is int64), floats in float32."""
    if dtype is None:
        dtype = python_integer_dtype([start, limit if limit is not None else 0, delta])
    return arange(start, limit, delta, dtype=dtype)


def constant(value, dtype=None, shape=None, name=None):
    """``tf.constant(value, dtype=None, shape=None, name='Const')``: a tensor holding a copy of
    ``value``. With ``shape``, a scalar value fills it and any other value is reshaped to it
    (TF's rule: the element count must match). ``name`` has no effect in eager
    code, as in TF."""
    out = _tensor.tensor(value, dtype=dtype or python_integer_dtype(value))
    if shape is None:
        return out
    target = [int(d) for d in shape]
    size = int(np.prod(target))
    if out.dim() == 0:
        return out.expand(*target).clone() if target else out
    if out.numel() != size:
        raise TypeError(f"Eager execution of tf.constant with unsupported shape. Tensor "
                        f"{np.asarray(value)} (converted from {value!r}) has {out.numel()} "
                        f"elements, but got `shape` {tuple(target)} with {size} elements).")
    return reshape(out, target)
