"""sort, argsort, msort, topk, kthvalue, median, quantile, unique and unique_consecutive for
the PyTorch face, on the sort kernel (``_C.sort``: stable, NaN last ascending and first descending, as torch.sort). The
sorted values are differentiable: their gradient goes back to each entry's position.
"""
import collections

import numpy as np

from .dtypes import FLOATING_NAMES
from . import _C, _unique
from ._convert import convert_to_tensor
from ._array_ops import stack
from ._int_range import check_int

_Sorted = collections.namedtuple("sort", ["values", "indices"])
_TopK = collections.namedtuple("topk", ["values", "indices"])
_KthValue = collections.namedtuple("kthvalue", ["values", "indices"])
_Median = collections.namedtuple("median", ["values", "indices"])


def _last(x, d):
    return _C.transpose(x, d, x.ndim - 1) if d != x.ndim - 1 else x


def _ranked(x, d, descending):
    """(values, indices) of x sorted along d, with d moved last."""
    values, indices = _C.sort(x, d, descending)
    return _last(values, d), _last(indices, d)


def _nan_wins(values, indices, row_last, row_last_index):
    """torch's median/quantile of a row holding NaN is NaN: sorted ascending, a row holds NaN
    when its last entry (``row_last``, at ``row_last_index``) is NaN."""
    if values._dtype_name not in FLOATING_NAMES:
        return values, indices
    no_nan = _C.binary("equal", row_last, row_last)
    return _C.where(no_nan, values, row_last), (
        None if indices is None else _C.where(no_nan, indices, row_last_index))


def sort(input, dim=-1, descending=False, stable=False):
    x = convert_to_tensor(input)
    if x.ndim == 0:
        return _Sorted(x, _C.cast(x * 0, "int64"))
    d = check_int(dim, "dim") % x.ndim
    values, indices = _ranked(x, d, descending)
    return _Sorted(_last(values, d), _last(indices, d))


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending).indices


def msort(input):
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True):  # noqa: A002 - torch's names
    x = convert_to_tensor(input)
    d = check_int(dim, "dim") % max(x.ndim, 1)
    k = check_int(k, "k")
    if not 0 <= k <= (x.shape[d] if x.ndim else 1):
        raise RuntimeError(f"selected index k out of range: k={k} for a dimension of size "
                           f"{x.shape[d] if x.ndim else 1}")
    values, indices = _ranked(x, d, largest)
    return _TopK(_last(values[..., :k], d), _last(indices[..., :k], d))


def kthvalue(input, k, dim=-1, keepdim=False):
    x = convert_to_tensor(input)
    d = check_int(dim, "dim") % max(x.ndim, 1)
    if not 1 <= k <= x.shape[d]:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d} of "
                           f"size {x.shape[d]}: k={k}")
    return _KthValue(*_pick(x, d, k - 1, keepdim, nan_wins=False))


def _pick(x, d, position, keepdim, nan_wins):
    """The entry at ``position`` of x sorted along d, and its index; with ``nan_wins``, NaN
    (and the index of a NaN) in rows that hold one."""
    values, indices = _ranked(x, d, False)
    v, i = values[..., position], indices[..., position]
    if nan_wins:
        v, i = _nan_wins(v, i, values[..., -1], indices[..., -1])
    if keepdim:
        v, i = _C.expand_dims(v, d), _C.expand_dims(i, d)
    return v, i


def median(input, dim=None, keepdim=False):
    """The lower median (torch's: the smaller middle entry of an even count); NaN where the
    row holds a NaN."""
    x = convert_to_tensor(input)
    if dim is None:
        flat = _C.reshape(x, [-1])
        if flat.shape[0] == 0:
            return _C.tensor_full([], float("nan"), x._dtype_name, x._device_name)
        return _pick(flat, 0, (flat.shape[0] - 1) // 2, False, nan_wins=True)[0]
    d = check_int(dim, "dim") % x.ndim
    return _Median(*_pick(x, d, (x.shape[d] - 1) // 2, keepdim, nan_wins=True))


def quantile(input, q, dim=None, keepdim=False, interpolation="linear"):
    """Linear interpolation between the sorted entries at q (n - 1); ``q`` a number or a 1-D
    tensor (its entries become a new leading dimension)."""
    if interpolation != "linear":
        raise ValueError("quantile(interpolation=) other than 'linear' is not supported yet")
    x = convert_to_tensor(input)
    if dim is None:
        x, d = _C.reshape(x, [-1]), 0
    else:
        d = check_int(dim, "dim") % x.ndim
    qs = np.atleast_1d(np.asarray(q.numpy() if hasattr(q, "numpy") else q, np.float64))
    if (qs < 0).any() or (qs > 1).any():
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    values, _ = _ranked(x, d, False)
    n = values.shape[-1]
    outs = []
    for p in qs:
        pos = p * (n - 1)
        lo, hi = int(np.floor(pos)), int(np.ceil(pos))
        v = values[..., lo] + (values[..., hi] - values[..., lo]) * float(pos - lo)
        v = _nan_wins(v, None, values[..., -1], None)[0]
        if keepdim:
            v = _C.expand_dims(v, d) if dim is not None else _C.reshape(
                v, [1] * convert_to_tensor(input).ndim)
        outs.append(v)
    if np.ndim(q.numpy() if hasattr(q, "numpy") else q) == 0:
        return outs[0]
    return stack(outs, 0)


def _unique_result(groups, x, dim, return_inverse, return_counts):
    inverse = groups.inverse if dim is not None else _C.reshape(groups.inverse, list(x.shape))
    out = [groups.values] + [inverse] * bool(return_inverse) + [groups.counts] * bool(return_counts)
    return out[0] if len(out) == 1 else tuple(out)


def _dim(x, dim):
    return None if dim is None else check_int(dim, "dim") % max(x.ndim, 1)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):  # noqa: A002
    """``torch.unique``: the distinct entries (or slices along ``dim``) in ascending order
    (also for sorted=False: PyTorch's CPU answer), the inverse (int64, input's shape; along
    ``dim``: one per slice) and the counts. Not differentiable, as in PyTorch."""
    x = convert_to_tensor(input)
    return _unique_result(_unique.unique(x, _dim(x, dim)), x, _dim(x, dim), return_inverse,
                          return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``torch.unique_consecutive``: one entry (slice) per run of equal neighbours."""
    x = convert_to_tensor(input)
    return _unique_result(_unique.unique_consecutive(x, _dim(x, dim)), x, _dim(x, dim),
                          return_inverse, return_counts)
