"""The matrix-structure helpers of ``tf.linalg``: transposes, bands, diagonals (``diag``,
``diag_part``, ``set_diag``, ``tensor_diag``...), ``trace``, ``tridiagonal_matmul`` and
``triangular_solve`` (substitution, row by row: no decomposition is needed).

Shared by ``linalg`` (which exports them) and ``_linear_operators`` (whose structured operators
are built from them). Diagonals are placed and read through 0/1 placement matrices and gathers,
so every result is differentiable.
"""
import numbers

import numpy as np

from . import _C, _numpy_ops, errors
from . import math as _math
from ._array_ops import concat
from ._convert import convert_to_tensor
from ._tensor import tensor

__all__ = ["matrix_transpose", "adjoint", "band_part", "diag", "diag_part", "set_diag",
           "tensor_diag", "tensor_diag_part", "trace", "tridiagonal_matmul", "triangular_solve",
           "tridiagonal_solve", "banded_triangular_solve", "cholesky_solve", "lu_reconstruct",
           "lu_solve", "lu_matrix_inverse"]


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
    spread = _C.matmul(values, tensor(places, dtype=values._dtype_name, device=d._device_name))
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


def _shifted_rows(x, step):
    """x (..., M, N) with row i holding row i + step (rows past an end are zeros)."""
    m = x.shape[-2]
    lead = [(0, n, 1) for n in x.shape[:-2]]
    zeros = _C.tensor_full(list(x.shape[:-2]) + [abs(step), x.shape[-1]], 0.0, x._dtype_name,
                           x._device_name)
    if step > 0:
        return _C.concat([_C.slice(x, lead + [(step, m, 1)]), zeros], x.ndim - 2)
    return _C.concat([zeros, _C.slice(x, lead + [(0, m + step, 1)])], x.ndim - 2)


def _three_diagonals(diagonals, diagonals_format):
    """(superdiag, maindiag, subdiag), each (..., M), of 'compact' (..., 3, M) or 'sequence'
    diagonals."""
    if diagonals_format == "compact":
        d = convert_to_tensor(diagonals)
        if d.ndim < 2 or d.shape[-2] != 3:
            raise ValueError(f"compact diagonals must have shape (..., 3, M), got "
                             f"{list(d.shape)}")
        return [_C.squeeze(_C.slice(d, [(0, n, 1) for n in d.shape[:-2]] + [(i, i + 1, 1)]),
                           [d.ndim - 2]) for i in range(3)]
    if diagonals_format == "sequence":
        parts = [convert_to_tensor(v) for v in diagonals]
        if len(parts) != 3:
            raise ValueError(f"sequence diagonals must be (superdiag, maindiag, subdiag), got "
                             f"{len(parts)} tensors")
        return parts
    raise ValueError(f"Unrecognized diagonals_format: {diagonals_format}")


def tridiagonal_matmul(diagonals, rhs, diagonals_format="compact", name=None):
    """``tf.linalg.tridiagonal_matmul``: the tridiagonal matrix times ``rhs`` (..., M, N),
    row i = super[i] * rhs[i + 1] + main[i] * rhs[i] + sub[i] * rhs[i - 1]. The diagonals come
    'compact' (..., 3, M), as a 'sequence' (super, main, sub) of (..., M), or as the full
    'matrix'."""
    x = convert_to_tensor(rhs)
    if diagonals_format == "matrix":  # only the three diagonals count, as TF reads them
        return _C.matmul(band_part(diagonals, 1, 1), x)
    parts = _three_diagonals(diagonals, diagonals_format)
    if x.ndim < 2 or any(p.shape[-1] != x.shape[-2] for p in parts):
        raise ValueError(f"rhs must be (..., M, N) with M = the diagonals' length, got "
                         f"{list(x.shape)}")
    superdiag, maindiag, subdiag = (_C.expand_dims(p, -1) for p in parts)
    out = _C.binary("mul", maindiag, x)
    out = _C.binary("add", out, _C.binary("mul", superdiag, _shifted_rows(x, 1)))
    return _C.binary("add", out, _C.binary("mul", subdiag, _shifted_rows(x, -1)))


def _solve_lower(lower, rhs):
    """x with lower @ x = rhs by forward substitution, one row at a time (differentiable)."""
    n = lower.shape[-1]
    lead = [(0, d, 1) for d in lower.shape[:-2]]
    rows = []
    for i in range(n):
        row = _C.slice(lower, lead + [(i, i + 1, 1), (0, n, 1)])  # (..., 1, n)
        b = _C.slice(rhs, [(0, d, 1) for d in rhs.shape[:-2]] + [(i, i + 1, 1)])
        if rows:
            known = concat(rows, -2)  # (..., i, k)
            b = _C.binary("sub", b, _C.matmul(_C.slice(row, lead + [(0, 1, 1), (0, i, 1)]),
                                              known))
        pivot = _C.slice(row, lead + [(0, 1, 1), (i, i + 1, 1)])
        rows.append(_C.binary("div", b, pivot))
    return concat(rows, -2)


def triangular_solve(matrix, rhs, lower=True, adjoint=False, name=None):
    """``tf.linalg.triangular_solve``: x with T @ x = rhs (adjoint(T) @ x with ``adjoint``),
    T the lower (or upper) triangle of ``matrix``; the other triangle is ignored."""
    a = _matrix(matrix, "matrix")
    b = convert_to_tensor(rhs)
    if b.ndim < 2 or b.shape[-2] != a.shape[-1] or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"triangular_solve needs a square (..., M, M) matrix and (..., M, K) "
                         f"rhs, got {list(a.shape)} and {list(b.shape)}")
    triangle = band_part(a, -1, 0) if lower else band_part(a, 0, -1)
    if adjoint:
        triangle = _C.transpose(triangle, -1, -2)
    if lower != adjoint:  # a lower triangle to solve
        return _solve_lower(triangle, b)
    # An upper triangle with its rows and columns reversed is lower.
    flipped = _numpy_ops.flip(triangle, (-2, -1))
    return _numpy_ops.flip(_solve_lower(flipped, _numpy_ops.flip(b, (-2,))), (-2,))


def tridiagonal_solve(diagonals, rhs, diagonals_format="compact", transpose_rhs=False,
                      conjugate_rhs=False, name=None, partial_pivoting=True,
                      perturb_singular=False):
    """``tf.linalg.tridiagonal_solve``: x with T @ x = rhs for the tridiagonal T, by the
    Thomas algorithm (a forward sweep and a back substitution, row by row; no pivoting, which
    a diagonally dominant or positive definite T does not need). ``transpose_rhs`` takes rhs
    as (..., K, M); the result is (..., M, K) either way, as TF's."""
    b = convert_to_tensor(rhs)
    if transpose_rhs:
        b = _C.transpose(b, -1, -2)
    if diagonals_format == "matrix":
        a = convert_to_tensor(diagonals)
        parts = [_numpy_ops.diagonal(a, k, -2, -1) for k in (1, 0, -1)]
        pad = _C.tensor_full(list(a.shape[:-2]) + [1], 0.0, a._dtype_name, a._device_name)
        parts = [concat([parts[0], pad], -1), parts[1], concat([pad, parts[2]], -1)]
    else:
        parts = _three_diagonals(diagonals, diagonals_format)
    m = b.shape[-2]
    if any(p.shape[-1] != m for p in parts):
        raise ValueError(f"rhs must have M = the diagonals' length rows, got {list(b.shape)}")

    def entry(v, i):  # (..., 1, 1): entry i of a diagonal, to scale a row of rhs
        return _C.expand_dims(_C.slice(v, [(0, n, 1) for n in v.shape[:-1]] + [(i, i + 1, 1)]),
                              -1)

    def row(i):
        return _C.slice(b, [(0, n, 1) for n in b.shape[:-2]] + [(i, i + 1, 1)])

    superdiag, maindiag, subdiag = parts
    c_prime = [_C.binary("div", entry(superdiag, 0), entry(maindiag, 0))]
    d_prime = [_C.binary("div", row(0), entry(maindiag, 0))]
    for i in range(1, m):
        a_i = entry(subdiag, i)
        pivot = _C.binary("sub", entry(maindiag, i), _C.binary("mul", a_i, c_prime[-1]))
        c_prime.append(_C.binary("div", entry(superdiag, i), pivot))
        d_prime.append(_C.binary("div", _C.binary("sub", row(i), _C.binary(
            "mul", a_i, d_prime[-1])), pivot))
    x = [d_prime[-1]]
    for i in range(m - 2, -1, -1):
        x.append(_C.binary("sub", d_prime[i], _C.binary("mul", c_prime[i], x[-1])))
    return concat(x[::-1], -2)  # (..., M, K), with transpose_rhs too (as TF)


def _banded_dense(bands, lower):
    """The (..., M, M) triangular matrix of ``bands`` (..., K, M), stored as TF stores them:
    lower: bands[i][j] at (j, j - i), the main diagonal first; upper: bands[K-1-d][j] at
    (j, j + d), the main diagonal last. Placed by a 0/1 matrix product (differentiable)."""
    k, m = bands.shape[-2:]
    places = np.zeros((k * m, m * m), np.float32)
    for band in range(k):
        offset = -band if lower else k - 1 - band
        for j in range(m):
            column = j + offset
            if 0 <= column < m:
                places[band * m + j, j * m + column] = 1.0
    flat = _C.reshape(bands, list(bands.shape[:-2]) + [k * m])
    dense = _C.matmul(flat, tensor(places, dtype=bands._dtype_name, device=bands._device_name))
    return _C.reshape(dense, list(bands.shape[:-2]) + [m, m])


def banded_triangular_solve(bands, rhs, lower=True, adjoint=False, name=None):
    """``tf.linalg.banded_triangular_solve``: triangular_solve of the banded triangular
    matrix that ``bands`` (..., K, M) stores (TF's LEFT_RIGHT layout)."""
    b = convert_to_tensor(bands)
    if b.ndim < 2 or b.shape[-2] > b.shape[-1]:
        raise ValueError(f"bands must be (..., K, M) with K <= M, got {list(b.shape)}")
    return triangular_solve(_banded_dense(b, lower), rhs, lower=lower, adjoint=adjoint)


# ---- solves from given factors: the decomposition is the caller's (tf.linalg.cholesky/lu),
# the rest is triangular solves and products ----

def cholesky_solve(chol, rhs, name=None):
    """``tf.linalg.cholesky_solve``: x with (chol @ chol^T) x = rhs, for a lower-triangular
    Cholesky factor ``chol``: two triangular solves."""
    half = triangular_solve(chol, rhs, lower=True)
    return triangular_solve(chol, half, lower=True, adjoint=True)


def _lu_factors(lower_upper, perm):
    """(unit lower L, upper U, permutation matrix P with P @ A = L @ U) of TF's packed LU."""
    packed = _matrix(lower_upper, "lower_upper")
    m = packed.shape[-1]
    ones = _C.tensor_full(list(packed.shape[:-1]), 1.0, packed._dtype_name, packed._device_name)
    lower = set_diag(band_part(packed, -1, 0), ones)
    order = np.asarray(perm.numpy() if hasattr(perm, "numpy") else perm, np.int64)
    permutation = tensor(np.eye(m, dtype=np.float32)[order], dtype=packed._dtype_name,
                         device=packed._device_name)
    return lower, band_part(packed, 0, -1), permutation


def lu_reconstruct(lower_upper, perm, validate_args=False, name=None):
    """``tf.linalg.lu_reconstruct``: the matrix A = P^T L U whose LU factors these are."""
    lower, upper, permutation = _lu_factors(lower_upper, perm)
    return _C.matmul(_C.transpose(permutation, -1, -2), _C.matmul(lower, upper))


def lu_solve(lower_upper, perm, rhs, validate_args=False, name=None):
    """``tf.linalg.lu_solve``: x with A x = rhs from A's LU factors: L U x = P rhs."""
    lower, upper, permutation = _lu_factors(lower_upper, perm)
    permuted = _C.matmul(permutation, convert_to_tensor(rhs))
    return triangular_solve(upper, triangular_solve(lower, permuted, lower=True), lower=False)


def lu_matrix_inverse(lower_upper, perm, validate_args=False, name=None):
    """``tf.linalg.lu_matrix_inverse``: A^-1 from A's LU factors (lu_solve of the identity)."""
    packed = _matrix(lower_upper, "lower_upper")
    identity = _C.broadcast_to(tensor(np.eye(packed.shape[-1], dtype=np.float32),
                                      dtype=packed._dtype_name, device=packed._device_name),
                               list(packed.shape))
    return lu_solve(packed, perm, identity)
