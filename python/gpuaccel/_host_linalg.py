"""The matrix decompositions (solve, inv, det, slogdet, cholesky, qr, eigh, svd) as
differentiable gpuaccel ops: the forward runs in LAPACK on the host (numpy.linalg, in float64,
the result cast back to the input's dtype), the backward is the standard matrix-calculus
formula written in gpuaccel ops, so it runs on the tensor's device and composes with the rest
of the graph. A CUDA tensor is copied to the host for the forward and its results copied back
(cuSOLVER is the later GPU path). Every op is batched over leading axes (..., m, n).

The framework faces (tf.linalg in linalg.py, torch.linalg in torch/linalg.py, keras.ops) wrap
these and add their own names, output conventions and error types; the helpers that compose
from these ops (pinv, lstsq, logdet, matrix_rank...) live with them. Failures are raised as
``LinalgFailure`` (singular or not positive definite) and ``NotSquare``, which each face
turns into its framework's error.
"""
import numpy as np

from . import _C
from ._python_function import record_outputs
from ._tensor import tensor


class LinalgFailure(Exception):
    """LAPACK could not complete: the input is singular or not positive definite."""


class NotSquare(Exception):
    """The matrices are not square."""


# ---- small gpuaccel-op helpers for the backward formulas -------------------------------------

def mT(x):
    return _C.transpose(x, -1, -2)


def mm(a, b):
    return _C.matmul(a, b)


def diag_embed(v):
    """(..., k) -> (..., k, k) with v on the diagonal."""
    k = v.shape[-1]
    return _C.binary("mul", _C.expand_dims(v, -1), _eye(k, v))


def diagonal(a):
    """(..., k, k) -> (..., k)."""
    return _C.reduce("sum", _C.binary("mul", a, _eye(a.shape[-1], a)), [-1], False)


def _eye(k, like):
    return tensor(np.eye(k, dtype=np.float32), dtype=like.dtype, device=like.device)


def _const(array, like):
    return tensor(np.asarray(array, np.float32), dtype=like.dtype, device=like.device)


def tril(a, diagonal_offset=0):
    m, n = a.shape[-2], a.shape[-1]
    return _C.binary("mul", a, _const(np.tri(m, n, diagonal_offset), a))


def skew(a):
    return _C.binary("sub", a, mT(a))


# ---- the host forward ------------------------------------------------------------------------

def _host(x):
    if x.ndim < 2:
        raise ValueError(f"expected a tensor of rank >= 2 (a batch of matrices), got shape "
                         f"{tuple(x.shape)}")
    if not x.dtype.is_floating_point:
        raise TypeError(f"expected a floating tensor, got {x.dtype.name}")
    return x.detach().numpy().astype(np.float64)


def _square(a, array):
    if array.shape[-1] != array.shape[-2]:
        raise NotSquare(f"{array.shape[-2]} by {array.shape[-1]}")


def _out(array, like):
    # np.array keeps a 0-d result 0-d (np.ascontiguousarray would make it 1-d).
    return tensor(np.array(array, dtype=np.float32, order="C"), dtype=like.dtype,
                  device=like.device)


def _record(name, inputs, outputs, backward):
    record_outputs(name, inputs, outputs, backward)
    return outputs


# ---- the ops ---------------------------------------------------------------------------------

def inv(a):
    array = _host(a)
    _square(a, array)
    try:
        result = np.linalg.inv(array)
    except np.linalg.LinAlgError as e:
        raise LinalgFailure("singular") from e
    y = _out(result, a)
    y_saved = _C.detach(y)

    def backward(grads):
        # d(A^-1) = -A^-1 dA A^-1  =>  gA = -Y^T gY Y^T
        yt = mT(y_saved)
        return [_C.unary("neg", mm(mm(yt, grads[0]), yt))]

    return _record("linalg_inv", [a], [y], backward)[0]


def solve(a, b):
    """x with a @ x = b; b is (..., n, k) (a batch of matrices, broadcast against a)."""
    array, rhs = _host(a), b.detach().numpy().astype(np.float64)
    _square(a, array)
    try:
        result = np.linalg.solve(array, rhs)
    except np.linalg.LinAlgError as e:
        raise LinalgFailure("singular") from e
    x = _out(result, a)
    x_saved, a_saved = _C.detach(x), _C.detach(a)

    def backward(grads):
        # gB = A^-T gX, gA = -gB X^T, each summed back over the batch axes broadcasting added
        grad_b = solve(mT(a_saved), grads[0])
        grad_a = _C.unary("neg", mm(grad_b, mT(x_saved)))
        return [_reduce_to(grad_a, a.shape), _reduce_to(grad_b, b.shape)]

    return _record("linalg_solve", [a, b], [x], backward)[0]


def _reduce_to(grad, shape):
    from ._python_function import sum_to_shape
    return grad if tuple(grad.shape) == tuple(shape) else sum_to_shape(grad, shape)


def slogdet(a):
    """(sign, log|det a|)."""
    array = _host(a)
    _square(a, array)
    sign, logabs = np.linalg.slogdet(array)
    sign_t, logabs_t = _out(sign, a), _out(logabs, a)
    a_saved = _C.detach(a)

    def backward(grads):
        # d log|det A| = tr(A^-1 dA)  =>  gA = g A^-T; the sign is piecewise constant.
        return [_C.binary("mul", _C.expand_dims(_C.expand_dims(grads[0], -1), -1),
                          mT(inv(a_saved)))]

    record_outputs("linalg_slogdet", [a], [logabs_t], backward)
    return sign_t, logabs_t


def det(a):
    array = _host(a)
    _square(a, array)
    d = _out(np.linalg.det(array), a)
    a_saved, d_saved = _C.detach(a), _C.detach(d)

    def backward(grads):
        # d det A = det A tr(A^-1 dA)  =>  gA = g det(A) A^-T (A invertible)
        scale = _C.binary("mul", grads[0], d_saved)
        return [_C.binary("mul", _C.expand_dims(_C.expand_dims(scale, -1), -1),
                          mT(inv(a_saved)))]

    return _record("linalg_det", [a], [d], backward)[0]


def _cholesky_each(symmetric, failed_as_nan):
    """np.linalg.cholesky per matrix; a failing one raises, or is all NaN with
    ``failed_as_nan`` (TensorFlow's behaviour)."""
    try:
        return np.linalg.cholesky(symmetric)
    except np.linalg.LinAlgError as e:
        if not failed_as_nan:
            raise LinalgFailure("not positive definite") from e
    flat = symmetric.reshape((-1,) + symmetric.shape[-2:])
    result = np.empty_like(flat)
    for i, matrix in enumerate(flat):
        try:
            result[i] = np.linalg.cholesky(matrix)
        except np.linalg.LinAlgError:
            result[i] = np.nan
    return result.reshape(symmetric.shape)


def cholesky(a, upper=False, failed_as_nan=False):
    """The lower factor L with a = L L^T (reads the lower triangle), or U = L^T. A matrix that
    is not positive definite raises LinalgFailure, or gives NaNs with ``failed_as_nan``."""
    array = _host(a)
    _square(a, array)
    result = _cholesky_each(np.tril(array) + np.swapaxes(np.tril(array, -1), -1, -2),
                            failed_as_nan)
    lower = _out(result, a)
    l_saved = _C.detach(lower)

    def backward(grads):
        # gA = 1/2 L^-T Phi(L^T gL) L^-1, symmetrized; Phi: lower triangle, diagonal halved.
        l_inv = inv(l_saved)
        middle = mm(mT(l_saved), grads[0])
        middle = _C.binary("sub", tril(middle), _C.binary("mul", _const(0.5, middle),
                                                          diag_embed(diagonal(middle))))
        grad = mm(mm(mT(l_inv), middle), l_inv)
        return [_C.binary("mul", _const(0.5, grad), _C.binary("add", grad, mT(grad)))]

    lower = _record("linalg_cholesky", [a], [lower], backward)[0]
    return mT(lower) if upper else lower


def qr(a):
    """Reduced QR: q (..., m, k), r (..., k, n), k = min(m, n). Gradients for m >= n."""
    array = _host(a)
    q_array, r_array = np.linalg.qr(array, mode="reduced")
    q, r = _out(q_array, a), _out(r_array, a)
    q_saved, r_saved = _C.detach(q), _C.detach(r)
    m, n = array.shape[-2], array.shape[-1]

    def backward(grads):
        if m < n:
            raise NotImplementedError("the QR gradient is implemented for m >= n (tall or "
                                      f"square matrices); this input is {m} by {n}")
        grad_q, grad_r = grads
        # M = R gR^T - gQ^T Q;  gA = (gQ + Q copyltu(M)) R^-T
        big_m = _C.binary("sub", mm(r_saved, mT(grad_r)), mm(mT(grad_q), q_saved))
        lower = tril(big_m, -1)
        copyltu = _C.binary("add", _C.binary("add", lower, mT(lower)),
                            diag_embed(diagonal(big_m)))
        b = _C.binary("add", grad_q, mm(q_saved, copyltu))
        return [mm(b, mT(inv(r_saved)))]

    return tuple(_record("linalg_qr", [a], [q, r], backward))


def eigh(a, lower=True, symmetrize_gradient=False):
    """Eigenvalues (ascending) and eigenvectors of the symmetric matrices read from the lower
    (or upper) triangle. ``symmetrize_gradient``: TensorFlow's gradient convention (the lower
    triangle of gA + gA^T, diagonal halved) instead of PyTorch's."""
    array = _host(a)
    _square(a, array)
    w_array, v_array = np.linalg.eigh(array, UPLO="L" if lower else "U")
    w, v = _out(w_array, a), _out(v_array, a)
    w_saved, v_saved = _C.detach(w), _C.detach(v)

    def backward(grads):
        grad_w, grad_v = grads
        # gA = V (diag(gw) + skew(V^T gV)/2 / E) V^T, E_ij = w_j - w_i (E_ii: 1, unused)
        vt_gv = mm(mT(v_saved), grad_v)
        vt_gv = _C.binary("mul", _const(0.5, vt_gv), skew(vt_gv))
        gaps = _C.binary("sub", _C.expand_dims(w_saved, -2), _C.expand_dims(w_saved, -1))
        k = w.shape[-1]
        gaps = _C.binary("add", gaps, _eye(k, gaps))
        inner = _C.binary("add", _C.binary("div", vt_gv, gaps), diag_embed(grad_w))
        grad = mm(mm(v_saved, inner), mT(v_saved))
        if symmetrize_gradient:
            grad = _C.binary("add", grad, mT(grad))
            grad = _C.binary("sub", tril(grad),
                             _C.binary("mul", _const(0.5, grad), diag_embed(diagonal(grad))))
        return [grad]

    return tuple(_record("linalg_eigh", [a], [w, v], backward))


def svd(a, full_matrices=False):
    """(u, s, vh) with a = u diag(s) vh, s descending. Gradients for the reduced form (and for
    the full form when u, vh are square or unused)."""
    array = _host(a)
    u_array, s_array, vh_array = np.linalg.svd(array, full_matrices=full_matrices)
    u, s, vh = _out(u_array, a), _out(s_array, a), _out(vh_array, a)
    u_saved, s_saved, vh_saved = _C.detach(u), _C.detach(s), _C.detach(vh)
    m, n = array.shape[-2], array.shape[-1]
    k = min(m, n)

    def backward(grads):
        grad_u, grad_s, grad_vh = grads
        uu, vhh = u_saved, vh_saved
        if full_matrices and (m != n):
            # The extra columns of u / rows of vh are arbitrary: their gradients must be zero.
            uu, vhh = u_saved[..., :, :k], vh_saved[..., :k, :]
            grad_u, grad_vh = grad_u[..., :, :k], grad_vh[..., :k, :]
        v, grad_v = mT(vhh), mT(grad_vh)
        s_row, s_col = _C.expand_dims(s_saved, -2), _C.expand_dims(s_saved, -1)
        ut_gu = skew(mm(mT(uu), grad_u))
        vt_gv = skew(mm(mT(v), grad_v))
        s_sq = _C.binary("mul", s_saved, s_saved)
        gaps = _C.binary("sub", _C.expand_dims(s_sq, -2), _C.expand_dims(s_sq, -1))
        gaps = _C.binary("add", gaps, _eye(k, gaps))
        inner = _C.binary("div", _C.binary("add", _C.binary("mul", ut_gu, s_row),
                                           _C.binary("mul", s_col, vt_gv)), gaps)
        inner = _C.binary("add", inner, diag_embed(grad_s))
        grad = mm(mm(uu, inner), vhh)
        if m > k:
            # (I - U U^T) gU S^-1 V^T
            rest = _C.binary("sub", grad_u, mm(uu, mm(mT(uu), grad_u)))
            grad = _C.binary("add", grad, mm(_C.binary("div", rest, s_row), vhh))
        if n > k:
            # U S^-1 gV^T (I - V V^T)
            rest = _C.binary("sub", grad_v, mm(v, mm(vhh, grad_v)))
            grad = _C.binary("add", grad, mm(uu, mT(_C.binary("div", rest, s_row))))
        return [grad]

    return tuple(_record("linalg_svd", [a], [u, s, vh], backward))


def svdvals(a):
    """Singular values only (descending); the gradient is u diag(gs) vh."""
    array = _host(a)
    u_array, s_array, vh_array = np.linalg.svd(array, full_matrices=False)
    s = _out(s_array, a)
    u_saved, vh_saved = _out(u_array, a), _out(vh_array, a)

    def backward(grads):
        return [mm(mm(u_saved, diag_embed(grads[0])), vh_saved)]

    return _record("linalg_svdvals", [a], [s], backward)[0]


def eigvalsh(a, lower=True):
    """Eigenvalues only (ascending); the gradient is V diag(gw) V^T."""
    array = _host(a)
    _square(a, array)
    w_array, v_array = np.linalg.eigh(array, UPLO="L" if lower else "U")
    w, v_saved = _out(w_array, a), _out(v_array, a)

    def backward(grads):
        return [mm(mm(v_saved, diag_embed(grads[0])), mT(v_saved))]

    return _record("linalg_eigvalsh", [a], [w], backward)[0]


def svdvals_array(a):
    """The singular values as a float64 NumPy array (for ranks and tolerances: no gradient)."""
    return np.linalg.svd(_host(a), compute_uv=False)


def pinv(a, rcond):
    """The pseudo-inverse V diag(1/s) U^T over the singular values above rcond * max(s),
    composed of svd and gpuaccel ops (so differentiable where the kept s are distinct)."""
    u, s, vh = svd(a)
    cutoff = _C.binary("mul", _const(float(rcond), s), _C.reduce("max", s, [-1], True))
    keep = _C.binary("greater", s, cutoff)
    inverse = _C.where(keep, _C.unary("reciprocal", _C.where(keep, s, s * 0 + 1)), s * 0)
    return mm(_C.binary("mul", mT(vh), _C.expand_dims(inverse, -2)), mT(u))


# Pade(13) scaling and squaring (Higham, "The scaling and squaring method for the matrix
# exponential revisited", 2005), in float64 on the host.
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def _expm_one(matrix):
    b = _PADE13
    norm = np.abs(matrix).sum(axis=0).max()
    squarings = max(0, int(np.ceil(np.log2(norm / _THETA13)))) if norm > _THETA13 else 0
    a = matrix / (2.0 ** squarings)
    ident = np.eye(a.shape[0])
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (b[13] * a6 + b[11] * a4 + b[9] * a2)
             + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * ident)
    v = a6 @ (b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
        + b[0] * ident
    result = np.linalg.solve(v - u, v + u)
    for _ in range(squarings):
        result = result @ result
    return result


def expm(a):
    """The matrix exponential; its gradient is the upper-right block of
    expm([[A^T, G], [0, A^T]]) (the Frechet derivative's adjoint), itself an expm."""
    array = _host(a)
    _square(a, array)
    flat = array.reshape((-1,) + array.shape[-2:])
    result = np.stack([_expm_one(m) for m in flat]).reshape(array.shape)
    y = _out(result, a)
    a_saved = _C.detach(a)
    n = array.shape[-1]

    def backward(grads):
        at = mT(a_saved)
        top = _C.concat([at, grads[0]], -1)
        bottom = _C.concat([at * 0, at], -1)
        block = expm(_C.concat([top, bottom], -2))
        return [block[..., :n, n:]]

    return _record("linalg_expm", [a], [y], backward)[0]
