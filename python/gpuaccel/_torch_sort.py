"""sort, argsort, msort, topk, kthvalue, median and quantile for the PyTorch face, composed
because gpuaccel has no sort kernel: each entry's rank along the dimension is counted by
comparing it with every other entry (stable: equal entries keep their order), and the sorted
values are a one-hot matrix product of the ranks, so gradients flow back to the entries as
torch's do. That is n² work and memory per row: the size is bounded (MAX_PAIRS) and a bigger
input is refused with the NumPy route to use instead.
"""
import collections

import numpy as np

from . import _C
from ._convert import convert_to_tensor
from ._array_ops import stack
from ._int_range import check_int

MAX_PAIRS = 1 << 26  # entries × length of the sorted dimension (256 MB of float32 pairs)

_Sorted = collections.namedtuple("sort", ["values", "indices"])
_TopK = collections.namedtuple("topk", ["values", "indices"])
_KthValue = collections.namedtuple("kthvalue", ["values", "indices"])
_Median = collections.namedtuple("median", ["values", "indices"])


def _last(x, d):
    return _C.transpose(x, d, x.ndim - 1) if d != x.ndim - 1 else x


def _ranked(x, d, descending):
    """(values, indices) of x sorted along d, with d moved last."""
    n = x.shape[d]
    if x.numel() * n > MAX_PAIRS:
        raise RuntimeError(f"sort: gpuaccel sorts by comparing all pairs and {x.numel()} "
                           f"entries x {n} exceed its bound ({MAX_PAIRS}); sort on the host "
                           f"(np.sort / np.argsort on t.numpy()) until a sort kernel exists")
    moved = _last(x, d)
    keys = _C.detach(moved)
    if keys._dtype_name not in ("float32", "int32", "int64"):
        keys = _C.cast(keys, "float32")
    mine = _C.expand_dims(keys, keys.ndim)  # (..., n, 1): entry i
    others = _C.expand_dims(keys, keys.ndim - 1)  # (..., 1, n): entry j
    ahead = _C.binary("greater", mine, others) if not descending else _C.binary(
        "less", mine, others)
    earlier = convert_to_tensor(np.tril(np.ones((n, n), np.int32), -1)).to(
        device=x._device_name)  # [i, j] = 1 for j < i
    ties_before = _C.cast(_C.binary("equal", mine, others), "int32") * earlier
    rank = _C.reduce("sum", _C.cast(ahead, "int32") + ties_before, [keys.ndim], False)
    work = moved if moved._dtype_name in ("float32", "float16", "bfloat16") else _C.cast(
        moved, "float32")
    placement = _C.one_hot(rank, n, work._dtype_name)  # (..., i, r)
    values = _C.reduce("sum", placement * _C.expand_dims(work, work.ndim), [work.ndim - 1],
                       False)
    positions = convert_to_tensor(np.arange(n, dtype=np.float32)).to(device=x._device_name)
    indices = _C.reduce("sum", _C.cast(placement, "float32") * _C.expand_dims(
        positions, 1), [work.ndim - 1], False)
    if values._dtype_name != moved._dtype_name:
        values = _C.cast(values, moved._dtype_name)
    return values, _C.cast(indices, "int64")


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
    values, indices = _ranked(x, d, False)
    v, i = values[..., k - 1], indices[..., k - 1]
    if keepdim:
        v, i = _C.expand_dims(v, d), _C.expand_dims(i, d)
    return _KthValue(v, i)


def median(input, dim=None, keepdim=False):
    """The lower median (torch's: the smaller middle entry of an even count)."""
    x = convert_to_tensor(input)
    if dim is None:
        flat = _C.reshape(x, [-1])
        return kthvalue(flat, (flat.shape[0] + 1) // 2).values
    d = check_int(dim, "dim") % x.ndim
    return _Median(*kthvalue(x, (x.shape[d] + 1) // 2, d, keepdim))


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
        if keepdim:
            v = _C.expand_dims(v, d) if dim is not None else _C.reshape(
                v, [1] * convert_to_tensor(input).ndim)
        outs.append(v)
    if np.ndim(q.numpy() if hasattr(q, "numpy") else q) == 0:
        return outs[0]
    return stack(outs, 0)
