"""``keras.ops``' linear algebra (det, inv, solve, solve_triangular, cholesky, qr, eigh, svd,
slogdet, logdet, lstsq, pinv, matrix_rank) with Keras 3's signatures and NumPy-style results
(svd gives (u, s, vh), full_matrices=True by default), on tf.linalg's host-LAPACK ops and their
errors (Keras on TensorFlow raises TensorFlow's)."""
from .. import _C
from .. import _host_linalg as host
from .. import _tf_linalg_decompositions as tf_linalg
from .._convert import convert_to_tensor
from .._matrix_ops import triangular_solve

__all__ = ["det", "inv", "solve", "solve_triangular", "cholesky", "qr", "eigh", "svd",
           "slogdet", "logdet", "lstsq", "pinv", "matrix_rank"]


def det(x):
    return tf_linalg.det(x)


def inv(x):
    return tf_linalg.inv(x)


def solve(a, b):
    """x with a @ x = b; b may be a (batch of) vector(s)."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if b.ndim == a.ndim - 1:
        return _C.squeeze(tf_linalg.solve(a, _C.expand_dims(b, -1)), [-1])
    return tf_linalg.solve(a, b)


def solve_triangular(a, b, lower=False):
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if b.ndim == a.ndim - 1:
        return _C.squeeze(triangular_solve(a, _C.expand_dims(b, -1), lower=lower), [-1])
    return triangular_solve(a, b, lower=lower)


def cholesky(x, upper=False):
    chol = tf_linalg.cholesky(x)
    return host.mT(chol) if upper else chol


def qr(x, mode="reduced"):
    if mode not in ("reduced", "complete"):
        raise ValueError(f"`mode` argument value not supported. Expected one of "
                         f"{{'reduced', 'complete'}}. Received: mode={mode}")
    return tf_linalg.qr(x, full_matrices=mode == "complete")


def eigh(x):
    return tf_linalg.eigh(x)


def svd(x, full_matrices=True, compute_uv=True):
    """(u, s, vh), or s with ``compute_uv=False``."""
    if not compute_uv:
        return tf_linalg.svd(x, compute_uv=False)
    s, u, v = tf_linalg.svd(x, full_matrices=full_matrices)
    return u, s, host.mT(v)


def slogdet(x):
    return tf_linalg.slogdet(x)


def logdet(x):
    return tf_linalg.logdet(x)


def lstsq(a, b, rcond=None):
    """The least-squares solution pinv(a) @ b of one matrix a (b may be a vector)."""
    a, b = convert_to_tensor(a), convert_to_tensor(b)
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    vector = b.ndim == 1
    if vector:
        b = _C.expand_dims(b, -1)
    solution = host.mm(pinv(a, rcond), b)
    return _C.squeeze(solution, [-1]) if vector else solution


def pinv(x, rcond=None):
    return tf_linalg.pinv(x, rcond=rcond)


def matrix_rank(x, tol=None):
    return tf_linalg.matrix_rank(x, tol=tol)
