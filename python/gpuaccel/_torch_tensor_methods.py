"""PyTorch's Tensor methods that ``_tensor.py``/``_tensor_methods.py`` lack, composed from the
core ops (so autograd covers the differentiable ones), and their ``torch.name(input, ...)``
function forms, which ``gpuaccel.torch`` exports (torch defines most of its functions as the
method of their first argument). Torch's meanings: ``dim``/``keepdim``, ``max(dim)`` as a
(values, indices) pair, int64 results for integer sums and indices.

Rounding (floor, ceil, round, trunc) goes through an int64 cast: exact for |x| < 2^63, and, as
in torch, with a zero gradient. Trigonometric functions (sin, cos, ...), erf, sort/topk/cumulative
ops need a kernel and are not here.
"""
import collections
import math
import numbers

import numpy as np

from .dtypes import FLOATING_NAMES
from . import _C
from . import _array_ops
from . import _torch_functional as _F
from . import _torch_functions
from . import _torch_sort
from . import _torch_bitwise
from . import _torch_scatter
from . import _torch_special
from . import _torch_ops
from . import math as _math
from ._convert import as_tensors, convert_to_tensor
from ._int_range import check_int
from ._tensor import Tensor, _dtype_name, _shape_arg

_FLOATING = FLOATING_NAMES


def _float_of(x):
    """x, or x as float32 when it is an integer/bool tensor (torch's rule for exp, log, ...)."""
    return x if x._dtype_name in _FLOATING else _C.cast(x, "float32")


def _scalar(value, like):
    return _C.scalar_like(float(value), like)


# ---- element-wise -------------------------------------------------------------------------------

def _exp_of(x):
    return _C.unary("exp", x)


def _log_of(x):
    return _C.unary("log", x)


def _trunc(self):
    if self._dtype_name not in _FLOATING:
        return _C.clone(self)
    return _C.cast(_C.cast(_C.detach(self), "int64"), self._dtype_name)


def _floor(self):
    t = _trunc(self)
    return t if self._dtype_name not in _FLOATING else t - _C.cast(
        _C.detach(self) < t, self._dtype_name)


def _ceil(self):
    t = _trunc(self)
    return t if self._dtype_name not in _FLOATING else t + _C.cast(
        _C.detach(self) > t, self._dtype_name)


def _round(self, decimals=0):
    """Half to even, as torch (and NumPy) round."""
    if self._dtype_name not in _FLOATING:
        return _C.clone(self)
    scale = 10.0 ** check_int(decimals, "decimals")
    x = _C.detach(self) * scale if decimals else _C.detach(self)
    down = _floor(x + 0.5)
    tie = _C.binary("equal", down - x, _scalar(0.5, x))
    odd = _C.binary("equal", down - _floor(down * 0.5) * 2.0, _scalar(1.0, x))
    rounded = down - _C.cast(_math.logical_and(tie, odd), x._dtype_name)
    return rounded / scale if decimals else rounded


def _frac(self):
    return self - _trunc(self)


def _fmod(self, other):
    x, y = as_tensors(self, other)
    if x._dtype_name not in _FLOATING and y._dtype_name not in _FLOATING:
        return _C.cast(_fmod(_C.cast(x, "float32"), _C.cast(y, "float32")), x._dtype_name)
    return x - _trunc(x / y) * y


def _remainder(self, other):
    x, y = as_tensors(self, other)
    if x._dtype_name not in _FLOATING and y._dtype_name not in _FLOATING:
        return _C.cast(_remainder(_C.cast(x, "float32"), _C.cast(y, "float32")), x._dtype_name)
    return x - _floor(x / y) * y


def _floor_divide(self, other):
    x, y = as_tensors(self, other)
    if x._dtype_name not in _FLOATING and y._dtype_name not in _FLOATING:
        return _C.cast(_floor(_C.cast(x, "float32") / _C.cast(y, "float32")), x._dtype_name)
    return _floor(x / y)


def _div(self, other, *, rounding_mode=None):
    """``div(other, rounding_mode=None | 'trunc' | 'floor')``: true division, or rounded."""
    x, y = as_tensors(self, other)
    if rounding_mode is None:
        return _float_of(x) / (_float_of(y) if y._dtype_name not in _FLOATING else y)
    if rounding_mode not in ("trunc", "floor"):
        raise ValueError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                         f"found {rounding_mode!r}")
    integral = x._dtype_name not in _FLOATING and y._dtype_name not in _FLOATING
    q = _C.cast(x, "float32") / _C.cast(y, "float32") if integral else x / y
    q = _trunc(q) if rounding_mode == "trunc" else _floor(q)
    return _C.cast(q, x._dtype_name) if integral else q


def _log_base(base):
    def method(self):
        return _log_of(_float_of(self)) * (1.0 / math.log(base))
    return method


def _exp2(self):
    return _exp_of(_float_of(self) * math.log(2.0))


def _logit(self, eps=None):
    x = _float_of(self)
    if eps is not None:
        x = _array_ops.clamp(x, float(eps), 1.0 - float(eps))
    return _log_of(x / (1.0 - x))


def _hypot(self, other):
    x, y = as_tensors(self, other)
    return _C.unary("sqrt", x * x + y * y)


def _logaddexp(self, other):
    x, y = as_tensors(self, other)
    peak = _C.binary("maximum", x, y)
    return peak + _math.log1p(_exp_of(-_C.unary("abs", x - y)))


def _logaddexp2(self, other):
    x, y = as_tensors(self, other)
    ln2 = math.log(2.0)
    return _logaddexp(x * ln2, y * ln2) * (1.0 / ln2)


def _xlogy(self, other):
    """x log y, 0 where x == 0 (y = 1 is used there so no -inf reaches the product)."""
    x, y = as_tensors(_float_of(convert_to_tensor(self)), other)
    zero_x = _C.binary("equal", x, _scalar(0.0, x))
    safe_y = _array_ops.where(zero_x, _scalar(1.0, y), y)
    return x * _log_of(safe_y)


def _lerp(self, end, weight):
    x, e = as_tensors(self, end)
    return x + (e - x) * (weight if isinstance(weight, Tensor) else float(weight))


def _addcmul(self, tensor1, tensor2, *, value=1):
    return self + tensor1 * tensor2 * float(value)


def _addcdiv(self, tensor1, tensor2, *, value=1):
    return self + tensor1 / tensor2 * float(value)


def _clamp_min(self, min):  # noqa: A002 - torch's names
    return _array_ops.clamp(self, min, None)


def _clamp_max(self, max):  # noqa: A002
    return _array_ops.clamp(self, None, max)


def _logical_xor(self, other):
    a, b = (_C.cast(_C.cast(convert_to_tensor(v), "bool"), "int32") for v in (self, other))
    return _math.not_equal(a, b)


def _masked_fill(self, mask, value):
    """``value`` where ``mask`` is True (mask broadcast to self's shape)."""
    m = convert_to_tensor(mask)
    if m._dtype_name != "bool":
        raise RuntimeError(f"masked_fill only supports boolean masks, but got mask with dtype "
                           f"{m._dtype_name}")
    fill = value if isinstance(value, Tensor) else _scalar(value, self)
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s)")
    fill = _C.cast(fill, self._dtype_name)
    return _array_ops.where(m, _C.broadcast_to(fill, list(self.shape)), self)


def _where(self, condition, other):
    return _array_ops.where(condition, self, other)


# ---- reductions ---------------------------------------------------------------------------------

def _dims(dim):
    if dim is None:
        return None
    return [check_int(d, "dim") for d in dim] if isinstance(dim, (list, tuple)) else \
        check_int(dim, "dim")


def _amax_amin(op):
    def method(self, dim=(), keepdim=False):
        dims = None if dim in ((), [], None) else _dims(dim)
        return _C.reduce(op, self, dims, bool(keepdim))
    method.__name__ = {"max": "amax", "min": "amin"}[op]
    return method


def _all_any(op):
    def method(self, dim=None, keepdim=False):
        flags = _C.cast(self, "bool")
        reduce = _math.reduce_all if op == "all" else _math.reduce_any
        return reduce(flags, _dims(dim), bool(keepdim))
    method.__name__ = op
    return method


def _prod(self, dim=None, keepdim=False, dtype=None):
    x = self if dtype is None else _C.cast(self, _dtype_name(dtype))
    if x._dtype_name not in _FLOATING:
        x = _C.cast(x, "int64")  # torch multiplies integers and bools in int64
    return _math.reduce_prod(x, _dims(dim), bool(keepdim))


def _logsumexp(self, dim, keepdim=False):
    return _math.reduce_logsumexp(_float_of(self), _dims(dim), bool(keepdim))


def _count_nonzero(self, dim=None):
    return _math.count_nonzero(self, _dims(dim))


def _nansum(self, dim=None, keepdim=False):
    if self._dtype_name not in _FLOATING:
        return _C.reduce("sum", self, _dims(dim), bool(keepdim))
    nan = _math.is_nan(self)
    clean = _array_ops.where(nan, _scalar(0.0, self), _C.binary(
        "maximum", _C.binary("minimum", self, _scalar(np.finfo(np.float32).max, self)),
        _scalar(-np.finfo(np.float32).max, self)))
    return _C.reduce("sum", clean, _dims(dim), bool(keepdim))


# ---- shapes and indexing ------------------------------------------------------------------------

def _flatten(self, start_dim=0, end_dim=-1):
    return _array_ops.flatten(self, start_dim, end_dim)


def _unflatten(self, dim, sizes):
    d = check_int(dim, "dim") % max(self.ndim, 1)
    sizes = [int(s) for s in sizes]
    if -1 in sizes:
        known = int(np.prod([s for s in sizes if s != -1]))
        sizes[sizes.index(-1)] = self.shape[d] // known
    if int(np.prod(sizes)) != self.shape[d]:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size of "
                           f"dim {dim} ({self.shape[d]}) in the input tensor")
    return _C.reshape(self, list(self.shape[:d]) + sizes + list(self.shape[d + 1:]))


def _movedim(self, source, destination):
    src = [source] if isinstance(source, numbers.Integral) else list(source)
    dst = [destination] if isinstance(destination, numbers.Integral) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    n = self.ndim
    src, dst = [s % n for s in src], [d % n for d in dst]
    order = [None] * n
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(i for i in range(n) if i not in src)
    return _C.permute(self, [o if o is not None else next(rest) for o in order])


def _narrow(self, dim, start, length):
    d = check_int(dim, "dim") % self.ndim
    start = check_int(start, "start") % self.shape[d] if start < 0 else check_int(start, "start")
    if start + length > self.shape[d]:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({self.shape[d]}).")
    return self[(slice(None),) * d + (slice(start, start + length),)]


def _select(self, dim, index):
    d = check_int(dim, "dim") % self.ndim
    size = self.shape[d]
    i = check_int(index, "index")
    if not -size <= i < size:
        raise IndexError(f"select(): index {i} out of range for tensor of size "
                         f"{list(self.shape)} at dimension {d}")
    return _C.select(self, d, i % size)


def _index_select(self, dim, index):
    return _array_ops.gather(self, index, axis=check_int(dim, "dim"))


def _flip(self, *dims):
    dims = _shape_arg(dims)
    out = self
    for d in dims:
        d = d % self.ndim
        out = _index_select(out, d, list(range(self.shape[d] - 1, -1, -1)))
    return out


def _roll(self, shifts, dims=None):
    if dims is None:
        return _C.reshape(_roll(_C.reshape(self, [-1]), shifts, 0), list(self.shape))
    shifts = [shifts] if isinstance(shifts, numbers.Integral) else list(shifts)
    dims = [dims] if isinstance(dims, numbers.Integral) else list(dims)
    out = self
    for s, d in zip(shifts, dims):
        d %= self.ndim
        n = self.shape[d]
        s %= n
        if s:
            lead = (slice(None),) * d
            out = _array_ops.cat([out[lead + (slice(n - s, n),)], out[lead + (slice(0, n - s),)]],
                                 d)
    return out


def _repeat_interleave(self, repeats, dim=None):
    if not isinstance(repeats, numbers.Integral):
        raise ValueError("repeat_interleave with a tensor of repeats is not supported yet; "
                         "use an int")
    x = _C.reshape(self, [-1]) if dim is None else self
    d = 0 if dim is None else check_int(dim, "dim") % x.ndim
    expanded = _C.expand_dims(x, d + 1)
    shape = list(x.shape[:d + 1]) + [int(repeats)] + list(x.shape[d + 1:])
    tiled = _C.broadcast_to(expanded, shape)
    return _C.reshape(_C.contiguous(tiled), list(x.shape[:d]) + [x.shape[d] * int(repeats)] +
                      list(x.shape[d + 1:]))


def _tril_triu(upper):
    def method(self, diagonal=0):
        if self.ndim < 2:
            raise RuntimeError(f"{'triu' if upper else 'tril'}: input tensor must have at least 2 "
                               f"dimensions")
        rows, cols = self.shape[-2:]
        i, j = np.indices((rows, cols))
        keep = (j - i >= diagonal) if upper else (j - i <= diagonal)
        mask = convert_to_tensor(keep).to(device=self._device_name)
        return _array_ops.where(mask, self, _C.scalar_like(0.0, self))
    method.__name__ = "triu" if upper else "tril"
    return method


def _diagonal(self, offset=0, dim1=0, dim2=1):
    moved = _movedim(self, [dim1, dim2], [-2, -1])
    rows, cols = moved.shape[-2:]
    i = np.arange(max(0, -offset), min(rows, cols - offset))
    if len(i) == 0:
        return _C.reshape(moved[..., :0, 0], list(moved.shape[:-2]) + [0])
    picked = [moved[..., int(r), int(r + offset)] for r in i]
    return _array_ops.stack(picked, -1)


def _trace(self):
    if self.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {self.ndim}")
    return _C.reduce("sum", _diagonal(self), None, False)


def _diag(self, diagonal=0):
    if self.ndim == 2:
        return _diagonal(self, diagonal)
    if self.ndim != 1:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{self.ndim}D")
    n = self.shape[0] + abs(diagonal)
    eye = np.zeros((self.shape[0], n, n), np.float32)
    for k in range(self.shape[0]):
        r, c = (k, k + diagonal) if diagonal >= 0 else (k - diagonal, k)
        eye[k, r, c] = 1.0
    picks = convert_to_tensor(eye).to(dtype=self._dtype_name, device=self._device_name)
    return _C.reduce("sum", picks * _C.reshape(self, [-1, 1, 1]), [0], False)


def _outer(self, vec2):
    a, b = as_tensors(self, vec2)
    return _C.expand_dims(a, 1) * _C.expand_dims(b, 0)


def _dot(self, other):
    a, b = as_tensors(self, other)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    return _C.reduce("sum", a * b, None, False)


def _inner(self, other):
    a, b = as_tensors(self, other)
    return _C.reduce("sum", a * b, [-1], False) if a.ndim <= 1 and b.ndim <= 1 else \
        _C.matmul(a, _C.transpose(b, -2, -1) if b.ndim >= 2 else b)


def _mv(self, vec):
    return _C.matmul(self, vec)


def _addmm(self, mat1, mat2, *, beta=1, alpha=1):
    return self * float(beta) + _C.matmul(mat1, mat2) * float(alpha)


def _addmv(self, mat, vec, *, beta=1, alpha=1):
    return self * float(beta) + _C.matmul(mat, vec) * float(alpha)


def _addr(self, vec1, vec2, *, beta=1, alpha=1):
    return self * float(beta) + _outer(vec1, vec2) * float(alpha)


def _baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
    return self * float(beta) + _C.matmul(batch1, batch2) * float(alpha)


def _addbmm(self, batch1, batch2, *, beta=1, alpha=1):
    return self * float(beta) + _C.reduce("sum", _C.matmul(batch1, batch2), [0], False) * \
        float(alpha)


def _dist(self, other, p=2):
    diff = _C.reshape(self - other, [-1])
    return _F.pairwise_distance(_C.expand_dims(diff, 0), _C.scalar_like(0.0, diff), p,
                                eps=0.0)[0]


def _take_along_dim(self, indices, dim=None):
    if dim is None:
        return _array_ops.gather_along(_C.reshape(self, [-1]), 0, _C.reshape(indices, [-1]))
    return _array_ops.gather_along(self, dim, indices)


def _new(fill):
    def method(self, *size, dtype=None, device=None, requires_grad=False):
        shape = _shape_arg(size)
        out = _C.tensor_full(shape, float(fill), _dtype_name(dtype) if dtype else self._dtype_name,
                             device or self._device_name)
        out.requires_grad = requires_grad
        return out
    method.__name__ = "new_zeros" if fill == 0 else "new_ones"
    return method


def _new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    out = _C.tensor_full(list(size), float(fill_value),
                         _dtype_name(dtype) if dtype else self._dtype_name,
                         device or self._device_name)
    out.requires_grad = requires_grad
    return out


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    out = convert_to_tensor(np.asarray(data), dtype=dtype or self._dtype_name).to(
        device=device or self._device_name)
    out.requires_grad = requires_grad
    return out


def _torch_or_numpy(op, torch_fn):
    """torch's ``t.max()``/``t.argmax()``: a 0-D tensor, a (values, indices) pair with ``dim``
    (max/min), or the element-wise extreme with a tensor; ``axis=``/``keepdims=`` (NumPy's and
    TF's spelling, which the Tensor's reductions always took) reduce as before."""
    def method(self, dim=None, keepdim=False, axis=None, keepdims=False, out=None):
        if out is not None:  # np.min(t) calls t.min(axis=None, out=None)
            raise TypeError(f"{op}() does not write into out=; assign its result instead")
        if axis is not None or keepdims:
            return _C.reduce(op, self, axis, bool(keepdims))
        return torch_fn(self, dim, keepdim)
    method.__name__ = op
    return method


def _aminmax(self, *, dim=None, keepdim=False):
    lo, hi = _amax_amin("min")(self, dim, keepdim), _amax_amin("max")(self, dim, keepdim)
    return _AminMax(lo, hi)


_AminMax = collections.namedtuple("aminmax", ["min", "max"])


def _in_place(name):
    """``t.name_(...)``: t.name(...) written into t (Tensor.copy_'s rules)."""
    def method(self, *args, **kwargs):
        return self.copy_(getattr(self, name)(*args, **kwargs))
    method.__name__ = name + "_"
    return method


def _comparison_in_place(name):
    def method(self, other):
        return self.copy_(_C.cast(getattr(self, name)(other), self._dtype_name))
    method.__name__ = name + "_"
    return method


_METHODS = {
    "sinh": _math.sinh, "cosh": _math.cosh, "asinh": _math.asinh, "acosh": _math.acosh,
    "atanh": _math.atanh, "arcsinh": _math.asinh, "arccosh": _math.acosh,
    "arctanh": _math.atanh,
    "trunc": _trunc, "fix": _trunc, "floor": _floor, "ceil": _ceil, "round": _round,
    "frac": _frac, "fmod": _fmod, "remainder": _remainder, "floor_divide": _floor_divide,
    "div": _div, "divide": _div, "true_divide": lambda self, other: _div(self, other),
    "log2": _log_base(2.0), "log10": _log_base(10.0), "exp2": _exp2,
    "log1p": lambda self: _math.log1p(_float_of(self)),
    "expm1": lambda self: _math.expm1(_float_of(self)),
    "logit": _logit, "hypot": _hypot, "logaddexp": _logaddexp, "logaddexp2": _logaddexp2,
    "xlogy": _xlogy, "lerp": _lerp, "addcmul": _addcmul, "addcdiv": _addcdiv,
    "clamp_min": _clamp_min, "clamp_max": _clamp_max,
    "absolute": lambda self: _C.unary("abs", self), "positive": lambda self: self,
    "sgn": lambda self: _math.sign(self), "signbit": lambda self: self < 0,
    "deg2rad": lambda self: _float_of(self) * (math.pi / 180.0),
    "rad2deg": lambda self: _float_of(self) * (180.0 / math.pi),
    "multiply": lambda self, other: self * other,
    "subtract": lambda self, other, *, alpha=1: self.sub(other, alpha=alpha),
    "maximum": lambda self, other: _math.maximum(self, other),
    "minimum": lambda self, other: _math.minimum(self, other),
    "fmax": lambda self, other: _math.maximum(self, other),
    "fmin": lambda self, other: _math.minimum(self, other),
    "logical_and": lambda self, other: _math.logical_and(_C.cast(self, "bool"),
                                                         _C.cast(convert_to_tensor(other), "bool")),
    "logical_or": lambda self, other: _math.logical_or(_C.cast(self, "bool"),
                                                       _C.cast(convert_to_tensor(other), "bool")),
    "logical_not": lambda self: _math.logical_not(_C.cast(self, "bool")),
    "logical_xor": _logical_xor,
    "greater": lambda self, other: self.gt(other), "greater_equal": lambda s, o: s.ge(o),
    "less": lambda self, other: self.lt(other), "less_equal": lambda self, other: self.le(other),
    "not_equal": lambda self, other: self.ne(other),
    "isnan": lambda self: _math.is_nan(self), "isinf": lambda self: _math.is_inf(self),
    "isfinite": lambda self: _math.is_finite(self),
    "isposinf": lambda self: _math.logical_and(_math.is_inf(self), self > 0),
    "isneginf": lambda self: _math.logical_and(_math.is_inf(self), self < 0),
    "isreal": lambda self: _C.cast(_array_ops.ones_like(self), "bool"),
    "masked_fill": _masked_fill, "where": _where,
    "amax": _amax_amin("max"), "amin": _amax_amin("min"), "aminmax": _aminmax,
    "max": _torch_or_numpy("max", _torch_ops.max), "min": _torch_or_numpy("min", _torch_ops.min),
    "argmax": _torch_or_numpy("argmax", _torch_ops.argmax),
    "argmin": _torch_or_numpy("argmin", _torch_ops.argmin),
    "all": _all_any("all"), "any": _all_any("any"), "prod": _prod, "logsumexp": _logsumexp,
    "count_nonzero": _count_nonzero, "nansum": _nansum,
    "flatten": _flatten, "unflatten": _unflatten, "ravel": lambda self: _C.reshape(self, [-1]),
    "movedim": _movedim, "moveaxis": _movedim,
    "swapaxes": lambda self, dim0, dim1: _torch_ops.transpose(self, dim0, dim1),
    "swapdims": lambda self, dim0, dim1: _torch_ops.transpose(self, dim0, dim1),
    "narrow": _narrow, "select": _select, "index_select": _index_select, "flip": _flip,
    "fliplr": lambda self: _flip(self, 1), "flipud": lambda self: _flip(self, 0),
    "roll": _roll, "repeat_interleave": _repeat_interleave,
    "tile": lambda self, *dims: _array_ops.tile(
        _C.reshape(self, [1] * (len(_shape_arg(dims)) - self.ndim) + list(self.shape)),
        [1] * (self.ndim - len(_shape_arg(dims))) + list(_shape_arg(dims))),
    "tril": _tril_triu(False), "triu": _tril_triu(True), "diagonal": _diagonal,
    "trace": _trace, "diag": _diag, "outer": _outer, "ger": _outer, "dot": _dot,
    "inner": _inner, "mv": _mv, "bmm": lambda self, other: _C.matmul(self, other),
    "addmm": _addmm, "addmv": _addmv, "addr": _addr, "baddbmm": _baddbmm, "addbmm": _addbmm,
    "dist": _dist, "take_along_dim": _take_along_dim,
    "gather": lambda self, dim, index: _torch_ops.gather(self, dim, index),
    "reshape_as": lambda self, other: _C.reshape(self, list(other.shape)),
    "view_as": lambda self, other: _C.reshape(self, list(other.shape)),
    "expand_as": lambda self, other: _C.broadcast_to(self, list(other.shape)),
    "broadcast_to": lambda self, size: _C.broadcast_to(self, list(size)),
    "is_same_size": lambda self, other: tuple(self.shape) == tuple(other.shape),
    "is_floating_point": lambda self: self._dtype_name in _FLOATING,
    "is_signed": lambda self: self._dtype_name not in ("uint8", "bool"),
    "is_nonzero": lambda self: bool(self.item()) if self.numel() == 1 else (_ for _ in ()).throw(
        RuntimeError("Boolean value of Tensor with more than one value is ambiguous")),
    "byte": lambda self: _C.cast(self, "uint8"),
    "new_zeros": _new(0), "new_ones": _new(1), "new_full": _new_full, "new_tensor": _new_tensor,
    "new_empty": _new(0),
    "hardshrink": lambda self, lambd=0.5: _F.hardshrink(self, lambd),
    "prelu": lambda self, weight: _F.prelu(self, weight),
    "equal": lambda self, other: _torch_ops.equal(self, other),
    "split_with_sizes": lambda self, split_sizes, dim=0: _array_ops.split_by_size(
        self, list(split_sizes), dim),
    "unsafe_split": lambda self, split_size, dim=0: _array_ops.split_by_size(self, split_size,
                                                                             dim),
    "unsafe_split_with_sizes": lambda self, split_sizes, dim=0: _array_ops.split_by_size(
        self, list(split_sizes), dim),
    "unsafe_chunk": lambda self, chunks, dim=0: _array_ops.chunk(self, chunks, dim),
    "vdot": _dot,
    "sum_to_size": lambda self, *size: _sum_to_size(self, _shape_arg(size)),
}
# the top-level functions that are methods too (t.cumsum(0), t.kron(u), ...)
for _name in ("tensor_split", "hsplit", "vsplit", "dsplit", "cumsum", "diff", "rot90", "cross",
              "kron", "cov", "corrcoef", "nanmean", "nonzero", "argwhere", "diag_embed",
              "diagflat", "matrix_power", "adjoint", "resolve_conj", "resolve_neg", "is_conj",
              "is_neg", "unfold", "cummax", "cummin", "cumprod", "histc", "bincount",
              "as_strided", "select_scatter", "slice_scatter", "diagonal_scatter"):
    _METHODS[_name] = getattr(_torch_functions, _name)


def _sum_to_size(self, size):
    """Sums the broadcast dimensions away so the result has ``size`` (autograd's reduction)."""
    size = list(size)
    lead = self.ndim - len(size)
    axes = list(range(lead)) + [lead + k for k, s in enumerate(size)
                                if s == 1 and self.shape[lead + k] != 1]
    out = _C.reduce("sum", self, axes, True) if axes else self
    return _C.reshape(out, size)

# out-of-place methods whose result fits their input's shape and dtype: each has a `name_` form
_IN_PLACE = ["sinh", "cosh", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "trunc",
             "fix", "floor", "ceil", "round", "frac", "fmod", "remainder", "floor_divide",
             "divide", "true_divide", "log2", "log10", "exp2", "log1p", "expm1", "logit",
             "hypot", "xlogy", "lerp", "addcmul", "addcdiv", "clamp_min", "clamp_max",
             "absolute", "sgn", "deg2rad", "rad2deg", "multiply", "subtract", "clip", "sign",
             "masked_fill", "tril", "triu", "addmm", "addmv", "addr", "baddbmm", "addbmm",
             "logical_and", "logical_or", "logical_not", "logical_xor", "negative"]
_COMPARISON_IN_PLACE = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less",
                        "less_equal", "not_equal"]

# torch.name(input, ...) for these methods and a few the older modules define (torch.where's
# argument order is not its method's, so it stays _torch_ops.where)
FUNCTION_NAMES = sorted(set(_METHODS) - {"byte", "new_zeros", "new_ones", "new_full",
                                         "new_tensor", "new_empty", "reshape_as", "view_as",
                                         "expand_as", "is_same_size", "is_signed", "where",
                                         "sum_to_size", "unsafe_split_with_sizes", "unfold"} |
                        {"add", "sub", "mul", "t", "pow", "clamp", "clip", "neg", "negative",
                         "sign", "abs", "exp", "log", "sqrt", "rsqrt", "square", "reciprocal",
                         "relu", "sigmoid", "tanh", "squeeze"})


def install():
    for name, fn in _METHODS.items():
        setattr(Tensor, name, fn)
    for name in _IN_PLACE:
        setattr(Tensor, name + "_", _in_place(name))
    for name in _COMPARISON_IN_PLACE:
        setattr(Tensor, name + "_", _comparison_in_place(name))
    Tensor.is_cpu = property(lambda self: self.device.type == "cpu")
    Tensor.is_cuda = property(lambda self: self.device.type == "cuda")
    Tensor.get_device = lambda self: -1 if self.device.type == "cpu" else self.device.index
    Tensor.mT = property(lambda self: _C.transpose(self, -2, -1))
    Tensor.mH = Tensor.mT  # no complex dtypes: the conjugate transpose is the transpose
    Tensor.H = property(lambda self: _C.transpose(self, 0, 1) if self.ndim == 2 else _t_error(self))
    Tensor.is_inference = lambda self: False
    Tensor.__deepcopy__ = _deepcopy
    Tensor.__mod__ = _remainder  # torch's %: the remainder with the divisor's sign
    Tensor.__rmod__ = lambda self, other: _remainder(_operand_like(other, self), self)
    Tensor.__floordiv__ = _floor_divide
    for name, fn in _torch_bitwise.OPERATORS.items():  # & | ^ ~ << >>
        setattr(Tensor, name, fn)
    Tensor.__rfloordiv__ = lambda self, other: _floor_divide(_operand_like(other, self), self)


def _deepcopy(self, memo):
    """``copy.deepcopy`` of a leaf tensor (``copy.deepcopy(model.state_dict())`` keeps a
    checkpoint in memory): a copy with the same requires_grad and marks (a Parameter stays one),
    as PyTorch; a tensor inside a graph refuses, as PyTorch does."""
    if not self.is_leaf:
        raise RuntimeError("Only Tensors created explicitly by the user (graph leaves) support "
                           "the deepcopy protocol at the moment")
    if id(self) in memo:
        return memo[id(self)]
    copied = _C.clone(_C.detach(self))
    for mark in ("_is_parameter", "_is_variable"):
        if getattr(self, mark, False):
            setattr(copied, mark, True)
    if self.requires_grad:
        copied.requires_grad_(True)
    memo[id(self)] = copied
    return copied


def _t_error(t):
    raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {t.ndim}-D "
                       f"tensor.")


def _operand_like(value, like):
    return as_tensors(like, value)[1]


def function_form(name):
    """``torch.name(input, *args, out=None, **kwargs)`` as ``input.name(*args, **kwargs)``,
    written into ``out`` when given."""
    def fn(input, *args, out=None, **kwargs):
        result = getattr(convert_to_tensor(input), name)(*args, **kwargs)
        if out is None:
            return result
        if tuple(out.shape) != tuple(result.shape):
            raise RuntimeError(f"torch.{name}: out= has shape {list(out.shape)}, the result "
                               f"{list(result.shape)} (gpuaccel does not resize out=)")
        return out.copy_(result)
    fn.__name__ = name
    fn.__doc__ = f"``torch.{name}(input, ...)``: ``input.{name}(...)``."
    return fn


# ---- element-wise with a second operand, indexing by masks and index tensors -------------------

def _copysign(self, other):
    x, y = as_tensors(_float_of(self), other)
    magnitude = _C.unary("abs", x)
    return _array_ops.where(y < 0, -magnitude, magnitude)


def _heaviside(self, values):
    x, v = as_tensors(self, values)
    zero, one = _scalar(0.0, x), _scalar(1.0, x)
    return _array_ops.where(x > 0, one, _array_ops.where(_C.binary("equal", x, zero),
                                                         _C.broadcast_to(v, list(x.shape)), zero))


def _ldexp(self, other):
    x, e = as_tensors(_float_of(self), other)
    return x * _exp2(_float_of(e))


def _take(self, index):
    flat = _C.reshape(self, [-1])
    ids = convert_to_tensor(index)
    return _C.reshape(_array_ops.gather(flat, _C.reshape(ids, [-1])), list(ids.shape))


def _masked_select(self, mask):
    """The entries where ``mask`` (broadcast) holds, as a 1-D tensor (the mask is read on the
    host: its count decides the shape); a gather, so gradients reach the picked entries."""
    m = convert_to_tensor(mask)
    shape = list(np.broadcast_shapes(tuple(self.shape), tuple(m.shape)))
    x = _C.reshape(_C.contiguous(_C.broadcast_to(self, shape)), [-1])
    picks = np.flatnonzero(np.broadcast_to(_C.detach(m)._numpy().astype(bool), shape))
    return _array_ops.gather(x, picks.astype(np.int64).tolist()) if len(picks) else x[:0]


def _renorm(self, p, dim, maxnorm):
    """Each slice along ``dim`` rescaled to p-norm at most ``maxnorm``."""
    d = check_int(dim, "dim") % self.ndim
    others = [k for k in range(self.ndim) if k != d]
    p = float(p)
    norms = _C.reduce("sum", _C.unary("abs", self) ** p, others, True) ** (1.0 / p)
    scale = _array_ops.where(norms > float(maxnorm), float(maxnorm) / (norms + 1e-7),
                             _C.scalar_like(1.0, norms))
    return self * scale


def _logcumsumexp(self, dim):
    d = check_int(dim, "dim") % max(self.ndim, 1)
    peak = _C.detach(_C.reduce("max", self, [d], True))
    return _log_of(_torch_functions.cumsum(_exp_of(self - peak), d)) + peak


_METHODS.update({
    "copysign": _copysign, "heaviside": _heaviside, "ldexp": _ldexp,
    "take": _take, "masked_select": _masked_select, "renorm": _renorm,
    "logcumsumexp": _logcumsumexp,
})
_SCATTERS = {name: getattr(_torch_scatter, name) for name in _torch_scatter.__all__}
_METHODS.update(_SCATTERS)
_IN_PLACE += ["copysign", "heaviside", "ldexp", "renorm", "cumsum", "cumprod"] + list(_SCATTERS)
FUNCTION_NAMES = sorted(set(FUNCTION_NAMES) | {"copysign", "heaviside", "ldexp", "take",
                                               "masked_select", "renorm", "logcumsumexp"}
                        | set(_SCATTERS))



_TRIG = {"sin": _math.sin, "cos": _math.cos, "tan": _math.tan,
         "asin": _math.asin, "acos": _math.acos, "atan": _math.atan,
         "arcsin": _math.asin, "arccos": _math.acos, "arctan": _math.atan,
         "atan2": _math.atan2, "arctan2": _math.atan2, "sinc": _math._sinc,
         "erf": _math.erf, "erfc": _math.erfc}
_METHODS.update(_TRIG)
_IN_PLACE += list(_TRIG)
FUNCTION_NAMES = sorted(set(FUNCTION_NAMES) | set(_TRIG) | {name + "_" for name in _TRIG})


def _nan_to_num(self, nan=0.0, posinf=None, neginf=None):
    """NaN -> ``nan``, +inf/-inf -> ``posinf``/``neginf`` (the dtype's largest and smallest
    finite values by default), as torch.nan_to_num; differentiable where kept."""
    from .keras import ops as _keras_ops  # keras.ops imports this face's modules
    return _keras_ops.nan_to_num(self, nan=nan, posinf=posinf, neginf=neginf)


_METHODS["nan_to_num"] = _nan_to_num
_IN_PLACE.append("nan_to_num")
FUNCTION_NAMES = sorted(set(FUNCTION_NAMES) | {"nan_to_num", "nan_to_num_"})

_SORTING = {name: getattr(_torch_sort, name) for name in (
    "sort", "argsort", "msort", "topk", "kthvalue", "median", "quantile", "unique",
    "unique_consecutive")}
_METHODS.update(_SORTING)
FUNCTION_NAMES = sorted(set(FUNCTION_NAMES) | set(_SORTING))

_SPECIAL = {name: getattr(_torch_special, name) for name in (
    "lgamma", "digamma", "mvlgamma", "i0", "erfinv", "frexp")}
_METHODS.update(_SPECIAL)
_IN_PLACE += ["lgamma", "digamma", "mvlgamma", "i0", "erfinv"]
FUNCTION_NAMES = sorted(set(FUNCTION_NAMES) | set(_SPECIAL) | {"i0_"})

_METHODS.update(_torch_bitwise.METHODS)
_IN_PLACE += list(_torch_bitwise.METHODS)
FUNCTION_NAMES = sorted(set(FUNCTION_NAMES) | set(_torch_bitwise.METHODS))
