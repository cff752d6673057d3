"""PyTorch's scatters along a dimension: ``scatter`` (with ``reduce='add'|'multiply'``),
``scatter_add``, ``scatter_reduce``, and the index forms ``index_add``, ``index_copy``,
``index_fill``, ``index_reduce``, on the row scatter (``_row_scatter``): memory and cost grow
with self and the source, never with index x size (the one-hot products these replaced).

Two layouts feed the one scatter. The element-wise forms (``scatter*``) give every entry of
``index`` its own destination, self's entry at index[c] along ``dim`` and c elsewhere, so they
scatter single entries (width 1) into self's flat offsets. The index forms move ``dim`` first
and scatter whole slices (rows of self's other dimensions). A reduction that includes self
puts self's own entries first among the rows reduced, so a tie's gradient and a mean's count
take self in, as PyTorch's do; a destination nothing lands on keeps self's value. Repeated
destinations of ``scatter``/``index_copy`` keep the last write (PyTorch's CPU order; PyTorch
leaves it undefined on the GPU, where gpuaccel's kernels keep the same order).
"""
import numpy as np

from . import _C, _row_scatter
from . import math as _math
from ._convert import convert_to_tensor
from ._int_range import check_int
from ._tensor import Tensor
from .dtypes import FLOATING_NAMES

__all__ = ["scatter", "scatter_add", "scatter_reduce", "index_add", "index_copy", "index_fill",
           "index_reduce"]

# PyTorch's reduction names and the row scatter's.
_SCATTER_REDUCTIONS = {"sum": "sum", "prod": "prod", "mean": "mean", "amax": "max",
                       "amin": "min"}


def _dim(self, dim):
    n = max(self.ndim, 1)
    d = check_int(dim, "dim")
    if not -n <= d < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {d})")
    return d % n


def _index_tensor(index, op):
    ids = index if isinstance(index, Tensor) else convert_to_tensor(index, dtype="int64")
    if ids._dtype_name != "int64":
        raise RuntimeError(f"{op}(): Expected dtype int64 for index")
    return ids


def _check_range(ids, size, dim):
    """PyTorch's error for an index outside [0, size) (a device min/max read on the host)."""
    if ids.numel() == 0:
        return
    low = int(_C.reduce("min", ids, None, False).item())
    high = int(_C.reduce("max", ids, None, False).item())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise RuntimeError(f"index {bad} is out of bounds for dimension {dim} with size {size}")


def _tensor_like(value, self):
    """``value`` as a tensor: a non-tensor (a list, an array) takes self's dtype."""
    return value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=self.dtype)


def _source_like(src, self, shape):
    """``src`` in self's dtype, cut to ``shape`` (index's: PyTorch reads only that corner)."""
    source = _tensor_like(src, self)
    if source._dtype_name != self._dtype_name:
        raise RuntimeError(f"Expected self.dtype to be equal to src.dtype (got "
                           f"{self._dtype_name} and {source._dtype_name})")
    if list(source.shape) != list(shape):
        source = _C.slice(source, [(0, n, 1) for n in shape])
    return source


# ---- the element-wise forms: one destination per index entry ----

def _destinations(self, d, ids, op):
    """The flat offset in self of each entry of ``ids`` (index[c] along d, c elsewhere), as
    an int64 vector, after PyTorch's shape and range checks."""
    if ids.ndim != self.ndim:
        raise RuntimeError(f"{op}(): Index tensor must have the same number of dimensions as "
                           f"self tensor")
    if any(ids.shape[k] > self.shape[k] for k in range(self.ndim) if k != d):
        raise RuntimeError(f"{op}(): Expected index {list(ids.shape)} to be smaller than self "
                           f"{list(self.shape)} apart from dimension {d}")
    _check_range(ids, self.shape[d] if self.ndim else 1, d)
    if ids.numel() == 0:
        return _C.reshape(_C.contiguous(ids), [0])
    strides = [int(np.prod(self.shape[k + 1:], dtype=np.int64)) for k in range(self.ndim)]
    offset = _C.binary("mul", ids, _C.scalar_like(strides[d] if strides else 1, ids))
    for k in range(self.ndim):
        if k == d:
            continue
        along = _C.tensor_arange(0, ids.shape[k] * strides[k], strides[k], "int64",
                                 ids._device_name)
        shape = [1] * ids.ndim
        shape[k] = ids.shape[k]
        offset = _C.binary("add", offset, _C.reshape(along, shape))
    return _C.reshape(_C.contiguous(offset), [-1])


def _check_source_shape(source, ids, op):
    if source.ndim != ids.ndim or any(i > s for i, s in zip(ids.shape, source.shape)):
        raise RuntimeError(f"{op}(): Expected index {list(ids.shape)} to be smaller than src "
                           f"{list(source.shape)}")


def _reduce_into(self_rows, destinations, value_rows, reduction, include_self):
    """self's rows (S, W) with the value rows (K, W) reduced into the rows ``destinations``
    (K,) name: ``reduction`` (sum, prod, mean, max, min) over the landing rows, self's row among
    them when ``include_self``; rows nothing lands on keep self's. A mean of integers rounds
    down, as PyTorch's."""
    segments = self_rows.shape[0]
    device = self_rows._device_name
    if include_self:  # a row nothing lands on reduces to itself: no mask needed
        data = _C.concat([self_rows, value_rows], 0)
        ids = _C.concat([_C.tensor_arange(0, segments, 1, "int64", device), destinations], 0)
    else:
        data, ids = value_rows, destinations
    reduced = _row_scatter.segment_reduce(data, ids, segments,
                                          "sum" if reduction == "mean" else reduction)
    counts = None
    if reduction == "mean" or not include_self:
        counts = _row_scatter.segment_counts(ids, segments, device)
    if reduction == "mean":
        divisor = _C.binary("maximum", counts, _C.scalar_like(1, counts))
        if reduced._dtype_name in FLOATING_NAMES:
            reduced = _C.binary("div", reduced, _C.cast(divisor, reduced._dtype_name))
        else:
            quotient = _C.binary("div", _C.cast(reduced, "float64"), _C.cast(divisor, "float64"))
            reduced = _C.cast(_math.floor(quotient), reduced._dtype_name)
    if include_self:
        return reduced
    return _C.where(_C.binary("greater", counts, _C.scalar_like(0, counts)), reduced, self_rows)


def _scatter_elements(self, dim, index, src, reduction, include_self, op):
    d = _dim(self, dim)
    ids = _index_tensor(index, op)
    destinations = _destinations(self, d, ids, op)
    _check_source_shape(src, ids, op)
    source = _source_like(src, self, ids.shape)
    values = _C.reshape(_C.contiguous(source), [-1, 1])
    rows = _C.reshape(_C.contiguous(self), [-1, 1])
    if reduction is None:  # a plain scatter: the last write to an entry wins
        out = _row_scatter.last_write(rows, destinations, values)
    else:
        out = _reduce_into(rows, destinations, values, reduction, include_self)
    return _C.reshape(out, list(self.shape))


def _filled_source(self, ids, src, value):
    if src is not None and value is not None:
        raise TypeError("scatter() takes either src or value, not both")
    given = value if src is None else src
    if isinstance(given, Tensor):
        return given
    return _C.tensor_full(list(ids.shape), float(given), self._dtype_name, self._device_name)


def scatter(self, dim, index, src=None, value=None, *, reduce=None):
    """``self.scatter(dim, index, src)``: self with src[c] written at index[c] along ``dim``
    (a later write wins); ``value=`` writes one number; ``reduce='add'|'multiply'`` combines
    with self instead (the deprecated form of ``scatter_reduce``)."""
    ids = _index_tensor(index, "scatter")
    source = _filled_source(self, ids, src, value)
    if reduce is None:
        return _scatter_elements(self, dim, ids, source, None, True, "scatter")
    kinds = {"add": "sum", "multiply": "prod"}
    if reduce not in kinds:
        raise RuntimeError(f"reduce argument must be either add or multiply., got {reduce!r}")
    return _scatter_elements(self, dim, ids, source, kinds[reduce], True, "scatter")


def scatter_add(self, dim, index, src):
    """self with src[c] added at index[c] along ``dim`` (repeated destinations add up)."""
    source = _tensor_like(src, self)
    return _scatter_elements(self, dim, index, source, "sum", True, "scatter_add")


def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    """``reduce`` ('sum', 'prod', 'mean', 'amax', 'amin') of the src entries landing on each
    entry of self, and self's own entry when ``include_self``; integer means round down."""
    if reduce not in _SCATTER_REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce!r}")
    source = _tensor_like(src, self)
    return _scatter_elements(self, dim, index, source, _SCATTER_REDUCTIONS[reduce],
                             bool(include_self), "scatter_reduce")


# ---- the index forms: one destination slice per index entry ----

def _moved_first(x, d):
    return _C.permute(x, [d] + [k for k in range(x.ndim) if k != d]) if d else x


def _moved_back(x, d):
    return _C.permute(x, list(range(1, d + 1)) + [0] + list(range(d + 1, x.ndim))) if d else x


def _as_rows(x, d):
    """x with ``d`` first, as (x.shape[d], the rest) rows."""
    moved = _moved_first(x, d) if x.ndim else _C.reshape(x, [1])
    return _C.reshape(_C.contiguous(moved), [moved.shape[0], -1])


def _index_slices(self, dim, index, source, op):
    """(d, index ids (K,), source rows (K, W) or None), after PyTorch's checks."""
    d = _dim(self, dim)
    ids = _index_tensor(index, op)
    if ids.ndim > 1:
        raise IndexError(f"{op}(): Index is supposed to be a vector")
    ids = _C.reshape(ids, [-1])
    size = self.shape[d] if self.ndim else 1
    _check_range(ids, size, d)
    if source is None:
        return d, ids, None
    expected = list(self.shape)
    if expected:
        expected[d] = ids.shape[0]
    if list(source.shape) != expected and not (self.ndim == 0 and source.numel() == ids.shape[0]):
        raise RuntimeError(f"{op}(): Source/destination tensor must have the same shape apart "
                           f"from dimension {d}: expected {expected}, got {list(source.shape)}")
    if source._dtype_name != self._dtype_name:
        raise RuntimeError(f"{op}(): self ({self._dtype_name}) and source "
                           f"({source._dtype_name}) must have the same scalar type")
    return d, ids, _as_rows(source, d)


def _from_rows(rows, self, d):
    """(self.shape[d], rest) rows back to self's shape."""
    if not self.ndim:
        return _C.reshape(rows, [])
    moved_shape = [self.shape[d]] + [s for k, s in enumerate(self.shape) if k != d]
    return _moved_back(_C.reshape(rows, moved_shape), d)


def index_add(self, dim, index, source, *, alpha=1):
    """self + alpha * source's slices added at ``index`` along ``dim`` (repeated indices add
    up; gradients reach self and source)."""
    source = _tensor_like(source, self)
    d, ids, rows = _index_slices(self, dim, index, source, "index_add")
    if alpha != 1:
        rows = _C.binary("mul", rows, _C.scalar_like(alpha, rows))
    out = _reduce_into(_as_rows(self, d), ids, rows, "sum", True)
    return _from_rows(out, self, d)


def index_copy(self, dim, index, source):
    """self with source's slices written at ``index`` along ``dim`` (a later write wins)."""
    source = _tensor_like(source, self)
    d, ids, rows = _index_slices(self, dim, index, source, "index_copy")
    return _from_rows(_row_scatter.last_write(_as_rows(self, d), ids, rows), self, d)


def index_fill(self, dim, index, value):
    """self with the slices at ``index`` along ``dim`` set to ``value`` (selected, not
    blended: an inf in a filled slice stays out of the result)."""
    d, ids, _ = _index_slices(self, dim, index, None, "index_fill")
    rows = _as_rows(self, d)
    landed = _row_scatter.segment_counts(ids, rows.shape[0], rows._device_name)
    hit = _C.binary("greater", landed, _C.scalar_like(0, landed))
    fill = value if isinstance(value, Tensor) else _C.scalar_like(value, rows)
    return _from_rows(_C.where(hit, _C.cast(fill, rows._dtype_name), rows), self, d)


def index_reduce(self, dim, index, source, reduce, *, include_self=True):
    """``reduce`` ('prod', 'mean', 'amax', 'amin') of source's slices landing on each slice of
    self along ``dim``, self's own among them when ``include_self``."""
    kinds = {"prod": "prod", "mean": "mean", "amax": "max", "amin": "min"}
    if reduce not in kinds:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    source = _tensor_like(source, self)
    d, ids, rows = _index_slices(self, dim, index, source, "index_reduce")
    out = _reduce_into(_as_rows(self, d), ids, rows, kinds[reduce], bool(include_self))
    return _from_rows(out, self, d)
