"""``tf.linalg``'s decompositions and the names composed from them (solve, svd, det, inv,
slogdet, logdet, cholesky, qr, eigh, eigvalsh, lstsq, pinv, matrix_rank), with TensorFlow's
output conventions (svd gives (s, u, v) with v not transposed) and errors
(InvalidArgumentError). The forward runs in LAPACK on the host, the gradients in gpuaccel ops
(_host_linalg.py); TensorFlow's own gradient conventions are kept where they differ from
PyTorch's (eigh's gradient is the lower triangle of the symmetrized one).
"""
import contextlib

import numpy as np

from . import _C, errors
from . import _host_linalg as host
from ._convert import convert_to_tensor
from ._tensor import tensor

__all__ = ["solve", "svd", "det", "inv", "slogdet", "logdet", "cholesky", "qr", "eigh",
           "eigvalsh", "lstsq", "pinv", "matrix_rank", "expm"]


@contextlib.contextmanager
def _tf_errors(op):
    """LAPACK failures as TensorFlow raises them."""
    try:
        yield
    except host.NotSquare as e:
        raise errors.InvalidArgumentError(f"{op}: Input matrix must be square, got {e} "
                                          "matrices", op) from None
    except host.LinalgFailure as e:
        raise errors.InvalidArgumentError(f"{op}: Input is not invertible.", op) from None


def _matrices(x):
    x = convert_to_tensor(x)
    if x.ndim < 2:
        raise errors.InvalidArgumentError(f"Input must have rank >= 2, got shape "
                                          f"{tuple(x.shape)}")
    return x


def solve(matrix, rhs, adjoint=False, name=None):
    """``tf.linalg.solve``: x with matrix @ x = rhs (adjoint(matrix) @ x with ``adjoint``)."""
    a, b = _matrices(matrix), _matrices(rhs)
    if adjoint:
        a = host.mT(a)
    with _tf_errors("MatrixSolve"):
        return host.solve(a, b)


def inv(input, adjoint=False, name=None):
    a = _matrices(input)
    with _tf_errors("MatrixInverse"):
        result = host.inv(a)
    return host.mT(result) if adjoint else result


def det(input, name=None):
    with _tf_errors("MatrixDeterminant"):
        return host.det(_matrices(input))


def slogdet(input, name=None):
    """(sign, log_abs_determinant)."""
    with _tf_errors("LogMatrixDeterminant"):
        return host.slogdet(_matrices(input))


def cholesky(input, name=None):
    """The lower Cholesky factor; a matrix that is not positive definite gives NaNs (TF logs
    "Cholesky decomposition was not successful" and fills the output with NaNs)."""
    with _tf_errors("Cholesky"):
        return host.cholesky(_matrices(input), failed_as_nan=True)


def logdet(matrix, name=None):
    """log det of Hermitian positive definite matrices: 2 * sum(log(diag(cholesky)))."""
    chol = cholesky(matrix)
    return _C.binary("mul", tensor(2.0, device=chol.device),
                     _C.reduce("sum", _C.unary("log", host.diagonal(chol)), [-1], False))


def qr(input, full_matrices=False, name=None):
    if full_matrices:
        raise NotImplementedError("qr(full_matrices=True) is not supported; the reduced "
                                  "factorization (full_matrices=False) is")
    with _tf_errors("Qr"):
        return host.qr(_matrices(input))


def eigh(tensor, name=None):
    """(e, v): ascending eigenvalues and eigenvectors (columns) of the self-adjoint matrices
    read from the lower triangle."""
    with _tf_errors("SelfAdjointEigV2"):
        return host.eigh(_matrices(tensor), symmetrize_gradient=True)


def eigvalsh(tensor, name=None):
    return eigh(tensor)[0]


def svd(tensor, full_matrices=False, compute_uv=True, name=None):
    """``tf.linalg.svd``: s, or (s, u, v) with a = u diag(s) v^T (v, not its transpose)."""
    a = _matrices(tensor)
    if not compute_uv:
        return host.svdvals(a)
    u, s, vh = host.svd(a, full_matrices=full_matrices)
    return s, u, host.mT(vh)


def pinv(a, rcond=None, validate_args=False, name=None):
    """Moore-Penrose pseudo-inverse from the SVD, singular values below
    rcond * max(s) dropped (TF's default rcond: 10 * max(m, n) * eps)."""
    a = _matrices(a)
    m, n = a.shape[-2], a.shape[-1]
    if rcond is None:
        rcond = 10.0 * max(m, n) * float(np.finfo(np.float32).eps)
    return host.pinv(a, rcond)


def lstsq(matrix, rhs, l2_regularizer=0.0, fast=True, name=None):
    """``tf.linalg.lstsq``: argmin ||matrix @ x - rhs||^2 + l2 ||x||^2, for full-rank
    matrices (the regularised normal equations, as TF's fast path)."""
    a, b = _matrices(matrix), _matrices(rhs)
    m, n = a.shape[-2], a.shape[-1]
    at = host.mT(a)
    if m >= n:
        gram = host.mm(at, a)
        if l2_regularizer:
            gram = gram + float(l2_regularizer) * host._eye(n, gram)
        return _solve_normal_equations(gram, host.mm(at, b))
    gram = host.mm(a, at)
    if l2_regularizer:
        gram = gram + float(l2_regularizer) * host._eye(m, gram)
    return host.mm(at, _solve_normal_equations(gram, b))


def _solve_normal_equations(gram, rhs):
    """The regularised normal equations' solution (gram is symmetric positive definite)."""
    with _tf_errors("MatrixSolveLs"):
        return host.solve(gram, rhs)


def matrix_rank(a, tol=None, validate_args=False, name=None):
    """The number of singular values above ``tol`` (default max(m, n) * eps * max(s)), int32."""
    a = _matrices(a)
    s = host.svdvals_array(a)
    if tol is None:
        tol = (max(a.shape[-2], a.shape[-1]) * float(np.finfo(np.float32).eps)
               * s.max(axis=-1, keepdims=True, initial=0.0))
    else:
        tol = np.expand_dims(np.asarray(tol, np.float64), -1)
    return tensor((s > tol).sum(axis=-1).astype(np.int32), device=a.device)


def expm(input, name=None):
    """The matrix exponential (Pade scaling and squaring on the host)."""
    with _tf_errors("MatrixExponential"):
        return host.expm(_matrices(input))
