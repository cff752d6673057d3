"""Top-level PyTorch functions that are no Tensor method (or whose arguments differ from one):
joins (hstack, vstack, dstack, column_stack, atleast_*d, block_diag, cartesian_prod, meshgrid),
pairwise geometry (cdist, cross, kron), statistics (std_mean, var_mean, cov, corrcoef, nanmean),
cumulative sums and differences (composed: cumsum is a product with a triangular matrix, so it
has autograd), index helpers (tril_indices, triu_indices, nonzero, argwhere: computed on the host,
like torch.where(condition)), dtype queries, and the ``*_copy`` forms. ``gpuaccel.torch`` exports
them; methods among them are installed on Tensor too.
"""
import builtins
import collections
import math

import numpy as np

from . import _C
from . import _array_ops
from . import _torch_functional as _F
from . import linalg as _linalg
from ._convert import convert_to_tensor
from ._int_range import check_int
from ._tensor import Tensor, _dtype_name, tensor
from ._torch_generator import default_generator, drawing_from
from .dtypes import FLOATING_NAMES, INTEGER_NAMES, as_dtype


def _tensors(values, op):
    if isinstance(values, Tensor) or not isinstance(values, (list, tuple)):
        raise TypeError(f"{op}(): argument 'tensors' must be a tuple or list of Tensors")
    return [convert_to_tensor(v) for v in values]


def atleast_1d(*tensors):
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    return _atleast(tensors, 3)


def _atleast(tensors, n):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        return tuple(_atleast(tuple(tensors[0]), n))
    out = []
    for t in tensors:
        t = convert_to_tensor(t)
        if t.ndim < n:
            # torch's rules: () -> (1,)*n; (k,) -> (1, k) -> (1, k, 1); (a, b) -> (a, b, 1)
            if t.ndim == 0:
                shape = [1] * n
            elif t.ndim == 1:
                shape = [1, t.shape[0], 1][:n]
            else:
                shape = list(t.shape) + [1]
            t = _C.reshape(t, shape)
        out.append(t)
    return out[0] if len(out) == 1 else tuple(out)


def hstack(tensors):
    ts = _tensors(tensors, "hstack")
    return _array_ops.cat(ts, 0 if all(t.ndim == 1 for t in ts) else 1)


def vstack(tensors):
    return _array_ops.cat([atleast_2d(t) for t in _tensors(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors):
    return _array_ops.cat([atleast_3d(t) for t in _tensors(tensors, "dstack")], 2)


def column_stack(tensors):
    ts = [_C.reshape(t, [-1, 1]) if t.ndim <= 1 else t for t in _tensors(tensors, "column_stack")]
    return _array_ops.cat(ts, 1)


def block_diag(*tensors):
    ts = [_C.reshape(t, [1, -1]) if t.ndim < 2 else t for t in map(convert_to_tensor, tensors)]
    cols = sum(t.shape[1] for t in ts)
    rows, left = [], 0
    for t in ts:
        right = cols - left - t.shape[1]
        rows.append(_array_ops.pad(t, [[0, 0], [left, right]]))
        left += t.shape[1]
    return _array_ops.cat(rows, 0)


def meshgrid(*tensors, indexing="ij"):
    """``torch.meshgrid(*tensors, indexing='ij')`` ('xy' swaps the first two axes)."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of 'xy' or 'ij', but received: "
                         f"{indexing}")
    ts = [_C.reshape(convert_to_tensor(t), [-1]) for t in tensors]
    shape = [t.shape[0] for t in ts]
    grids = []
    for k, t in enumerate(ts):
        view = [1] * len(ts)
        view[k] = shape[k]
        grids.append(_C.broadcast_to(_C.reshape(t, view), shape))
    if indexing == "xy" and len(ts) >= 2:  # Cartesian: the first two axes swapped
        grids = [_C.transpose(g, 0, 1) for g in grids]
    return tuple(grids)


def cartesian_prod(*tensors):
    grids = meshgrid(*tensors, indexing="ij")
    if len(grids) == 1:
        return grids[0]
    return _array_ops.stack([_C.reshape(_C.contiguous(g), [-1]) for g in grids], 1)


def broadcast_shapes(*shapes):
    return tuple(np.broadcast_shapes(*[tuple([s] if isinstance(s, int) else s) for s in shapes]))


def broadcast_tensors(*tensors):
    ts = [convert_to_tensor(t) for t in tensors]
    shape = list(broadcast_shapes(*[tuple(t.shape) for t in ts]))
    return tuple(_C.broadcast_to(t, shape) for t in ts)


def cdist(x1, x2, p=2.0, compute_mode=None):
    """Distances between the rows of x1 (..., P, M) and of x2 (..., R, M): (..., P, R)."""
    a, b = convert_to_tensor(x1), convert_to_tensor(x2)
    diff = _C.expand_dims(a, a.ndim - 1) - _C.expand_dims(b, b.ndim - 2)  # (..., P, R, M)
    return _F.pairwise_distance(diff, _C.scalar_like(0.0, diff), p, eps=0.0)


def pdist(input, p=2):
    """The upper triangle (row by row) of cdist(input, input)."""
    x = convert_to_tensor(input)
    n = x.shape[0]
    rows, cols = np.triu_indices(n, 1)
    return _F.pairwise_distance(_array_ops.gather(x, rows.tolist()),
                                _array_ops.gather(x, cols.tolist()), p, eps=0.0)


def kron(input, other):
    a, b = convert_to_tensor(input), convert_to_tensor(other)
    n = max(a.ndim, b.ndim)
    a = _C.reshape(a, [1] * (n - a.ndim) + list(a.shape))
    b = _C.reshape(b, [1] * (n - b.ndim) + list(b.shape))
    inter = [v for k in range(n) for v in (a.shape[k], 1)]
    outer = _C.reshape(a, inter) * _C.reshape(b, [v for k in range(n) for v in (1, b.shape[k])])
    return _C.reshape(_C.contiguous(outer), [a.shape[k] * b.shape[k] for k in range(n)])


def cross(input, other, dim=None):
    a, b = convert_to_tensor(input), convert_to_tensor(other)
    if dim is None:  # torch 1.13: the first dimension of size 3
        dim = next((k for k, s in enumerate(a.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError(f"no dimension of size 3 in input of shape {list(a.shape)}")
    d = check_int(dim, "dim") % a.ndim
    if a.shape[d] != 3 or b.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got "
                           f"{a.shape[d]} and {b.shape[d]}")
    ax = [_C.select(a, d, k) for k in range(3)]
    bx = [_C.select(b, d, k) for k in range(3)]
    parts = [ax[1] * bx[2] - ax[2] * bx[1], ax[2] * bx[0] - ax[0] * bx[2],
             ax[0] * bx[1] - ax[1] * bx[0]]
    return _array_ops.stack(parts, d)


def std_mean(input, dim=None, unbiased=True, keepdim=False, correction=None):
    x = convert_to_tensor(input)
    return x.std(dim, unbiased, keepdim, correction), _C.reduce(
        "mean", x, None if dim is None else dim, bool(keepdim))


def var_mean(input, dim=None, unbiased=True, keepdim=False, correction=None):
    x = convert_to_tensor(input)
    return x.var(dim, unbiased, keepdim, correction), _C.reduce(
        "mean", x, None if dim is None else dim, bool(keepdim))


def cov(input, correction=1, fweights=None, aweights=None):
    """Covariance of the rows (variables) of ``input`` over its columns (observations)."""
    if fweights is not None or aweights is not None:
        raise ValueError("cov(fweights=, aweights=) are not supported yet")
    x = convert_to_tensor(input)
    x = _C.reshape(x, [1, -1]) if x.ndim < 2 else x
    n = x.shape[1]
    centered = x - _C.reduce("mean", x, [1], True)
    dof = n - correction
    return _C.matmul(centered, _C.transpose(centered, 0, 1)) * (1.0 / dof if dof > 0 else math.inf)


def corrcoef(input):
    c = cov(input)
    if c.ndim == 0 or c.shape == ():
        return c / c
    d = _C.unary("sqrt", _diagonal_of(c))
    return _array_ops.clamp(c / _C.expand_dims(d, 1) / _C.expand_dims(d, 0), -1.0, 1.0)


def _diagonal_of(m):
    return _array_ops.stack([m[k, k] for k in range(m.shape[0])], 0)


def nanmean(input, dim=None, keepdim=False):
    x = convert_to_tensor(input)
    keep = _C.cast(_C.binary("equal", x, x), x._dtype_name)  # 0 at NaN
    clean = _array_ops.where(_C.cast(keep, "bool"), x, _C.scalar_like(0.0, x))
    return _C.reduce("sum", clean, dim, bool(keepdim)) / _C.reduce("sum", keep, dim, bool(keepdim))


def cumsum(input, dim, dtype=None):
    """Running sums along ``dim``: x moved last, times an upper-triangular matrix of ones
    (differentiable; integer inputs sum in int64, as torch)."""
    x = convert_to_tensor(input)
    if dtype is not None:
        x = _C.cast(x, _dtype_name(dtype))
    integral = x._dtype_name not in FLOATING_NAMES
    work = _C.cast(x, "float32") if integral else x
    d = check_int(dim, "dim") % max(work.ndim, 1)
    if work.ndim == 0:
        return x
    n = work.shape[d]
    ones = convert_to_tensor(np.triu(np.ones((n, n), np.float32))).to(
        dtype=work._dtype_name, device=work._device_name)
    moved = _C.transpose(work, d, work.ndim - 1) if d != work.ndim - 1 else work
    out = _C.matmul(moved, ones)
    out = _C.transpose(out, d, work.ndim - 1) if d != work.ndim - 1 else out
    if integral:  # exact while the sums fit float32's 24-bit mantissa
        out = _C.cast(_C.unary("neg", _C.unary("neg", out)), "int64")
    return out


def diff(input, n=1, dim=-1, prepend=None, append=None):
    x = convert_to_tensor(input)
    d = check_int(dim, "dim") % x.ndim
    parts = [p for p in (prepend, x, append) if p is not None]
    if len(parts) > 1:
        x = _array_ops.cat([convert_to_tensor(p) for p in parts], d)
    lead = (slice(None),) * d
    for _ in range(check_int(n, "n")):
        x = x[lead + (slice(1, None),)] - x[lead + (slice(0, -1),)]
    return x


def rot90(input, k=1, dims=(0, 1)):
    x = convert_to_tensor(input)
    d0, d1 = (check_int(d, "dims") % x.ndim for d in dims)
    k %= 4
    if k == 1:
        return _C.transpose(x.flip(d1), d0, d1)
    if k == 2:
        return x.flip(d0, d1)
    if k == 3:
        return _C.transpose(x, d0, d1).flip(d1)
    return _C.clone(x)


def _trapezoid_areas(y, x, dx, dim):
    """(the trapezoids' areas along ``dim``, that dim): (y[i] + y[i+1]) / 2 times the spacing."""
    values = convert_to_tensor(y)
    d = check_int(dim, "dim") % values.ndim
    lead = (slice(None),) * d
    areas = (values[lead + (slice(1, None),)] + values[lead + (slice(0, -1),)]) * 0.5
    if x is not None:
        spacing = convert_to_tensor(x)
        return areas * diff(spacing, dim=-1 if spacing.ndim == 1 else d), d
    return (areas if dx is None else areas * float(dx)), d


def trapezoid(y, x=None, *, dx=None, dim=-1):
    areas, d = _trapezoid_areas(y, x, dx, dim)
    return _C.reduce("sum", areas, [d], False)


def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


def tensor_split(input, indices_or_sections, dim=0):
    x = convert_to_tensor(input)
    d = check_int(dim, "dim") % x.ndim
    n = x.shape[d]
    if isinstance(indices_or_sections, int):
        k = indices_or_sections
        sizes = [n // k + 1] * (n % k) + [n // k] * (k - n % k)
        bounds = np.cumsum([0] + sizes).tolist()
    else:
        bounds = [0] + [min(int(i), n) for i in indices_or_sections] + [n]
    lead = (slice(None),) * d
    return tuple(x[lead + (slice(a, max(a, b)),)] for a, b in zip(bounds[:-1], bounds[1:]))


def _split_by(axis, name):
    def fn(input, indices_or_sections):
        x = convert_to_tensor(input)
        d = 0 if (axis == 1 and x.ndim == 1) else axis
        if x.ndim < (3 if axis == 2 else max(d, 1) + (0 if axis == 1 else 1)):
            raise RuntimeError(f"torch.{name} requires a tensor with at least "
                               f"{3 if axis == 2 else d + 1} dimension, but got a tensor with "
                               f"{x.ndim} dimensions!")
        if isinstance(indices_or_sections, int) and x.shape[d] % indices_or_sections:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {d}, but the "
                               f"size of the dimension {x.shape[d]} is not divisible by the "
                               f"split_size {indices_or_sections}!")
        return tensor_split(x, indices_or_sections, d)
    fn.__name__ = name
    return fn


hsplit, vsplit, dsplit = _split_by(1, "hsplit"), _split_by(0, "vsplit"), _split_by(2, "dsplit")


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    if (dim1, dim2) not in ((-2, -1),):
        raise ValueError("diag_embed(dim1, dim2) other than the last two is not supported yet")
    x = convert_to_tensor(input)
    n = x.shape[-1] + abs(offset)
    picks = np.zeros((x.shape[-1], n, n), np.float32)
    for k in range(x.shape[-1]):
        r, c = (k, k + offset) if offset >= 0 else (k - offset, k)
        picks[k, r, c] = 1.0
    table = _C.reshape(convert_to_tensor(picks).to(dtype=x._dtype_name, device=x._device_name),
                       [x.shape[-1], n * n])
    return _C.reshape(_C.matmul(x, table), list(x.shape[:-1]) + [n, n])


def diagflat(input, offset=0):
    return convert_to_tensor(input).flatten().diag(offset)


def tensordot(a, b, dims=2, out=None):
    """``torch.tensordot(a, b, dims)``: ``dims`` an int (the last of a with the first of b) or
    two lists of dimensions."""
    return _linalg.tensordot(a, b, dims)


def dropout(input, p, train):
    """``torch.dropout(input, p, train)`` (F.dropout's ``training`` is ``train`` here)."""
    return _F.dropout(input, p, train)


def chain_matmul(*matrices):
    out = convert_to_tensor(matrices[0])
    for m in matrices[1:]:
        out = _C.matmul(out, convert_to_tensor(m))
    return out


def matrix_power(input, n):
    x = convert_to_tensor(input)
    n = check_int(n, "n")
    if n < 0:
        raise ValueError("matrix_power(n < 0) needs an inverse, which gpuaccel does not have yet")
    out = _C.broadcast_to(convert_to_tensor(np.eye(x.shape[-1], dtype=np.float32)).to(
        dtype=x._dtype_name, device=x._device_name), list(x.shape))
    for _ in range(n):
        out = _C.matmul(out, x)
    return out


def _indices(upper):
    def fn(row, col, offset=0, dtype="int64", device="cpu", layout=None):
        rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
        return tensor(np.stack([rows, cols]).astype(np.int64), dtype=dtype, device=device)
    fn.__name__ = "triu_indices" if upper else "tril_indices"
    return fn


tril_indices, triu_indices = _indices(False), _indices(True)


def nonzero(input, *, as_tuple=False):
    """Coordinates of the non-zero entries (int64, computed on the host: the count decides the
    shape)."""
    x = convert_to_tensor(input)
    coords = np.nonzero(_C.detach(x)._numpy())
    if as_tuple:
        return tuple(tensor(c.astype(np.int64)).to(device=x._device_name) for c in coords)
    return tensor(np.stack(coords, 1).astype(np.int64).reshape(-1, x.ndim)).to(
        device=x._device_name)


def argwhere(input):
    return nonzero(input)


def rsub(input, other, alpha=1):
    """other - alpha * input."""
    x = convert_to_tensor(input)
    return (x * -float(alpha)) + other


def scalar_tensor(s, dtype="float32", device=None, requires_grad=False):
    out = tensor(np.asarray(s), dtype=dtype or "float32", device=device)
    out.requires_grad = requires_grad
    return out


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor):
        out = data if dtype is None else _C.cast(data, _dtype_name(dtype))
        return out if device is None else out.to(device=device)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def logspace(start, end, steps, base=10.0, dtype=None, device=None, requires_grad=False):
    exponents = np.linspace(float(start), float(end), int(steps), dtype=np.float64)
    out = tensor((float(base) ** exponents).astype(np.float32), dtype=dtype or "float32",
                 device=device)
    out.requires_grad = requires_grad
    return out


def result_type(tensor1, tensor2):
    """The dtype of ``tensor1 + tensor2`` under gpuaccel's (torch's) promotion rules."""
    a = convert_to_tensor(tensor1) if isinstance(tensor1, Tensor) else tensor1
    b = convert_to_tensor(tensor2) if isinstance(tensor2, Tensor) else tensor2
    if not isinstance(a, Tensor):
        a, b = b, a
    return (a + b * 0 if isinstance(b, Tensor) else a + 0 * b).dtype


def promote_types(type1, type2):
    return as_dtype(_C.promote_types(_dtype_name(type1), _dtype_name(type2)))


def get_default_dtype():
    return as_dtype("float32")


def is_same_size(input, other):
    return tuple(convert_to_tensor(input).shape) == tuple(convert_to_tensor(other).shape)


def is_signed(input):
    return convert_to_tensor(input).is_signed()


def is_conj(input):
    return False  # gpuaccel has no complex dtypes, so nothing is a conjugate view


def is_neg(input):
    return False


def resolve_conj(input):
    return convert_to_tensor(input)


resolve_neg = resolve_conj


def adjoint(input):
    """The conjugate transpose of the last two dimensions (a transpose: no complex dtypes)."""
    return _C.transpose(convert_to_tensor(input), -2, -1)


def _copy_form(name):
    """torch.name_copy(input, ...): the view op's result as a new tensor."""
    def fn(input, *args, **kwargs):
        result = getattr(convert_to_tensor(input), name)(*args, **kwargs)
        if isinstance(result, (tuple, list)):
            return type(result)(_C.clone(r) for r in result)
        return _C.clone(result)
    fn.__name__ = name + "_copy"
    return fn


COPY_FORMS = {f"{name}_copy": _copy_form(name) for name in (
    "permute", "transpose", "t", "squeeze", "unsqueeze", "view", "expand", "diagonal", "select",
    "detach", "unbind", "split", "narrow", "split_with_sizes", "unfold", "as_strided")}
COPY_FORMS["alias_copy"] = _copy_form("contiguous")  # x's values in new memory
COPY_FORMS["alias_copy"].__name__ = "alias_copy"

e, pi, inf, nan = math.e, math.pi, math.inf, math.nan


# ---- more creation, combinatorics, randomness -----------------------------------------------------

def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """True where an entry of ``elements`` equals one of ``test_elements``."""
    x = convert_to_tensor(elements)
    tests = _C.reshape(convert_to_tensor(test_elements).to(dtype=x._dtype_name), [-1])
    hits = _C.binary("equal", _C.expand_dims(x, x.ndim), tests)
    found = _C.cast(_C.reduce("max", _C.cast(hits, "int32"), [x.ndim], False), "bool")
    return _C.cast(1 - _C.cast(found, "int32"), "bool") if invert else found


def combinations(input, r=2, with_replacement=False):
    """All length-``r`` combinations of a 1-D tensor's entries, one per row (index pairs
    computed on the host, then a gather: gradients reach the entries)."""
    import itertools
    x = convert_to_tensor(input)
    if x.ndim != 1:
        raise ValueError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    rows = np.array(list(pick(range(x.shape[0]), int(r))), np.int64).reshape(-1, int(r))
    if rows.shape[0] == 0:
        return _C.reshape(x[:0], [0]) if r else x[:0]
    return _C.reshape(_array_ops.gather(x, rows.reshape(-1).tolist()), list(rows.shape))


def vander(x, N=None, increasing=False):
    v = convert_to_tensor(x)
    n = v.shape[0] if N is None else int(N)
    powers = list(range(n)) if increasing else list(range(n - 1, -1, -1))
    if v._dtype_name not in FLOATING_NAMES:
        cols = [_C.cast(_C.cast(v, "float32") ** float(k), v._dtype_name) for k in powers]
    else:
        cols = [v ** float(k) if k else _C.scalar_like(0.0, v) * v + 1.0 for k in powers]
    return _array_ops.stack(cols, 1)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    areas, d = _trapezoid_areas(y, x, dx, dim)
    return cumsum(areas, d)


def _window(formula, name):
    def fn(window_length, periodic=True, *, dtype=None, device=None, requires_grad=False,
           **kwargs):
        n = check_int(window_length, "window_length")
        if n == 1:
            values = np.ones(1)
        else:
            values = formula(np.arange(n, dtype=np.float64), n + 1 if periodic else n, **kwargs)
        out = tensor(values.astype(np.float32), dtype=dtype or "float32", device=device)
        out.requires_grad = requires_grad
        return out
    fn.__name__ = name
    fn.__doc__ = f"``torch.{name}(window_length, periodic=True)``: computed on the host."
    return fn


hann_window = _window(lambda k, n: 0.5 - 0.5 * np.cos(2 * np.pi * k / (n - 1)), "hann_window")
hamming_window = _window(lambda k, n, alpha=0.54, beta=0.46: alpha - beta * np.cos(
    2 * np.pi * k / (n - 1)), "hamming_window")
blackman_window = _window(lambda k, n: 0.42 - 0.5 * np.cos(2 * np.pi * k / (n - 1)) + 0.08 *
                          np.cos(4 * np.pi * k / (n - 1)), "blackman_window")
bartlett_window = _window(lambda k, n: 1 - np.abs(2 * k / (n - 1) - 1), "bartlett_window")
kaiser_window = _window(lambda k, n, beta=12.0: np.i0(beta * np.sqrt(
    1 - (2 * k / (n - 1) - 1) ** 2)) / np.i0(beta), "kaiser_window")


def randperm(n, *, generator=None, dtype="int64", device=None, requires_grad=False):
    """A random permutation of 0..n-1: the order of n uniform draws (from ``generator``, else
    the global stream that manual_seed seeds)."""
    with drawing_from(generator, "randperm"):
        draws = _C.tensor_random("uniform", [check_int(n, "n")], "float32", "cpu")
    order = np.argsort(draws._numpy(), kind="stable").astype(np.int64)
    return tensor(order, dtype=dtype, device=device)


def bernoulli(input, p=None, *, generator=None):
    """1 with probability ``input`` (or ``p``) per entry, else 0, in input's dtype."""
    probs = convert_to_tensor(input)
    if p is not None:
        probs = _C.scalar_like(float(p), probs) + probs * 0.0
    with drawing_from(generator, "bernoulli"):
        draws = _C.tensor_random("uniform", list(probs.shape), probs._dtype_name,
                                 probs._device_name)
    return _C.cast(draws < _C.detach(probs), probs._dtype_name)


def initial_seed():
    """The seed of the default generator (the last manual_seed/seed)."""
    return default_generator.initial_seed()


def seed():
    """Seeds the default generator from the operating system's entropy and returns the seed."""
    return default_generator.seed()


# ---- dtype and mode queries ---------------------------------------------------------------------

class finfo:
    """``torch.finfo(dtype)``: bits, eps, max, min, tiny, resolution of a float dtype."""

    def __init__(self, type=None):  # noqa: A002
        name = _dtype_name(type or "float32")
        if name not in FLOATING_NAMES:
            raise TypeError(f"torch.finfo() requires a floating point input type, got {name}")
        import ml_dtypes
        info = ml_dtypes.finfo(ml_dtypes.bfloat16) if name == "bfloat16" else np.finfo(name)
        self.dtype, self.bits = name, int(info.bits)
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.tiny)
        self.resolution = float(10 ** -int(info.precision))


class iinfo:
    """``torch.iinfo(dtype)``: bits, max, min of an integer dtype."""

    def __init__(self, type):  # noqa: A002
        name = _dtype_name(type)
        if name not in INTEGER_NAMES + ("bool",):
            raise TypeError(f"torch.iinfo() requires an integer input type, got {name}")
        info = np.iinfo("uint8" if name == "bool" else name)
        self.dtype, self.bits, self.max, self.min = name, int(info.bits), int(info.max), \
            int(info.min)


_KIND = {"bool": 0, "uint8": 1, "int8": 1, "int16": 1, "int32": 1, "int64": 1, "float16": 2,
         "bfloat16": 2, "float32": 2, "float64": 2}


def can_cast(from_, to):
    """torch's rule: no cast to a lower kind (float to integer, integer to bool)."""
    return _KIND[_dtype_name(from_)] <= _KIND[_dtype_name(to)]


_TYPE_NAMES = {"float32": "torch.FloatTensor", "float16": "torch.HalfTensor",
               "bfloat16": "torch.BFloat16Tensor", "int32": "torch.IntTensor",
               "int64": "torch.LongTensor", "uint8": "torch.ByteTensor", "bool": "torch.BoolTensor",
               "float64": "torch.DoubleTensor", "int8": "torch.CharTensor",
               "int16": "torch.ShortTensor"}


def typename(obj):
    """PyTorch's legacy type name: 'torch.FloatTensor', 'torch.cuda.CharTensor'..."""
    if isinstance(obj, Tensor):
        name = _TYPE_NAMES[obj._dtype_name]
        return name.replace("torch.", "torch.cuda.", 1) if obj.is_cuda else name
    return type(obj).__module__ + "." + type(obj).__qualname__ if type(obj).__module__ != \
        "builtins" else type(obj).__qualname__


class Size(tuple):
    """``torch.Size``: a tuple of ints (gpuaccel's shapes are plain tuples, equal to it)."""

    def numel(self):
        return int(np.prod(self, dtype=np.int64))


def set_default_dtype(d):
    if _dtype_name(d) != "float32":
        raise TypeError(f"set_default_dtype: gpuaccel's default float type is float32 only, got "
                        f"{_dtype_name(d)}; make float64 tensors with dtype=torch.float64 or "
                        f".double()")


def is_inference(input):
    return False  # gpuaccel's inference_mode is no_grad: no tensor is an inference tensor


def is_inference_mode_enabled():
    return False


# ---- windows of a dimension, strided views, scatters into slices ---------------------------------

def unfold(input, dimension, size, step):
    """``Tensor.unfold(dimension, size, step)``: the windows of ``size`` entries every ``step``
    along ``dimension``, as a new last dimension."""
    x = convert_to_tensor(input)
    d = check_int(dimension, "dimension") % max(x.ndim, 1)
    n = x.shape[d] if x.ndim else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    lead = (slice(None),) * d
    windows = [_C.expand_dims(x[lead + (slice(s, s + size),)], x.ndim)
               for s in range(0, n - size + 1, step)]
    stacked = _array_ops.cat(windows, x.ndim)  # the window's entries last, windows along d
    return _movedim_last(stacked, d)


def _movedim_last(stacked, d):
    """(.., size at d, .., count) -> (.., count at d, .., size): torch puts the window count
    at ``dimension`` and the window's entries last."""
    return _C.transpose(stacked, d, stacked.ndim - 1)


def as_strided(input, size, stride, storage_offset=0):
    """Entries of the (contiguous) input at offset + sum(i_k * stride_k), a gather."""
    x = convert_to_tensor(input)
    grids = np.indices(tuple(size), dtype=np.int64) if len(size) else np.zeros((0,), np.int64)
    flat_ids = storage_offset + sum(g * s for g, s in zip(grids, stride)) if len(size) else \
        np.array(storage_offset, np.int64)
    flat_ids = np.asarray(flat_ids, np.int64)
    if flat_ids.size and (flat_ids.max() >= x.numel() or flat_ids.min() < 0):
        raise RuntimeError(f"as_strided: size {list(size)} and stride {list(stride)} reach "
                           f"outside the input's {x.numel()} entries")
    picked = _array_ops.gather(_C.reshape(x, [-1]), flat_ids.reshape(-1).tolist()) if \
        flat_ids.size else _C.reshape(x, [-1])[:0]
    return _C.reshape(picked, list(size))


def select_scatter(input, src, dim, index):
    x = convert_to_tensor(input)
    d = check_int(dim, "dim") % x.ndim
    return x.index_copy(d, tensor([int(index) % x.shape[d]]),
                        _C.expand_dims(convert_to_tensor(src), d))


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    x = convert_to_tensor(input)
    d = check_int(dim, "dim") % x.ndim
    ids = list(range(x.shape[d]))[slice(start, end, step)]
    return x.index_copy(d, tensor(np.array(ids, np.int64)), convert_to_tensor(src))


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    x = convert_to_tensor(input)
    if x.ndim != 2 or (dim1, dim2) != (0, 1):
        raise ValueError("diagonal_scatter is supported for matrices (dim1=0, dim2=1) only")
    rows, cols = x.shape
    r = np.arange(max(0, -offset), min(rows, cols - offset))
    mask = np.zeros((rows, cols), np.float32)
    mask[r, r + offset] = 1.0
    places = np.zeros((len(r), rows * cols), np.float32)
    places[np.arange(len(r)), r * cols + r + offset] = 1.0
    keep = convert_to_tensor(1.0 - mask).to(dtype=x._dtype_name, device=x._device_name)
    spread = _C.matmul(_C.reshape(convert_to_tensor(src), [1, -1]), convert_to_tensor(
        places).to(dtype=x._dtype_name, device=x._device_name))
    return x * keep + _C.reshape(spread, [rows, cols])


# ---- gradients of sampled functions, histograms, bucketing, running extremes ---------------------

def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Central differences inside, one-sided ones at the edges (``edge_order=1``), per dim."""
    if edge_order != 1:
        raise ValueError("gradient(edge_order=2) is not supported yet")
    x = convert_to_tensor(input)
    dims = list(range(x.ndim)) if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    h = float(spacing[0]) if isinstance(spacing, (list, tuple)) else float(spacing)
    out = []
    for d in dims:
        d %= x.ndim
        lead = (slice(None),) * d
        first = (x[lead + (slice(1, 2),)] - x[lead + (slice(0, 1),)]) * (1.0 / h)
        inner = (x[lead + (slice(2, None),)] - x[lead + (slice(0, -2),)]) * (0.5 / h)
        last = (x[lead + (slice(-1, None),)] - x[lead + (slice(-2, -1),)]) * (1.0 / h)
        out.append(_array_ops.cat([first, inner, last], d))
    return tuple(out)


def histc(input, bins=100, min=0, max=0):  # noqa: A002 - torch's names
    """Counts in ``bins`` equal bins over [min, max] (the data's range when both are 0),
    entries outside ignored (NaN too: PyTorch's CPU loop casts it to a bin, undefined
    behaviour), in the input's (floating) dtype: a count per bin by the row scatter, exact in
    float64."""
    x = _C.reshape(convert_to_tensor(input), [-1])
    lo, hi = float(min), float(max)
    if lo == hi == 0:
        lo, hi = float(_C.reduce("min", x, None, False).item()), float(
            _C.reduce("max", x, None, False).item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    # lo <= x <= hi, written so that NaN is outside
    inside = (_C.binary("greater", x, _C.scalar_like(lo, x)) | _C.binary(
        "equal", x, _C.scalar_like(lo, x))) & (_C.binary("less", x, _C.scalar_like(hi, x)) | _C.binary(
            "equal", x, _C.scalar_like(hi, x)))
    scaled = _array_ops.clamp((x - lo) * (bins / (hi - lo)), 0.0, bins - 1)
    ids = _C.where(inside, _C.cast(scaled, "int64"),
                   _C.tensor_full([], -1.0, "int64", x._device_name))
    ones = _C.tensor_full([x.shape[0], 1], 1.0, "float64", x._device_name)
    counts = _C.segment_sum_rows(ones, ids, int(bins))
    return _C.cast(_C.reshape(counts, [int(bins)]), x._dtype_name)


def bincount(input, weights=None, minlength=0):
    """How many times each value 0..n-1 occurs (int64), or with ``weights`` the sum of their
    weights (float32 weights give float32, any other dtype float64, as PyTorch)."""
    x = convert_to_tensor(input)
    if x.ndim != 1 or x._dtype_name not in INTEGER_NAMES:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    values = _C.detach(x)._numpy()
    if values.size and values.min() < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    size = builtins.max(int(values.max()) + 1 if values.size else 0, int(minlength))
    if weights is None:
        amounts, dtype = _C.tensor_full([int(values.size), 1], 1.0, "float64", x._device_name), "int64"
    else:
        w = convert_to_tensor(weights)
        if list(w.shape) != list(x.shape):
            raise RuntimeError("weights should be 1-d and have the same length as input")
        dtype = "float32" if w._dtype_name == "float32" else "float64"
        amounts = _C.reshape(_C.cast(w, "float64"), [-1, 1])
    if not values.size:
        return tensor(np.zeros(size, dtype))
    # a count (sum) per value by the row scatter-add (memory n, not n x size), in float64
    counts = _C.segment_sum_rows(_C.contiguous(amounts), _C.contiguous(x), size)
    return _C.cast(_C.reshape(counts, [size]), dtype)



def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The index of each entry's bucket: how many boundaries lie below it (<= with
    ``right``)."""
    x = convert_to_tensor(input)
    b = _C.reshape(convert_to_tensor(boundaries).to(dtype=x._dtype_name), [-1])
    expanded = _C.expand_dims(x, x.ndim)
    below = _C.binary("greater", expanded, b) if not right else _C.binary(
        "greater", expanded, b) | _C.binary("equal", expanded, b)
    return _C.cast(_C.reduce("sum", _C.cast(below, "int32"), [x.ndim], False),
                   "int32" if out_int32 else "int64")


def searchsorted(sorted_sequence, values, *, out_int32=False, right=False, side=None,
                 sorter=None):
    if sorter is not None:
        raise ValueError("searchsorted(sorter=) is not supported yet")
    right = right or side == "right"
    seq = convert_to_tensor(sorted_sequence)
    if seq.ndim == 1:
        return bucketize(values, seq, out_int32=out_int32, right=right)
    v = convert_to_tensor(values).to(dtype=seq._dtype_name)
    cmp = _C.expand_dims(v, v.ndim) - _C.expand_dims(seq, seq.ndim - 1)  # (..., M, N)
    below = (cmp > 0) if not right else (cmp > 0) | _C.binary("equal", cmp,
                                                              _C.scalar_like(0.0, cmp))
    return _C.cast(_C.reduce("sum", _C.cast(below, "int32"), [v.ndim], False),
                   "int32" if out_int32 else "int64")


def _running_extreme(op):
    def fn(input, dim):
        """(values, indices) of the running extreme along ``dim`` (n² comparisons: each
        position against every earlier one)."""
        x = convert_to_tensor(input)
        d = check_int(dim, "dim") % max(x.ndim, 1)
        moved = _C.transpose(x, d, x.ndim - 1) if d != x.ndim - 1 else x
        n = moved.shape[-1]
        later = np.triu(np.ones((n, n), np.float32), 1)  # [i, j] = 1 where j > i: masked out
        big = 3.0e38 if op == "max" else -3.0e38
        mask = convert_to_tensor(later).to(dtype=x._dtype_name, device=x._device_name)
        rows = _C.expand_dims(moved, moved.ndim - 1)  # (..., 1, n) -> every row i sees x[..., j]
        masked = rows * (1.0 - mask) - mask * big  # (..., n, n)
        values = _C.reduce(op, masked, [moved.ndim], False)
        flipped = masked.flip(moved.ndim)  # ties: torch reports the latest index
        indices = (n - 1) - _C.reduce("arg" + op, flipped, moved.ndim, False)
        if d != x.ndim - 1:
            values, indices = (_C.transpose(values, d, x.ndim - 1),
                               _C.transpose(indices, d, x.ndim - 1))
        return _CumResult(values, indices)
    fn.__name__ = "cum" + op
    return fn


_CumResult = collections.namedtuple("cummax", ["values", "indices"])
cummax, cummin = _running_extreme("max"), _running_extreme("min")


def cumprod(input, dim, dtype=None):
    """Running products along ``dim``, one multiplication per position (exact and
    differentiable, zeros included)."""
    x = convert_to_tensor(input)
    if dtype is not None:
        x = _C.cast(x, _dtype_name(dtype))
    if x._dtype_name in INTEGER_NAMES + ("bool",):
        x = _C.cast(x, "int64")
    d = check_int(dim, "dim") % max(x.ndim, 1)
    lead = (slice(None),) * d
    running = x[lead + (slice(0, 1),)]
    parts = [running]
    for k in range(1, x.shape[d]):
        running = running * x[lead + (slice(k, k + 1),)]
        parts.append(running)
    return _array_ops.cat(parts, d)


# ---- the legacy typed tensor classes and the generator state -------------------------------------

class _TypedTensorType(type):
    """``torch.FloatTensor`` & co.: calling one makes a tensor of its dtype (from data, or
    zeros of a shape given as ints); ``isinstance(t, torch.FloatTensor)`` checks the dtype."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj._dtype_name == cls.dtype_name

    def __call__(cls, *args, device=None):
        if args and all(isinstance(a, int) and not isinstance(a, bool) for a in args):
            return _C.tensor_full(list(args), 0.0, cls.dtype_name, "cpu" if device is None
                                  else device)  # torch's are uninitialized: zeros here
        data = args[0] if args else []
        if isinstance(data, Tensor):
            if data._dtype_name != cls.dtype_name:  # torch refuses a conversion here
                raise TypeError(f"torch.{cls.__name__}(tensor) expects a {cls.dtype_name} tensor, "
                                f"got {data._dtype_name}; use t.to({cls.dtype_name})")
            return data
        return tensor(np.asarray(data), dtype=cls.dtype_name, device=device)


def _typed(name, dtype_name):
    return _TypedTensorType(name, (), {"dtype_name": dtype_name, "__doc__": (
        f"``torch.{name}``: {dtype_name} tensors (the legacy constructor and isinstance)")})


TYPED_TENSORS = {name: _typed(name, dtype) for name, dtype in (
    ("FloatTensor", "float32"), ("HalfTensor", "float16"), ("BFloat16Tensor", "bfloat16"),
    ("IntTensor", "int32"), ("LongTensor", "int64"), ("ByteTensor", "uint8"),
    ("BoolTensor", "bool"), ("DoubleTensor", "float64"), ("CharTensor", "int8"),
    ("ShortTensor", "int16"))}


def get_rng_state():
    """The default generator's state as a uint8 tensor (its seed and offset, 8 bytes each)."""
    return default_generator.get_state()


def set_rng_state(new_state):
    default_generator.set_state(new_state)


def is_distributed(input):
    return False  # no tensor is split across processes (gpuaccel.distribute mirrors copies)
