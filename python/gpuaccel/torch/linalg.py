"""``torch.linalg`` of the PyTorch face: the decompositions (det, slogdet, inv, solve, cholesky,
qr, eigh, eigvalsh, svd, svdvals) run in LAPACK on the host with gradients in gpuaccel ops
(gpuaccel/_host_linalg.py: a CUDA tensor is copied to the host and back), and what composes
from them (pinv, matrix_rank, lstsq) or from element ops (vector_norm, matrix_norm, norm).
Results and errors follow PyTorch: named tuples, ``svd`` returning ``Vh`` with
``full_matrices=True`` by default, ``LinAlgError`` (a RuntimeError) for singular or
non-positive-definite input, RuntimeError for non-square input.
"""
import collections
import contextlib
import math

import numpy as np

from .. import _C
from .. import _host_linalg as host
from .._convert import convert_to_tensor
from .._tensor import tensor

__all__ = ["LinAlgError", "det", "slogdet", "inv", "solve", "cholesky", "qr", "eigh",
           "eigvalsh", "svd", "svdvals", "pinv", "matrix_rank", "lstsq", "vector_norm",
           "matrix_norm", "norm", "matrix_exp"]


class LinAlgError(RuntimeError):
    """``torch.linalg.LinAlgError``: the input is singular or not positive definite."""


_slogdet = collections.namedtuple("linalg_slogdet", ["sign", "logabsdet"])
_qr = collections.namedtuple("linalg_qr", ["Q", "R"])
_eigh = collections.namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
_svd = collections.namedtuple("linalg_svd", ["U", "S", "Vh"])
_lstsq = collections.namedtuple("linalg_lstsq",
                                ["solution", "residuals", "rank", "singular_values"])


@contextlib.contextmanager
def _torch_errors(op):
    try:
        yield
    except host.NotSquare as e:
        raise RuntimeError(f"linalg.{op}: A must be batches of square matrices, but they are "
                           f"{e} matrices") from None
    except host.LinalgFailure as e:
        if str(e) == "singular":
            raise LinAlgError(f"linalg.{op}: The input matrix is singular, the {op} could not "
                              "be completed.") from None
        raise LinAlgError(f"linalg.{op}: The factorization could not be completed because the "
                          "input is not positive-definite.") from None


def _matrices(A, op):
    A = convert_to_tensor(A)
    if A.ndim < 2:
        raise RuntimeError(f"linalg.{op}: The input tensor A must have at least 2 dimensions.")
    return A


def det(A, *, out=None):
    with _torch_errors("det"):
        return host.det(_matrices(A, "det"))


def slogdet(A, *, out=None):
    with _torch_errors("slogdet"):
        return _slogdet(*host.slogdet(_matrices(A, "slogdet")))


def inv(A, *, out=None):
    with _torch_errors("inv"):
        return host.inv(_matrices(A, "inv"))


def solve(A, B, *, left=True, out=None):
    """X with A X = B (X A = B with ``left=False``); B may be a (batch of) vector(s)."""
    A, B = _matrices(A, "solve"), convert_to_tensor(B)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))
    if vector:
        B = _C.expand_dims(B, -1)
    with _torch_errors("solve"):
        if left:
            X = host.solve(A, B)
        else:
            X = host.mT(host.solve(host.mT(A), host.mT(B)))
    return _C.squeeze(X, [-1]) if vector else X


def cholesky(A, *, upper=False, out=None):
    with _torch_errors("cholesky"):
        return host.cholesky(_matrices(A, "cholesky"), upper=upper)


def qr(A, mode="reduced", *, out=None):
    A = _matrices(A, "qr")
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    if mode == "complete" and A.shape[-2] > A.shape[-1]:
        raise NotImplementedError("linalg.qr(mode='complete') of a tall matrix is not "
                                  "supported; mode='reduced' is")
    Q, R = host.qr(A)
    if mode == "r":
        return _qr(tensor(np.zeros((0,), np.float32), device=A.device), R)
    return _qr(Q, R)


def eigh(A, UPLO="L", *, out=None):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    with _torch_errors("eigh"):
        return _eigh(*host.eigh(_matrices(A, "eigh"), lower=UPLO == "L"))


def eigvalsh(A, UPLO="L", *, out=None):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    with _torch_errors("eigvalsh"):
        return host.eigvalsh(_matrices(A, "eigvalsh"), lower=UPLO == "L")


def svd(A, full_matrices=True, *, driver=None, out=None):
    return _svd(*host.svd(_matrices(A, "svd"), full_matrices=full_matrices))


def svdvals(A, *, driver=None, out=None):
    return host.svdvals(_matrices(A, "svdvals"))


def _default_rtol(A, atol):
    return max(A.shape[-2], A.shape[-1]) * float(np.finfo(np.float32).eps) if atol is None \
        else 0.0


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Singular values at or below max(atol, rtol * max(s)) are dropped (rtol's default:
    max(m, n) * eps when atol is not given, else 0)."""
    A = _matrices(A, "pinv")
    if atol is not None:
        raise NotImplementedError("pinv(atol=...) is not supported; give rtol (relative to "
                                  "the largest singular value)")
    return host.pinv(A, _default_rtol(A, atol) if rtol is None else rtol)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The number of singular values above max(atol, rtol * max(s)), int64."""
    A = _matrices(A, "matrix_rank")
    s = host.svdvals_array(A)
    rtol = _default_rtol(A, atol) if rtol is None else rtol
    cutoff = np.maximum(0.0 if atol is None else atol, rtol * s.max(axis=-1, keepdims=True,
                                                                     initial=0.0))
    return tensor((s > cutoff).sum(axis=-1).astype(np.int64), device=A.device)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution pinv(A) @ B (full-rank A; gradients through the SVD), with
    PyTorch's CPU default driver's extras: empty residuals and singular values, the rank."""
    A, B = _matrices(A, "lstsq"), convert_to_tensor(B)
    if B.ndim == A.ndim - 1:
        raise RuntimeError("torch.linalg.lstsq: input.dim() must be greater or equal to "
                           "other.dim() and (input.dim() - other.dim()) <= 1")
    solution = host.mm(pinv(A), B)
    empty = tensor(np.zeros((0,), np.float32), device=A.device)
    return _lstsq(solution, empty, matrix_rank(A), empty)


def matrix_exp(A):
    """The matrix exponential (Pade scaling and squaring on the host)."""
    with _torch_errors("matrix_exp"):
        return host.expm(_matrices(A, "matrix_exp"))


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    x = convert_to_tensor(x)
    axes = list(range(x.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    absolute = _C.unary("abs", x)
    if ord == math.inf:
        return _C.reduce("max", absolute, axes, keepdim)
    if ord == -math.inf:
        return _C.reduce("min", absolute, axes, keepdim)
    if ord == 0:
        return _C.reduce("sum", _C.cast(_C.binary("greater", absolute, absolute * 0),
                                         x.dtype.name), axes, keepdim)
    if ord == 2:
        return _C.unary("sqrt", _C.reduce("sum", _C.unary("square", x), axes, keepdim))
    if ord == 1:
        return _C.reduce("sum", absolute, axes, keepdim)
    powered = _C.reduce("sum", absolute ** float(ord), axes, keepdim)
    return powered ** (1.0 / float(ord))


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    A = _matrices(A, "matrix_norm")
    rows, cols = dim
    if tuple(d % A.ndim for d in dim) != (A.ndim - 2, A.ndim - 1):
        A = _C.permute(A, [d for d in range(A.ndim) if d not in (rows % A.ndim, cols % A.ndim)]
                       + [rows % A.ndim, cols % A.ndim])
    if ord == "fro":
        result = vector_norm(A, 2, (-2, -1))
    elif ord == "nuc":
        result = _C.reduce("sum", host.svdvals(A), [-1], False)
    elif ord in (2, -2):
        result = _C.reduce("max" if ord == 2 else "min", host.svdvals(A), [-1], False)
    elif ord in (1, -1, math.inf, -math.inf):
        summed_axis = -2 if ord in (1, -1) else -1
        sums = _C.reduce("sum", _C.unary("abs", A), [summed_axis], False)
        result = _C.reduce("max" if ord > 0 else "min", sums, [-1], False)
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if keepdim:
        for d in sorted((rows % (A.ndim), cols % (A.ndim))):
            result = _C.expand_dims(result, d)
    return result


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    A = convert_to_tensor(A)
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        if len(dims) == 2:
            return matrix_norm(A, "fro" if ord is None else ord, dims, keepdim)
        return vector_norm(A, 2 if ord is None else ord, dims, keepdim)
    if ord is None:
        return vector_norm(A, 2, None, keepdim)
    if A.ndim == 2:
        return matrix_norm(A, ord, (-2, -1), keepdim)
    if A.ndim == 1:
        return vector_norm(A, ord, None, keepdim)
    raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input must be "
                       f"1D or 2D. Got {A.ndim}D.")
