"""``tf.linalg`` names (``matmul`` with ``transpose_a/b``, ``einsum``, ``norm``, the diagonal and
band helpers, ``cross``...) and PyTorch's ``mm``/``bmm``; ``matmul`` and ``einsum`` are also
exported at the top level, as in both. The decompositions (solve, svd, det, inv, slogdet,
logdet, cholesky, qr, eigh, eigvalsh, lstsq, pinv, matrix_rank) run in LAPACK on the host with
gradients in gpuaccel ops (_tf_linalg_decompositions.py).

``einsum`` is composed of permutes, broadcast multiplication and sums, so autograd
differentiates it like any other op; it materialises the product over every letter, which suits
the course's sizes (a large contraction is better written with ``matmul``).
"""
import numbers

import numpy as np

from . import _C, errors
from . import _unsupported
from ._convert import as_tensors, convert_to_tensor
from ._creation import eye
from ._integer_matmul import integer_or_float_matmul
from ._linear_operators import (  # noqa: F401 -- tf.linalg's operator classes
    LinearOperator, LinearOperatorAdjoint, LinearOperatorBlockDiag,
    LinearOperatorBlockLowerTriangular, LinearOperatorComposition, LinearOperatorDiag,
    LinearOperatorFullMatrix, LinearOperatorHouseholder, LinearOperatorIdentity,
    LinearOperatorInversion,
    LinearOperatorKronecker, LinearOperatorLowerTriangular, LinearOperatorLowRankUpdate,
    LinearOperatorPermutation, LinearOperatorScaledIdentity, LinearOperatorToeplitz,
    LinearOperatorTridiag, LinearOperatorZeros)
from ._matrix_ops import (adjoint, band_part, banded_triangular_solve, cholesky_solve,
                          lu_matrix_inverse, lu_reconstruct, lu_solve, diag, diag_part, matrix_transpose, set_diag,  # noqa
                          tensor_diag, tensor_diag_part, trace, triangular_solve,
                          tridiagonal_matmul, tridiagonal_solve)
from ._tf_clipping import global_norm as _global_norm
from ._tf_linalg_decompositions import (cholesky, det, eigh, eigvalsh, expm, inv, logdet,  # noqa
                                        lstsq, matrix_rank, pinv, qr, slogdet, solve, svd)
from .math import l2_normalize

__all__ = ["matmul", "mm", "bmm", "einsum", "norm", "matvec", "tensordot", "matrix_transpose",
           "adjoint", "band_part", "diag", "diag_part", "set_diag", "tensor_diag",
           "tensor_diag_part", "trace", "eye", "normalize", "l2_normalize", "global_norm",
           "cross", "tridiagonal_matmul", "LinearOperator", "LinearOperatorAdjoint",
           "LinearOperatorBlockDiag", "LinearOperatorBlockLowerTriangular",
           "LinearOperatorComposition", "LinearOperatorDiag", "LinearOperatorFullMatrix",
           "LinearOperatorHouseholder", "LinearOperatorIdentity", "LinearOperatorKronecker",
           "LinearOperatorLowerTriangular", "LinearOperatorLowRankUpdate",
           "LinearOperatorPermutation", "LinearOperatorScaledIdentity", "LinearOperatorToeplitz",
           "LinearOperatorTridiag", "LinearOperatorZeros", "LinearOperatorInversion",
           "triangular_solve", "tridiagonal_solve", "banded_triangular_solve", "cholesky_solve",
           "lu_reconstruct", "lu_solve", "lu_matrix_inverse", "solve", "svd", "det", "inv",
           "slogdet", "logdet", "cholesky", "qr", "eigh", "eigvalsh", "lstsq", "pinv",
           "matrix_rank", "expm"]


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
    return _into(integer_or_float_matmul(a, b), out)


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
    **{name: "eigh / eigvalsh for symmetric matrices (no complex dtypes for a general "
             "eigendecomposition)" for name in ("eig", "eigvals")},
})
