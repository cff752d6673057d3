"""``tf.linalg`` names (``matmul`` with ``transpose_a/b``, ``einsum``, ``norm``, the diagonal and
band helpers, ``cross``...) and PyTorch's ``mm``/``bmm``; ``matmul`` and ``einsum`` are also
exported at the top level, as in both. Only what composes from existing ops is here: the
decompositions (inv, det, solve, cholesky, qr, svd...) need kernels gpuaccel lacks.

``einsum`` is composed of permutes, broadcast multiplication and sums, so autograd
differentiates it like any other op; it materialises the product over every letter, which suits
the course's sizes (a large contraction is better written with ``matmul``).
"""
import numbers

import numpy as np

from . import _C, _numpy_ops, errors
from . import _unsupported
from . import math as _math
from ._convert import as_tensors, convert_to_tensor
from ._creation import eye
from ._tensor import tensor
from ._tf_clipping import global_norm as _global_norm
from .math import l2_normalize

__all__ = ["matmul", "mm", "bmm", "einsum", "norm", "matvec", "tensordot", "matrix_transpose",
           "adjoint", "band_part", "diag", "diag_part", "set_diag", "tensor_diag",
           "tensor_diag_part", "trace", "eye", "normalize", "l2_normalize", "global_norm",
           "cross", "tridiagonal_matmul"]


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None, *, out=None):
    """``tf.matmul(a, b, transpose_a=False, transpose_b=False)`` / ``torch.matmul``: batched
    over leading axes, with broadcasting. Arrays and lists are accepted."""
    a, b = as_tensors(a, b)
    if transpose_a or adjoint_a:
        a = _C.transpose(a, -1, -2)
    if transpose_b or adjoint_b:
        b = _C.transpose(b, -1, -2)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul needs tensors of rank >= 1 (use * for a scalar product)")
    from .math import _into
    return _into(_C.matmul(a, b), out)


def mm(input, mat2):
    """``torch.mm``: 2-D only."""
    if convert_to_tensor(input).ndim != 2 or convert_to_tensor(mat2).ndim != 2:
        raise RuntimeError("mm: both arguments must be 2-D matrices")
    return matmul(input, mat2)


def bmm(input, mat2):
    """``torch.bmm``: 3-D (batch, n, m) @ (batch, m, p)."""
    if convert_to_tensor(input).ndim != 3 or convert_to_tensor(mat2).ndim != 3:
        raise RuntimeError("bmm: both arguments must be 3-D batches of matrices")
    return matmul(input, mat2)


def matvec(a, b, transpose_a=False, adjoint_a=False, a_is_sparse=False, b_is_sparse=False,
           name=None):
    """``tf.linalg.matvec``: matrix (..., n, m) times vector (..., m)."""
    a, b = as_tensors(a, b)
    out = matmul(a, _C.expand_dims(b, -1), transpose_a=transpose_a or adjoint_a)
    return _C.squeeze(out, [-1])


def _vector_norm(x, ord, axes, keepdims):
    magnitude = _C.unary("abs", x)
    if ord in ("euclidean", 2):
        return _C.unary("sqrt", _C.reduce("sum", _C.unary("square", x), axes, keepdims))
    if ord == 1:
        return _C.reduce("sum", magnitude, axes, keepdims)
    if ord == np.inf:
        return _C.reduce("max", magnitude, axes, keepdims)
    p = _C.scalar_like(float(ord), magnitude)
    total = _C.reduce("sum", _C.binary("pow", magnitude, p), axes, keepdims)
    return _C.binary("pow", total, _C.scalar_like(1.0 / float(ord), total))


def _matrix_norm(x, ord, axes, keepdims):
    rows, cols = axes
    if ord in ("euclidean", "fro"):
        return _C.unary("sqrt", _C.reduce("sum", _C.unary("square", x), list(axes), keepdims))
    if ord in (1, np.inf):  # the largest column sum (1) or row sum (inf) of |x|
        inner, outer = (rows, cols) if ord == 1 else (cols, rows)
        sums = _C.reduce("sum", _C.unary("abs", x), [inner], True)
        out = _C.reduce("max", sums, [outer], True)
        return out if keepdims else _C.squeeze(out, sorted([rows, cols]))
    raise NotImplementedError(f"norm ord={ord!r} over two axes needs singular values (no SVD "
                              f"kernel yet); use 'fro', 1 or np.inf")


def norm(tensor, ord="euclidean", axis=None, keepdims=None, name=None):
    """``tf.norm``: a vector norm (ord 'euclidean', any p > 0, np.inf) of the flattened
    tensor or along one axis, or a matrix norm ('fro'/'euclidean', 1, np.inf) over two axes."""
    x = convert_to_tensor(tensor)
    keepdims = bool(keepdims)
    axes = list(axis) if isinstance(axis, (list, tuple)) else axis
    if isinstance(axes, list) and len(axes) == 2:
        pair = [a % x.ndim for a in axes]
        if pair[0] == pair[1]:
            raise ValueError(f"'axis' must be a list of two different axes, got {axis}")
        if not (ord in ("euclidean", "fro", 1, 2, np.inf)):
            raise ValueError(f"'ord' must be a supported matrix norm in ['euclidean', 'fro', "
                             f"1, 2, inf], got {ord}")
        return _matrix_norm(x, ord, pair, keepdims)
    if isinstance(axes, list) and len(axes) != 1:
        raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, "
                         f"got {axis}")
    if isinstance(ord, str) and ord != "euclidean" or \
            not isinstance(ord, str) and not (isinstance(ord, numbers.Real) and ord > 0):
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
    return _vector_norm(x, ord, axes, keepdims)


def normalize(tensor, ord="euclidean", axis=None, name=None):
    """``tf.linalg.normalize``: (tensor / its norm, the norm kept as a size-1 axis)."""
    x = convert_to_tensor(tensor)
    size = norm(x, ord=ord, axis=axis, keepdims=True)
    return _C.binary("div", x, size), size


def global_norm(t_list, name=None):
    """``tf.linalg.global_norm``: sqrt of the summed squares of every tensor in the list."""
    if not isinstance(t_list, (list, tuple)):
        raise TypeError(f"`t_list` should be a sequence of tensors. Received "
                        f"{type(t_list)}.")
    return _global_norm(t_list)


def _matrix(x, what="a"):
    x = convert_to_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"Argument `{what}` should be a (batch) matrix with rank >= 2.  "
                         f"Received `{what}` = {x} with shape: {tuple(x.shape)}")
    return x


def matrix_transpose(a, name="matrix_transpose", conjugate=False):
    """``tf.linalg.matrix_transpose``: the last two axes swapped."""
    return _C.transpose(_matrix(a), -1, -2)


def adjoint(matrix, name=None):
    """``tf.linalg.adjoint``: the conjugate transpose, the transpose for real tensors."""
    return matrix_transpose(matrix)


def band_part(input, num_lower, num_upper, name=None):  # noqa: A002 -- TF's name
    """``tf.linalg.band_part``: the entries within ``num_lower`` diagonals below and
    ``num_upper`` above the main one kept (a negative count keeps that whole triangle), the
    rest 0."""
    x = _matrix(input, "input")
    rows, cols = x.shape[-2:]
    lower, upper = int(num_lower), int(num_upper)
    if lower > rows:
        raise errors.InvalidArgumentError(f"num_lower must be negative or less or equal to "
                                          f"number of rows ({rows}) got: {lower}")
    if upper > cols:
        raise errors.InvalidArgumentError(f"num_upper must be negative or less or equal to "
                                          f"number of columns ({cols}) got: {upper}")
    i, j = np.ogrid[:rows, :cols]
    keep = ((lower < 0) | (i - j <= lower)) & ((upper < 0) | (j - i <= upper))
    return _numpy_ops.kept_entries(x, keep)


def _single_k(k):
    if not isinstance(k, numbers.Integral):
        raise NotImplementedError(f"k={k!r}: a band of diagonals is not supported yet; pass "
                                  f"one diagonal offset (an int)")
    return int(k)


def _diagonal_places(length, k, rows, cols):
    """(length, rows * cols) 0/1 float32: row t marks where entry t of diagonal k goes."""
    places = np.zeros((length, rows * cols), np.float32)
    t = np.arange(length)
    r, c = (t, t + k) if k >= 0 else (t - k, t)
    inside = (r < rows) & (c < cols)
    places[t[inside], (r * cols + c)[inside]] = 1.0
    return places


def diag(diagonal, name="diag", k=0, num_rows=-1, num_cols=-1, padding_value=0,
         align="RIGHT_LEFT"):
    """``tf.linalg.diag``: (..., n) -> (..., rows, cols) matrices with the vector on diagonal
    ``k`` and ``padding_value`` elsewhere (rows and cols from TF's rule: n + |k| square unless
    given)."""
    d = convert_to_tensor(diagonal)
    k = _single_k(k)
    n = d.shape[-1]
    min_rows, min_cols = n + max(-k, 0), n + max(k, 0)
    rows, cols = int(num_rows), int(num_cols)
    if rows == -1 and cols == -1:
        rows = cols = max(min_rows, min_cols)
    elif rows == -1:
        rows = min_rows
    elif cols == -1:
        cols = min_cols
    if rows != min_rows and cols != min_cols:
        raise errors.InvalidArgumentError("The number of rows or columns is not consistent with "
                                          "the specified d_lower, d_upper, and diagonal.")
    places = _diagonal_places(n, k, rows, cols)
    values = d if d.dtype.is_floating_point else _C.cast(d, "float32")
    spread = matmul(values, tensor(places, dtype=values._dtype_name, device=d._device_name))
    out = _C.reshape(spread, list(d.shape[:-1]) + [rows, cols])
    out = _C.cast(out, d._dtype_name) if out._dtype_name != d._dtype_name else out
    if padding_value != 0:
        off = tensor(places.sum(0).reshape(rows, cols) == 0, dtype=d._dtype_name,
                     device=d._device_name)
        out = _math._select(off, _C.scalar_like(float(padding_value), out), out)
    return out


def diag_part(input, name="diag_part", k=0, padding_value=0, align="RIGHT_LEFT"):  # noqa: A002
    """``tf.linalg.diag_part``: diagonal ``k`` of the last two axes."""
    return _numpy_ops.diagonal(_matrix(input, "input"), _single_k(k), -2, -1)


def set_diag(input, diagonal, name="set_diag", k=0, align="RIGHT_LEFT"):  # noqa: A002
    """``tf.linalg.set_diag``: ``input`` with diagonal ``k`` replaced by ``diagonal``."""
    x = _matrix(input, "input")
    d = convert_to_tensor(diagonal)
    k = _single_k(k)
    rows, cols = x.shape[-2:]
    length = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
    if list(d.shape) != list(x.shape[:-2]) + [length]:
        raise errors.InvalidArgumentError(
            f"diagonal must have shape input.shape[:-2] + [{length}] = "
            f"{list(x.shape[:-2]) + [length]}, got {list(d.shape)}")
    places = _diagonal_places(length, k, rows, cols)
    placed = diag(d, k=k, num_rows=rows, num_cols=cols)
    on = tensor(places.sum(0).reshape(rows, cols) > 0, dtype=x._dtype_name,
                device=x._device_name)
    return _math._select(on, placed, x)


def tensor_diag(diagonal, name=None):
    """``tf.linalg.tensor_diag``: rank k -> rank 2k, out[i..., i...] = diagonal[i...]."""
    d = convert_to_tensor(diagonal)
    n = int(np.prod(d.shape, dtype=np.int64))
    square = diag(_C.reshape(d, [n]))
    return _C.reshape(square, list(d.shape) * 2)


def tensor_diag_part(input, name=None):  # noqa: A002 -- TF's name
    """``tf.linalg.tensor_diag_part``: rank 2k -> rank k, the inverse of tensor_diag."""
    x = convert_to_tensor(input)
    half = x.ndim // 2
    if x.ndim % 2 or list(x.shape[:half]) != list(x.shape[half:]):
        bad = next((i for i in range(half) if x.shape[i] != x.shape[half + i]), 0)
        raise errors.InvalidArgumentError(
            f"Invalid shape [{','.join(map(str, x.shape))}]: dimensions {bad} and {half + bad} "
            f"do not match.")
    n = int(np.prod(x.shape[:half], dtype=np.int64))
    return _C.reshape(diag_part(_C.reshape(x, [n, n])), list(x.shape[:half]))


def trace(x, name=None):
    """``tf.linalg.trace``: the sum of the main diagonal of the last two axes."""
    return _C.reduce("sum", diag_part(x), [-1], False)


def cross(a, b, name=None):
    """``tf.linalg.cross``: the cross product of the 3-vectors on the last axis."""
    a, b = as_tensors(a, b)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise errors.FailedPreconditionError("Cross-products are only defined for 3-element "
                                             "vectors.")
    u = [_C.slice(a, [(0, n, 1) for n in a.shape[:-1]] + [(i, i + 1, 1)]) for i in range(3)]
    v = [_C.slice(b, [(0, n, 1) for n in b.shape[:-1]] + [(i, i + 1, 1)]) for i in range(3)]
    parts = [_C.binary("sub", _C.binary("mul", u[(i + 1) % 3], v[(i + 2) % 3]),
                       _C.binary("mul", u[(i + 2) % 3], v[(i + 1) % 3])) for i in range(3)]
    return _C.concat(parts, a.ndim - 1)


def tensordot(a, b, axes):
    """``tf.tensordot``/``torch.tensordot`` through einsum (``axes`` an int or two lists)."""
    a, b = as_tensors(a, b)
    if isinstance(axes, int):
        axes = (list(range(a.ndim - axes, a.ndim)), list(range(axes)))
    left, right = [list(v) if isinstance(v, (list, tuple)) else [v] for v in axes]
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    a_sub = [next(letters) for _ in range(a.ndim)]
    b_sub = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(left, right):
        b_sub[j % b.ndim] = a_sub[i % a.ndim]
    kept_a = [s for k, s in enumerate(a_sub) if k not in [i % a.ndim for i in left]]
    kept_b = [s for k, s in enumerate(b_sub) if k not in [j % b.ndim for j in right]]
    return einsum(f"{''.join(a_sub)},{''.join(b_sub)}->{''.join(kept_a + kept_b)}", a, b)


def _parse(equation, operands):
    equation = equation.replace(" ", "")
    if "->" in equation:
        inputs, output = equation.split("->")
    else:
        inputs, output = equation, None
    subs = inputs.split(",")
    if len(subs) != len(operands):
        raise ValueError(f"einsum equation {equation!r} names {len(subs)} operands but "
                         f"{len(operands)} were given")
    if any("." in s for s in subs):
        raise ValueError("einsum ellipses ('...') are not supported yet; name every axis")
    for s, t in zip(subs, operands):
        if len(s) != t.ndim or not s.isalpha():
            raise ValueError(f"einsum subscripts {s!r} do not match an operand of rank {t.ndim}")
    if output is None:  # implicit mode: letters seen once, alphabetically
        counts = {}
        for c in "".join(subs):
            counts[c] = counts.get(c, 0) + 1
        output = "".join(sorted(c for c, n in counts.items() if n == 1))
    if not all(c in "".join(subs) for c in output) or len(set(output)) != len(output):
        raise ValueError(f"einsum output subscripts {output!r} must be distinct letters that "
                         f"appear in the inputs")
    return subs, output


def _diagonal_free(sub, t):
    if len(set(sub)) != len(sub):
        raise ValueError(f"einsum repeated subscripts in one operand ({sub!r}, a diagonal) are "
                         "not supported yet")
    return t


def _aligned(sub, t, letters, sizes):
    """``t`` permuted to the order of ``letters`` with size-1 axes for letters it lacks."""
    order = [sub.index(c) for c in letters if c in sub]
    t = _C.permute(t, order) if order != list(range(t.ndim)) else t
    shape = [sizes[c] if c in sub else 1 for c in letters]
    return _C.reshape(_C.contiguous(t), shape)


def einsum(equation, *operands, **kwargs):
    """``tf.einsum``/``torch.einsum`` for explicit or implicit equations without ellipses or
    diagonals: ``'ij,jk->ik'``, ``'bij,bjk->bik'``, ``'ij->ji'``, ``'i,i->'``, ``'bhqd,bhkd->bhqk'``."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise ValueError("einsum needs at least one operand")
    tensors = [convert_to_tensor(operands[0])]
    for other in operands[1:]:
        tensors.append(as_tensors(tensors[0], other)[1])
    subs, output = _parse(equation, tensors)
    sizes = {}
    for s, t in zip(subs, tensors):
        _diagonal_free(s, t)
        for c, n in zip(s, t.shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"einsum subscript {c!r} has sizes {sizes[c]} and {n}")
    summed = [c for c in dict.fromkeys("".join(subs)) if c not in output]
    letters = list(output) + summed
    product = None
    for s, t in zip(subs, tensors):
        aligned = _aligned(s, t, letters, sizes)
        product = aligned if product is None else _C.binary("mul", product, aligned)
    if summed:
        product = _C.reduce("sum", product, list(range(len(output), len(letters))), False)
    return product


__getattr__ = _unsupported.module_getattr(__name__, "tf.linalg", {
    "inv": "np.linalg.inv on .numpy() (no inverse kernel yet)",
    "det": "np.linalg.det on .numpy()",
    "svd": "np.linalg.svd on .numpy()",
    "eigh": "np.linalg.eigh on .numpy()",
})


def _shifted_rows(x, step):
    """x (..., M, N) with row i holding row i + step (rows past an end are zeros)."""
    m = x.shape[-2]
    lead = [(0, n, 1) for n in x.shape[:-2]]
    zeros = _C.tensor_full(list(x.shape[:-2]) + [abs(step), x.shape[-1]], 0.0, x._dtype_name,
                           x._device_name)
    if step > 0:
        return _C.concat([_C.slice(x, lead + [(step, m, 1)]), zeros], x.ndim - 2)
    return _C.concat([zeros, _C.slice(x, lead + [(0, m + step, 1)])], x.ndim - 2)


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """``tf.linalg.tridiagonal_matmul``: the tridiagonal matrix times ``rhs`` (..., M, N),
    row i = super[i] * rhs[i + 1] + main[i] * rhs[i] + sub[i] * rhs[i - 1]. The diagonals come
    'compact' (..., 3, M), as a 'sequence' (super, main, sub) of (..., M), or as the full
    'matrix'."""
    x = convert_to_tensor(rhs)
    if diagonals_format == "matrix":  # only the three diagonals count, as TF reads them
        return matmul(band_part(diagonals, 1, 1), x)
    if diagonals_format == "compact":
        d = convert_to_tensor(diagonals)
        if d.ndim < 2 or d.shape[-2] != 3:
            raise ValueError(f"compact diagonals must have shape (..., 3, M), got "
                             f"{list(d.shape)}")
        parts = [_C.squeeze(_C.slice(d, [(0, n, 1) for n in d.shape[:-2]] + [(i, i + 1, 1)]),
                            [d.ndim - 2]) for i in range(3)]
    elif diagonals_format == "sequence":
        parts = [convert_to_tensor(v) for v in diagonals]
        if len(parts) != 3:
            raise ValueError(f"sequence diagonals must be (superdiag, maindiag, subdiag), got "
                             f"{len(parts)} tensors")
    else:
        raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")
    if x.ndim < 2 or any(p.shape[-1] != x.shape[-2] for p in parts):
        raise ValueError(f"rhs must be (..., M, N) with M = the diagonals' length, got "
                         f"{list(x.shape)}")
    superdiag, maindiag, subdiag = (_C.expand_dims(p, -1) for p in parts)
    out = _C.binary("mul", maindiag, x)
    out = _C.binary("add", out, _C.binary("mul", superdiag, _shifted_rows(x, 1)))
    return _C.binary("add", out, _C.binary("mul", subdiag, _shifted_rows(x, -1)))
