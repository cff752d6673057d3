"""torch.linalg and the torch top-level linear algebra (host LAPACK forward, gradients in
gpuaccel ops) against PyTorch on seeded, well-conditioned batched matrices: values, dtypes and
gradients. Where signs are arbitrary (eigenvectors, singular vectors, QR), the cases compare
absolute values, whose gradients with respect to the input do not depend on the sign chosen."""
import numpy as np
import pytest

import gpuaccel
import gpuaccel.torch as gtorch
from torch_reference import Case, comparison_tests

_rng = np.random.default_rng(7)
SQUARE = (_rng.normal(size=(2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
_half = _rng.normal(size=(2, 3, 3))
SPD = (_half @ np.swapaxes(_half, -1, -2) + np.eye(3)).astype(np.float32)
TALL = (_rng.normal(size=(2, 4, 3)) + np.eye(4, 3) * 2).astype(np.float32)
RHS = _rng.normal(size=(2, 3, 2)).astype(np.float32)
TALL_RHS = _rng.normal(size=(2, 4, 2)).astype(np.float32)
VECTOR = _rng.normal(size=(3,)).astype(np.float32)
RANK_TWO = np.array([[1, 2, 3], [2, 4, 6.5], [0, 1, 1]], np.float32)
RANK_TWO[1] = RANK_TWO[0] * 2
SINGULAR = np.array([[1, 2], [2, 4]], np.float32)
NOT_PD = np.array([[1, 2], [2, 1]], np.float32)
WIDE = np.ones((2, 3), np.float32)

_TOL = dict(rtol=1e-4, atol=1e-4)


def _case(expr, inputs, grad=(), raises=None):
    import re
    return Case("tl_" + re.sub(r"\W+", "_", expr)[:60], None, expr, inputs, grad=grad,
                raises=raises, **_TOL)


CASES = [
    _case("torch.linalg.det(a)", {"a": SQUARE}, "a"),
    _case("torch.linalg.slogdet(a)", {"a": SQUARE}, "a"),
    _case("torch.linalg.inv(a)", {"a": SQUARE}, "a"),
    _case("torch.linalg.solve(a, b)", {"a": SQUARE, "b": RHS}, ("a", "b")),
    _case("torch.linalg.solve(a, v)", {"a": SQUARE, "v": VECTOR}, ("a", "v")),
    _case("torch.linalg.solve(a, b.transpose(-1, -2), left=False)", {"a": SQUARE, "b": RHS},
          ("a", "b")),
    _case("torch.linalg.cholesky(s)", {"s": SPD}, "s"),
    _case("torch.linalg.cholesky(s, upper=True)", {"s": SPD}, "s"),
    _case("[m.abs() for m in torch.linalg.qr(t)]", {"t": TALL}, "t"),
    _case("torch.linalg.qr(t, mode='r')[1].abs()", {"t": TALL}),
    _case("torch.linalg.det(a[0])", {"a": SQUARE}, "a"),
    _case("(lambda r: (r.eigenvalues, r.eigenvectors.abs()))(torch.linalg.eigh(s))",
          {"s": SPD}, "s"),
    _case("torch.linalg.eigh(s, UPLO='U').eigenvalues", {"s": SPD}, "s"),
    _case("torch.linalg.eigvalsh(s)", {"s": SPD}, "s"),
    _case("(lambda r: (r.U.abs(), r.S, r.Vh.abs()))(torch.linalg.svd(t, full_matrices=False))",
          {"t": TALL}, "t"),
    _case("[m.abs() for m in torch.linalg.svd(t)]", {"t": TALL}),
    _case("torch.linalg.svd(t.transpose(-1, -2), full_matrices=False).S", {"t": TALL}, "t"),
    _case("torch.linalg.svdvals(t)", {"t": TALL}, "t"),
    _case("torch.linalg.pinv(t)", {"t": TALL}, "t"),
    _case("torch.linalg.lstsq(t, c).solution", {"t": TALL, "c": TALL_RHS}, ("t", "c")),
    _case("torch.linalg.matrix_rank(r)", {"r": RANK_TWO}),
    _case("torch.linalg.matrix_rank(t)", {"t": TALL}),
    _case("torch.linalg.matrix_norm(a)", {"a": SQUARE}, "a"),
    _case("torch.linalg.matrix_norm(a, 'nuc')", {"a": SQUARE}, "a"),
    _case("torch.linalg.matrix_norm(a, 2)", {"a": SQUARE}, "a"),
    _case("torch.linalg.matrix_norm(a, 1)", {"a": SQUARE}),
    _case("torch.linalg.matrix_norm(a, float('inf'))", {"a": SQUARE}),
    _case("torch.linalg.vector_norm(a, 3, dim=-1)", {"a": SQUARE}, "a"),
    _case("torch.linalg.vector_norm(a, float('inf'))", {"a": SQUARE}),
    _case("torch.linalg.norm(a)", {"a": SQUARE}, "a"),
    _case("torch.det(a)", {"a": SQUARE}, "a"),
    _case("torch.inverse(a)", {"a": SQUARE}, "a"),
    _case("torch.slogdet(a)", {"a": SQUARE}, "a"),
    _case("torch.logdet(s)", {"s": SPD}, "s"),
    _case("(lambda r: (r.U.abs(), r.S, r.V.abs()))(torch.svd(t))", {"t": TALL}, "t"),
    _case("[m.abs() for m in torch.svd(t, some=False)]", {"t": TALL}),
    _case("torch.svd(t, compute_uv=False)", {"t": TALL}),
    _case("torch.pinverse(t)", {"t": TALL}, "t"),
    _case("torch.pinverse(t[0])", {"t": TALL}, "t"),
    _case("torch.inverse(a[0])", {"a": SQUARE}, "a"),
    _case("torch.logdet(a)", {"a": SQUARE}, "a"),
    _case("torch.linalg.matrix_exp(a * 0.3)", {"a": SQUARE}, "a"),
    _case("torch.matrix_exp(a[0] * 2)", {"a": SQUARE}, "a"),
    _case("torch.linalg.inv(z)", {"z": SINGULAR}, raises=RuntimeError),
    _case("torch.linalg.solve(z, z)", {"z": SINGULAR}, raises=RuntimeError),
    _case("torch.linalg.det(w)", {"w": WIDE}, raises=RuntimeError),
    _case("torch.linalg.inv(w)", {"w": WIDE}, raises=RuntimeError),
    _case("torch.linalg.cholesky(n)", {"n": NOT_PD}, raises=RuntimeError),
]

torch_results, test_matches_pytorch = comparison_tests(CASES)


def test_singular_input_is_a_linalg_error():
    with pytest.raises(gtorch.linalg.LinAlgError, match="singular"):
        gtorch.linalg.inv(gtorch.tensor(SINGULAR))
    with pytest.raises(gtorch.linalg.LinAlgError, match="positive-definite"):
        gtorch.linalg.cholesky(gtorch.tensor(NOT_PD))
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3"):
        gtorch.linalg.det(gtorch.tensor(WIDE))


def test_decomposition_invariants():
    a = gtorch.tensor(TALL)
    u, s, vh = gtorch.linalg.svd(a, full_matrices=False)
    rebuilt = (u * s.unsqueeze(-2)) @ vh
    np.testing.assert_allclose(rebuilt.numpy(), TALL, atol=1e-5)
    q, r = gtorch.linalg.qr(a)
    np.testing.assert_allclose((q @ r).numpy(), TALL, atol=1e-5)
    assert np.allclose(np.tril(r.numpy(), -1), 0)
    w, v = gtorch.linalg.eigh(gtorch.tensor(SPD))
    np.testing.assert_allclose((v * w.unsqueeze(-2) @ v.transpose(-1, -2)).numpy(), SPD,
                               atol=1e-4)


def test_gradients_compose_with_other_ops_and_each_other():
    """A backward formula that calls another host op (det's uses inv) under a chain."""
    a = gtorch.tensor(SQUARE[0], requires_grad=True)
    loss = gtorch.linalg.det(gtorch.linalg.inv(a) * 2).sum() + gtorch.linalg.det(a)
    loss.backward()
    expected_det = np.linalg.det(SQUARE[0].astype(np.float64))
    inv_t = np.linalg.inv(SQUARE[0].astype(np.float64)).T
    # d/dA [8 / det A + det A] = (-8 / det A + det A) A^-T
    np.testing.assert_allclose(a.grad.numpy(), (-8 / expected_det + expected_det) * inv_t,
                               rtol=1e-3, atol=1e-4)


def test_gradcheck_on_linalg_ops():
    a = gtorch.tensor(SQUARE[0], requires_grad=True)
    for fn in (gtorch.linalg.inv, gtorch.linalg.det, lambda x: gtorch.linalg.svdvals(x)):
        assert gtorch.autograd.gradcheck(fn, (a,), eps=1e-2, atol=2e-2, rtol=2e-2)


def test_results_are_on_the_input_device():
    with gpuaccel.device("/CPU:0"):
        a = gtorch.tensor(SQUARE)
    assert gtorch.linalg.inv(a).device == a.device
