"""NumPy-style array manipulation (``flip``, ``roll``, ``tril``, ``diagonal``, ``repeat``,
``moveaxis``...) with NumPy's argument names, as ``keras.ops`` exposes them.

Why a module of its own: Keras 3's ops follow NumPy, not TensorFlow, so these are neither
tf.math names (math.py) nor TF's shape ops (_array_ops.py). Each is composed of recorded C++
ops (slices, gathers, concats, broadcasts, masks), so gradients flow through all of them and a
layer that calls one traces into the C++ step.
"""
import numpy as np

from . import _C
from . import math as _math
from ._array_ops import gather as _gather, gather_along as _gather_along, split as _split
from ._convert import as_tensors, convert_to_tensor
from ._int_range import check_int
from ._tensor import tensor

__all__ = ["flip", "roll", "tril", "triu", "tri", "diag", "diagonal", "trace", "moveaxis",
           "swapaxes", "repeat", "outer", "inner", "vdot", "ravel", "diff", "append", "hstack",
           "vstack", "dstack", "array_split", "take", "take_along_axis", "meshgrid", "rot90",
           "digitize", "searchsorted", "isin", "ptp", "average", "logspace", "kron"]


def _axis(axis, ndim, name="axis"):
    axis = check_int(axis, name)
    if not -ndim <= axis < ndim:
        raise ValueError(f"{name}={axis} is out of bounds for a tensor of rank {ndim}; use an "
                         f"axis in [{-ndim}, {ndim})")
    return axis % ndim


def _axes(axis, ndim):
    if axis is None:
        return list(range(ndim))
    return [_axis(a, ndim) for a in (axis if isinstance(axis, (list, tuple)) else [axis])]


def _index(values):
    return convert_to_tensor(np.asarray(values, np.int64))


def flip(x, axis=None):
    """Reverses the order of entries along ``axis`` (all axes when None)."""
    x = convert_to_tensor(x)
    for a in _axes(axis, x.ndim):
        x = _gather(x, _index(np.arange(x.shape[a])[::-1]), axis=a)
    return x


def roll(x, shift, axis=None):
    """Entries shifted ``shift`` places along ``axis``, wrapping around (over the flattened
    tensor when ``axis`` is None)."""
    x = convert_to_tensor(x)
    if axis is None:
        return _C.reshape(roll(_C.reshape(x, [-1]), shift, 0), list(x.shape))
    shifts = shift if isinstance(shift, (list, tuple)) else [shift]
    axes = axis if isinstance(axis, (list, tuple)) else [axis] * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"shift and axis must have the same length, got {shift!r} and {axis!r}")
    for s, a in zip(shifts, axes):
        a = _axis(a, x.ndim)
        n = x.shape[a]
        if n:
            x = _gather(x, _index((np.arange(n) - check_int(s, "shift")) % n), axis=a)
    return x


def kept_entries(x, mask):
    """``x`` with the entries where the (broadcast) boolean array ``mask`` is False set to 0
    (selected, not multiplied: an inf there would give NaN, 0 * inf)."""
    mask = tensor(np.ascontiguousarray(mask), dtype=x._dtype_name, device=x._device_name)
    return _math._select(mask, x, _C.scalar_like(0.0, x))


def _triangle(x, k, keep):
    x = convert_to_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"tril/triu need a tensor of rank >= 2, got shape {list(x.shape)}")
    rows, cols = x.shape[-2:]
    return kept_entries(x, keep(np.ones((rows, cols), bool), check_int(k, "k")))


def tril(x, k=0):
    """The lower triangle of the last two axes (entries above diagonal ``k`` zeroed)."""
    return _triangle(x, k, np.tril)


def triu(x, k=0):
    return _triangle(x, k, np.triu)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 -- NumPy's names
    """Ones at and below diagonal ``k`` of an N x M matrix."""
    ones = np.tri(check_int(N, "N", 0), None if M is None else check_int(M, "M", 0),
                  check_int(k, "k"))
    return _C.cast(convert_to_tensor(ones.astype(np.float32)), str(getattr(dtype, "name", dtype)
                                                                   or "float32"))


def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the (axis1, axis2) planes, as the last axis."""
    x = convert_to_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal needs a tensor of rank >= 2, got shape {list(x.shape)}")
    a1, a2 = _axis(axis1, x.ndim, "axis1"), _axis(axis2, x.ndim, "axis2")
    if a1 == a2:
        raise ValueError("axis1 and axis2 cannot be the same")
    rest = [d for d in range(x.ndim) if d not in (a1, a2)]
    moved = _C.permute(x, rest + [a1, a2])
    rows, cols = x.shape[a1], x.shape[a2]
    offset = check_int(offset, "offset")
    start_row, start_col = max(-offset, 0), max(offset, 0)
    length = max(0, min(rows - start_row, cols - start_col))
    flat = _C.reshape(_C.contiguous(moved), [x.shape[d] for d in rest] + [rows * cols])
    picks = (np.arange(length) + start_row) * cols + np.arange(length) + start_col
    return _gather(flat, _index(picks), axis=len(rest))


def trace(x, offset=0, axis1=0, axis2=1):
    d = diagonal(x, offset, axis1, axis2)
    return _C.reduce("sum", d, [-1], False)


def diag(x, k=0):
    """A 1-D ``x``: the square matrix with x on diagonal ``k``; a 2-D one: its diagonal k."""
    x = convert_to_tensor(x)
    k = check_int(k, "k")
    if x.ndim == 2:
        return diagonal(x, k)
    if x.ndim != 1:
        raise ValueError(f"diag takes a 1-D or 2-D tensor, got shape {list(x.shape)}")
    m = x.shape[0]
    n = m + abs(k)
    # Row i of the diagonal rows holds x[i] at column i + max(k, 0); the |k| rows of zeros go
    # below them (k >= 0) or above (k < 0).
    places = _C.cast(convert_to_tensor(np.eye(m, n, max(k, 0), dtype=np.float32)),
                     x._dtype_name)
    rows = _C.binary("mul", _C.expand_dims(x, -1), places)
    pad = _C.tensor_full([abs(k), n], 0.0, x._dtype_name, x._device_name)
    return _C.concat([rows, pad] if k >= 0 else [pad, rows], 0)


def moveaxis(x, source, destination):
    x = convert_to_tensor(x)
    sources = _axes(source, x.ndim)
    destinations = _axes(destination, x.ndim)
    if len(sources) != len(destinations):
        raise ValueError("source and destination must have the same number of axes")
    order = [d for d in range(x.ndim) if d not in sources]
    for dest, src in sorted(zip(destinations, sources)):
        order.insert(dest, src)
    return _C.permute(x, order)


def swapaxes(x, axis1, axis2):
    x = convert_to_tensor(x)
    return _C.transpose(x, _axis(axis1, x.ndim, "axis1"), _axis(axis2, x.ndim, "axis2"))


def repeat(x, repeats, axis=None):
    """Each entry repeated ``repeats`` times along ``axis`` (the flattened tensor when None);
    ``repeats`` an int or one count per entry."""
    x = convert_to_tensor(x)
    if axis is None:
        x, axis = _C.reshape(x, [-1]), 0
    axis = _axis(axis, x.ndim)
    n = x.shape[axis]
    counts = np.asarray(repeats.numpy() if hasattr(repeats, "numpy") else repeats)
    if counts.ndim == 0:
        counts = np.full(n, int(counts))
    if counts.shape != (n,) or (counts < 0).any():
        raise ValueError(f"repeats must be a non-negative int or {n} non-negative ints, got "
                         f"{counts.tolist()}")
    return _gather(x, _index(np.repeat(np.arange(n), counts)), axis=axis)


def outer(x1, x2):
    a, b = as_tensors(x1, x2)
    return _C.binary("mul", _C.reshape(a, [-1, 1]), _C.reshape(b, [1, -1]))


def inner(x1, x2):
    """Sum over the last axes of both (scalars multiply)."""
    a, b = as_tensors(x1, x2)
    if a.ndim == 0 or b.ndim == 0:
        return _C.binary("mul", a, b)
    product = _C.binary("mul", _C.reshape(a, list(a.shape[:-1]) + [1] * (b.ndim - 1) +
                                          [a.shape[-1]]), b)
    return _C.reduce("sum", product, [-1], False)


def vdot(x1, x2):
    a, b = as_tensors(x1, x2)
    return _C.reduce("sum", _C.binary("mul", _C.reshape(a, [-1]), _C.reshape(b, [-1])), None,
                     False)


def ravel(x):
    return _C.reshape(convert_to_tensor(x), [-1])


def _along(x, axis, start, stop):
    return _C.slice(x, [(0, n, 1) if d != axis else (start, stop, 1)
                        for d, n in enumerate(x.shape)])


def diff(a, n=1, axis=-1):
    """The ``n``-th forward difference along ``axis``."""
    x = convert_to_tensor(a)
    axis = _axis(axis, x.ndim)
    for _ in range(check_int(n, "n", 0)):
        size = x.shape[axis]
        x = _C.binary("sub", _along(x, axis, 1, size), _along(x, axis, 0, max(size - 1, 0)))
    return x


def append(x1, x2, axis=None):
    a, b = as_tensors(x1, x2)
    if axis is None:
        return _C.concat([_C.reshape(a, [-1]), _C.reshape(b, [-1])], 0)
    return _C.concat([a, b], _axis(axis, a.ndim))


def _at_least_3d(x):
    x = convert_to_tensor(x)
    shape = list(x.shape)
    if len(shape) < 3:
        shape = {0: [1, 1, 1], 1: [1] + shape + [1], 2: shape + [1]}[len(shape)]
    return _C.reshape(x, shape) if shape != list(x.shape) else x


def hstack(xs):
    xs = [convert_to_tensor(x) for x in xs]
    return _C.concat(xs, 0 if all(x.ndim <= 1 for x in xs) else 1)


def vstack(xs):
    """Joined along axis 0 (Keras's vstack: 1-D inputs give a longer vector, not rows)."""
    return _C.concat([convert_to_tensor(x) for x in xs], 0)


def dstack(xs):
    return _C.concat([_at_least_3d(x) for x in xs], 2)


def array_split(x, indices_or_sections, axis=0):
    """``indices_or_sections`` pieces, the first ``n % sections`` one entry longer (NumPy)."""
    x = convert_to_tensor(x)
    axis = _axis(axis, x.ndim)
    sections = check_int(indices_or_sections, "indices_or_sections", 1)
    size, extra = divmod(x.shape[axis], sections)
    return _split(x, [size + 1] * extra + [size] * (sections - extra), axis=axis)


def take(x, indices, axis=None):
    """Entries at ``indices`` along ``axis`` (of the flattened tensor when None); negative
    indices count from the end."""
    x = convert_to_tensor(x)
    if axis is None:
        x, axis = _C.reshape(x, [-1]), 0
    axis = _axis(axis, x.ndim)
    ids = np.asarray(indices.numpy() if hasattr(indices, "numpy") else indices)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got {ids.dtype}")
    n = x.shape[axis]
    if ids.size and (ids.min() < -n or ids.max() >= n):
        raise IndexError(f"indices must be in [{-n}, {n}) for axis {axis} of size {n}, got "
                         f"{ids.tolist()}")
    return _gather(x, _index(ids % max(n, 1)), axis=axis)


def take_along_axis(x, indices, axis=None):
    """``np.take_along_axis``: out[..., j, ...] = x[..., indices[..., j, ...], ...]."""
    x = convert_to_tensor(x)
    if axis is None:
        x, axis = _C.reshape(x, [-1]), 0
    axis = _axis(axis, x.ndim)
    values = np.asarray(indices.numpy() if hasattr(indices, "numpy") else indices, np.int64)
    values = np.where(values < 0, values + x.shape[axis], values)  # NumPy counts from the end
    ids = convert_to_tensor(values)
    shape = [max(a, b) for a, b in zip(x.shape, ids.shape)]
    shape[axis] = ids.shape[axis]
    ids = _C.broadcast_to(ids, shape)
    x_shape = list(shape)
    x_shape[axis] = x.shape[axis]
    ids = _C.contiguous(ids)
    return _gather_along(_C.contiguous(_C.broadcast_to(x, x_shape)), axis, ids)


def meshgrid(*xs, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [_C.reshape(convert_to_tensor(x), [-1]) for x in xs]
    sizes = [x.shape[0] for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, x in enumerate(xs):
        place = (1 - i if i < 2 else i) if indexing == "xy" and len(xs) >= 2 else i
        shape = [1] * len(xs)
        shape[place] = x.shape[0]
        grids.append(_C.broadcast_to(_C.reshape(x, shape), sizes))
    return grids


def rot90(array, k=1, axes=(0, 1)):
    """Rotated by 90° ``k`` times in the plane of ``axes`` (from the first toward the second)."""
    x = convert_to_tensor(array)
    a1, a2 = (_axis(a, x.ndim, "axes") for a in axes)
    k = check_int(k, "k") % 4
    if k == 2:
        return flip(flip(x, a1), a2)
    if k == 1:
        return swapaxes(flip(x, a2), a1, a2)
    if k == 3:
        return flip(swapaxes(x, a1, a2), a2)
    return x


def _count_below(sequence, values, strict):
    """How many entries of 1-D ``sequence`` are below (``strict``) or at most each value."""
    seq, vals = as_tensors(sequence, values)
    compare = "greater" if strict else "less"
    spread = _C.binary(compare, _C.expand_dims(vals, -1), seq) if strict else \
        _math.logical_not(_C.binary("less", _C.expand_dims(vals, -1), seq))
    return _C.cast(_C.reduce("sum", _C.cast(spread, "float32"), [-1], False), "int32")


def searchsorted(sorted_sequence, values, side="left"):
    """Where each value would be inserted to keep the 1-D ``sorted_sequence`` sorted."""
    if side not in ("left", "right"):
        raise ValueError(f"side must be 'left' or 'right', got {side!r}")
    return _count_below(sorted_sequence, values, strict=side == "left")


def digitize(x, bins):
    """The bin of each value: i with bins[i-1] <= x < bins[i] (increasing ``bins``)."""
    return _count_below(bins, x, strict=False)


def isin(x1, x2):
    """Whether each entry of ``x1`` occurs in ``x2``."""
    a, b = as_tensors(x1, x2)
    hits = _C.binary("equal", _C.expand_dims(a, -1), _C.reshape(b, [-1]))
    return _C.cast(_C.reduce("max", _C.cast(hits, "float32"), [-1], False), "bool")


def ptp(x, axis=None, keepdims=False):
    """max - min along ``axis``."""
    x = convert_to_tensor(x)
    axes = None if axis is None else _axes(axis, x.ndim)
    return _C.binary("sub", _C.reduce("max", x, axes, bool(keepdims)),
                     _C.reduce("min", x, axes, bool(keepdims)))


def average(x, axis=None, weights=None):
    x = convert_to_tensor(x)
    if weights is None:
        return _C.reduce("mean", x, None if axis is None else _axes(axis, x.ndim), False)
    w = convert_to_tensor(weights)
    if w.ndim == 1 and x.ndim > 1 and axis is not None:
        shape = [1] * x.ndim
        shape[_axis(axis, x.ndim)] = w.shape[0]
        w = _C.reshape(w, shape)
    axes = None if axis is None else _axes(axis, x.ndim)
    return _C.binary("div", _C.reduce("sum", _C.binary("mul", x, w), axes, False),
                     _C.reduce("sum", _C.broadcast_to(w, list(x.shape)), axes, False))


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    exponents = np.linspace(float(start), float(stop), check_int(num, "num", 0), endpoint)
    values = convert_to_tensor(exponents.astype(np.float32))
    return _C.binary("pow", _C.scalar_like(float(base), values), values)


def kron(x1, x2):
    """The Kronecker product of two tensors of equal rank."""
    a, b = as_tensors(x1, x2)
    if a.ndim != b.ndim:
        raise ValueError(f"kron needs tensors of equal rank, got {a.ndim} and {b.ndim}")
    spread_a = _C.reshape(a, [d for n in a.shape for d in (n, 1)])
    spread_b = _C.reshape(b, [d for n in b.shape for d in (1, n)])
    return _C.reshape(_C.binary("mul", spread_a, spread_b),
                      [m * n for m, n in zip(a.shape, b.shape)])
