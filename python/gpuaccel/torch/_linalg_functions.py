"""PyTorch's top-level linear-algebra functions (``torch.det``, ``torch.inverse``, ``torch.svd``
with PyTorch 1.13's ``some``/``compute_uv``, ``torch.slogdet``, ``torch.logdet``,
``torch.cholesky``, ``torch.qr``, ``torch.pinverse``): the older spellings of ``torch.linalg``
names, with their own argument conventions, on the same host-LAPACK ops (linalg.py).
"""
import collections

import numpy as np

from .. import _C
from .. import _host_linalg as host
from .._tensor import tensor
from . import linalg

__all__ = ["det", "inverse", "svd", "slogdet", "logdet", "cholesky", "qr", "pinverse",
           "matrix_exp"]

_svd = collections.namedtuple("svd", ["U", "S", "V"])
_slogdet = collections.namedtuple("slogdet", ["sign", "logabsdet"])
_qr = collections.namedtuple("qr", ["Q", "R"])


def det(input):
    return linalg.det(input)


def inverse(input, *, out=None):
    return linalg.inv(input)


def slogdet(input):
    return _slogdet(*linalg.slogdet(input))


def logdet(input):
    """log det(input): nan where the determinant is negative, -inf where it is zero."""
    sign, logabsdet = linalg.slogdet(input)
    nan = tensor(float("nan"), device=logabsdet.device)
    return _C.where(_C.binary("less", sign, sign * 0), nan * _C.unary("abs", sign), logabsdet)


def svd(input, some=True, compute_uv=True, *, out=None):
    """(U, S, V) with input = U diag(S) V^T (V, not V^T). ``some``: reduced U and V;
    ``compute_uv=False``: U and V zero-filled (m, m) and (n, n) matrices."""
    A = linalg._matrices(input, "svd")
    if not compute_uv:
        m, n = A.shape[-2], A.shape[-1]
        batch = tuple(A.shape[:-2])
        return _svd(tensor(np.zeros(batch + (m, m), np.float32), device=A.device),
                    host.svdvals(A),
                    tensor(np.zeros(batch + (n, n), np.float32), device=A.device))
    U, S, Vh = host.svd(A, full_matrices=not some)
    return _svd(U, S, host.mT(Vh))


def cholesky(input, upper=False, *, out=None):
    return linalg.cholesky(input, upper=upper)


def qr(input, some=True, *, out=None):
    return _qr(*linalg.qr(input, "reduced" if some else "complete"))


def pinverse(input, rcond=1e-15):
    return host.pinv(linalg._matrices(input, "pinv"), rcond)


def matrix_exp(A):
    return linalg.matrix_exp(A)
