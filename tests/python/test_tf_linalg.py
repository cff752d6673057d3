"""``gpuaccel.linalg`` against real ``tf.linalg`` on the same seeded inputs: values, shapes and
dtypes, the gradient of sum(output * cotangent) through both tapes, and TF's errors for bad
arguments. Only the names that compose from existing ops are here (no decompositions)."""
import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import (as_array, assert_case_matches, assert_forward_matches,
                           assert_gradient_matches,
                           case_ids)

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(61)
M = RNG.normal(size=(3, 4)).astype(np.float32)
BATCH = RNG.normal(size=(2, 3, 4)).astype(np.float32)
SQUARE = RNG.normal(size=(2, 3, 3)).astype(np.float32)
VEC = RNG.normal(size=(4,)).astype(np.float32)
VECS = RNG.normal(size=(2, 3)).astype(np.float32)
THREE = RNG.normal(size=(5, 3)).astype(np.float32)
THREE_B = RNG.normal(size=(5, 3)).astype(np.float32)
PAIR = RNG.normal(size=(2, 3, 2, 3)).astype(np.float32)
DIAG = RNG.normal(size=(3,)).astype(np.float32)

# tf's op, gpuaccel's, positional arguments (the first float32 array is differentiated),
# keyword arguments, whether to compare gradients.
CASES = [
    (tf.linalg.matrix_transpose, gt.linalg.matrix_transpose, (BATCH,), {}, True),
    (tf.linalg.adjoint, gt.linalg.adjoint, (M,), {}, True),
    (tf.linalg.band_part, gt.linalg.band_part, (BATCH, 1, 0), {}, True),
    (tf.linalg.band_part, gt.linalg.band_part, (BATCH, -1, 2), {}, True),
    (tf.linalg.band_part, gt.linalg.band_part, (np.int32([[1, 2], [3, 4]]), 0, 0), {}, False),
    (tf.linalg.diag, gt.linalg.diag, (VECS,), {}, True),
    (tf.linalg.diag, gt.linalg.diag, (DIAG,), {"k": 1}, True),
    (tf.linalg.diag, gt.linalg.diag, (DIAG,), {"k": -2, "num_cols": 3, "padding_value": 7.0},
     True),
    (tf.linalg.diag, gt.linalg.diag, (np.int32([4, -5]),), {}, False),
    (tf.linalg.diag_part, gt.linalg.diag_part, (BATCH,), {}, True),
    (tf.linalg.diag_part, gt.linalg.diag_part, (M,), {"k": -1}, True),
    (tf.linalg.diag_part, gt.linalg.diag_part, (M,), {"k": 2}, True),
    (tf.linalg.set_diag, gt.linalg.set_diag, (M, DIAG), {}, True),
    (tf.linalg.set_diag, gt.linalg.set_diag, (M, DIAG), {"k": 1}, True),
    (tf.linalg.set_diag, gt.linalg.set_diag, (SQUARE, VECS), {}, True),
    (tf.linalg.tensor_diag, gt.linalg.tensor_diag, (VECS,), {}, True),
    (tf.linalg.tensor_diag_part, gt.linalg.tensor_diag_part, (PAIR,), {}, True),
    (tf.linalg.trace, gt.linalg.trace, (BATCH,), {}, True),
    (tf.linalg.matvec, gt.linalg.matvec, (BATCH, VEC), {}, True),
    (tf.linalg.matvec, gt.linalg.matvec, (M, RNG.normal(size=(3,)).astype(np.float32)),
     {"adjoint_a": True}, True),
    (tf.linalg.tensordot, gt.linalg.tensordot, (BATCH, M.T.copy()), {"axes": [[1, 2], [1, 0]]},
     True),
    (tf.linalg.tensordot, gt.linalg.tensordot, (M, VEC), {"axes": 1}, True),
    (tf.linalg.einsum, gt.linalg.einsum, ("bij,jk->bik", BATCH, M.T.copy()), {}, False),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {}, True),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {"axis": -1, "keepdims": True}, True),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {"ord": 1, "axis": 1}, True),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {"ord": 3, "axis": 2}, True),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {"ord": np.inf, "axis": 2}, False),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {"ord": "fro", "axis": [1, 2]}, True),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {"ord": 1, "axis": [-2, -1]}, False),
    (tf.linalg.norm, gt.linalg.norm, (BATCH,), {"ord": np.inf, "axis": [1, 2],
                                                "keepdims": True}, False),
    (tf.linalg.l2_normalize, gt.linalg.l2_normalize, (BATCH,), {"axis": 1}, True),
    (tf.linalg.cross, gt.linalg.cross, (THREE, THREE_B), {}, True),
    (tf.linalg.eye, gt.linalg.eye, (2, 3), {"batch_shape": [2]}, False),
    (tf.linalg.tridiagonal_matmul, gt.linalg.tridiagonal_matmul,
     (RNG.normal(size=(2, 3, 4)).astype(np.float32), RNG.normal(size=(2, 4, 5)).astype(np.float32)),
     {}, True),
    (tf.linalg.tridiagonal_matmul, gt.linalg.tridiagonal_matmul,
     (RNG.normal(size=(4, 4)).astype(np.float32), RNG.normal(size=(4, 2)).astype(np.float32)),
     {"diagonals_format": "matrix"}, True),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_matches_tensorflow(case):
    assert_case_matches(case, atol=1e-5, rtol=1e-4)


def test_einsum_gradient_and_normalize_and_global_norm():
    assert_gradient_matches(lambda a, b: tf.linalg.einsum("bij,jk->bik", a, b),
                            lambda a, b: gt.linalg.einsum("bij,jk->bik", a, b),
                            (BATCH, M.T.copy()), {}, rtol=1e-5, atol=1e-5)
    for kwargs in ({"axis": 1}, {"ord": 1, "axis": -1}, {}):
        theirs, their_norm = tf.linalg.normalize(BATCH, **kwargs)
        ours, our_norm = gt.linalg.normalize(BATCH, **kwargs)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
        assert tuple(our_norm.shape) == tuple(their_norm.shape)
        np.testing.assert_allclose(our_norm.numpy(), their_norm.numpy(), rtol=1e-5)
    tensors = [M, VEC, BATCH]
    np.testing.assert_allclose(gt.linalg.global_norm(tensors).numpy(),
                               tf.linalg.global_norm(tensors).numpy(), rtol=1e-5)
    assert_gradient_matches(lambda a: tf.linalg.global_norm([a, VEC]),
                            lambda a: gt.linalg.global_norm([a, VEC]), (M,), {}, rtol=1e-5,
                            atol=1e-6)


@pytest.mark.parametrize("lower, adjoint", [(True, False), (False, False), (True, True),
                                            (False, True)])
def test_triangular_solve(lower, adjoint):
    matrix = BATCH3 + 3 * np.eye(3, dtype=np.float32)  # both triangles well conditioned
    rhs = RNG.normal(size=(2, 3, 2)).astype(np.float32)
    kwargs = {"lower": lower, "adjoint": adjoint}
    assert_forward_matches(tf.linalg.triangular_solve, gt.linalg.triangular_solve,
                           (matrix, rhs), kwargs, atol=1e-5)
    assert_gradient_matches(tf.linalg.triangular_solve, gt.linalg.triangular_solve,
                            (matrix, rhs), kwargs, rtol=1e-4, atol=1e-5)
    assert_gradient_matches(lambda b: tf.linalg.triangular_solve(matrix, b, **kwargs),
                            lambda b: gt.linalg.triangular_solve(matrix, b, **kwargs),
                            (rhs,), {}, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("lower, adjoint", [(True, False), (False, True)])
def test_banded_triangular_solve(lower, adjoint):
    bands = (RNG.random((2, 2, 4)) + np.float32(0.5)).astype(np.float32)
    rhs = RNG.normal(size=(2, 4, 3)).astype(np.float32)
    kwargs = {"lower": lower, "adjoint": adjoint}
    assert_forward_matches(tf.linalg.banded_triangular_solve, gt.linalg.banded_triangular_solve,
                           (bands, rhs), kwargs, atol=1e-5)
    assert_gradient_matches(tf.linalg.banded_triangular_solve,
                            gt.linalg.banded_triangular_solve, (bands, rhs), kwargs, rtol=1e-4,
                            atol=1e-5)


def test_solves_from_given_factors():
    """The factors come from TF's own cholesky and lu (gpuaccel has no decomposition kernel);
    what follows from them is compared."""
    spd = (BATCH3 @ BATCH3.swapaxes(-1, -2) + 3 * np.eye(3)).astype(np.float32)
    chol = tf.linalg.cholesky(spd).numpy()
    rhs = RNG.normal(size=(2, 3, 2)).astype(np.float32)
    assert_forward_matches(tf.linalg.cholesky_solve, gt.linalg.cholesky_solve, (chol, rhs), {},
                           atol=1e-5)
    assert_gradient_matches(tf.linalg.cholesky_solve, gt.linalg.cholesky_solve, (chol, rhs),
                            {}, rtol=1e-4, atol=1e-5)
    packed, perm = (t.numpy() for t in tf.linalg.lu(BATCH3))
    for theirs, ours, args in (
            (tf.linalg.lu_reconstruct, gt.linalg.lu_reconstruct, (packed, perm)),
            (tf.linalg.lu_solve, gt.linalg.lu_solve, (packed, perm, rhs)),
            (tf.linalg.lu_matrix_inverse, gt.linalg.lu_matrix_inverse, (packed, perm))):
        assert_forward_matches(theirs, ours, args, {}, atol=1e-4)
        assert_gradient_matches(theirs, ours, args, {}, rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(gt.linalg.lu_reconstruct(packed, perm).numpy(), BATCH3,
                               atol=1e-5)
    np.testing.assert_allclose(gt.linalg.lu_solve(packed, perm, rhs).numpy(),
                               np.linalg.solve(BATCH3, rhs), rtol=1e-3, atol=1e-4)


DOMINANT = np.stack([RNG.normal(size=(2, 4)), RNG.normal(size=(2, 4)) + np.float32(6.0),
                     RNG.normal(size=(2, 4))], axis=1).astype(np.float32)  # (2, 3, 4) compact


def _dense_tridiagonal(compact):
    superdiag, maindiag, subdiag = compact[..., 0, :], compact[..., 1, :], compact[..., 2, :]
    n = compact.shape[-1]
    out = np.zeros(compact.shape[:-2] + (n, n), np.float32)
    for i in range(n):
        out[..., i, i] = maindiag[..., i]
        if i + 1 < n:
            out[..., i, i + 1], out[..., i + 1, i] = superdiag[..., i], subdiag[..., i + 1]
    return out


@pytest.mark.parametrize("form", ["compact", "sequence", "matrix", "transposed"])
def test_tridiagonal_solve(form):
    rhs = RNG.normal(size=(2, 4, 3)).astype(np.float32)
    if form == "transposed":
        rhs = rhs.swapaxes(-1, -2).copy()
    kwargs = {"diagonals_format": "compact" if form == "transposed" else form,
              "transpose_rhs": form == "transposed"}

    def solver(module):
        def solve(d, b):
            d = module.constant(d) if isinstance(d, np.ndarray) else d
            if form == "sequence":
                d = [d[:, 0], d[:, 1], d[:, 2]]
            return module.linalg.tridiagonal_solve(d, module.constant(b) if isinstance(
                b, np.ndarray) else b, **kwargs)
        return solve

    diagonals = _dense_tridiagonal(DOMINANT) if form == "matrix" else DOMINANT
    theirs, ours = solver(tf), solver(gt)
    assert_forward_matches(theirs, ours, (diagonals, rhs), {}, atol=1e-5)
    assert_gradient_matches(lambda b: theirs(diagonals, b), lambda b: ours(diagonals, b),
                            (rhs,), {}, rtol=1e-4, atol=1e-5)
    if form != "matrix":  # TF's matrix form has no gradient for the matrix
        assert_gradient_matches(theirs, ours, (diagonals, rhs), {}, rtol=1e-4, atol=1e-5)


def test_tridiagonal_matmul_sequence_form_and_rhs_gradient():
    diagonals = [RNG.normal(size=(2, 4)).astype(np.float32) for _ in range(3)]
    rhs = RNG.normal(size=(2, 4, 3)).astype(np.float32)
    assert_forward_matches(
        lambda r: tf.linalg.tridiagonal_matmul(diagonals, r, diagonals_format="sequence"),
        lambda r: gt.linalg.tridiagonal_matmul(diagonals, r, diagonals_format="sequence"),
        (rhs,), {}, atol=1e-5)
    assert_gradient_matches(
        lambda r: tf.linalg.tridiagonal_matmul(diagonals, r, diagonals_format="sequence"),
        lambda r: gt.linalg.tridiagonal_matmul(diagonals, r, diagonals_format="sequence"),
        (rhs,), {}, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("call, error", [
    (lambda m: m.linalg.matrix_transpose(VEC), ValueError),
    (lambda m: m.linalg.band_part(M, 5, 0), "InvalidArgumentError"),
    (lambda m: m.linalg.band_part(M, 0, 9), "InvalidArgumentError"),
    (lambda m: m.linalg.diag(DIAG, k=-1, num_rows=5, num_cols=4), "InvalidArgumentError"),
    (lambda m: m.linalg.set_diag(M, DIAG[:2]), "InvalidArgumentError"),
    (lambda m: m.linalg.tensor_diag_part(np.zeros((2, 3, 2, 4), np.float32)),
     "InvalidArgumentError"),
    (lambda m: m.linalg.global_norm(M), TypeError),
    (lambda m: m.linalg.norm(M, ord=-1), ValueError),
    (lambda m: m.linalg.norm(M, ord="fro"), ValueError),
    (lambda m: m.linalg.cross(M[:, :2], M[:, :2]), "FailedPreconditionError"),
    (lambda m: m.linalg.tridiagonal_solve(m.ones((2, 3, 4)), m.ones((2, 3, 1))), ValueError),
    (lambda m: m.linalg.tridiagonal_solve(m.ones((2, 3, 4)), m.ones((2, 4, 1)),
                                          diagonals_format="bad"), ValueError),
], ids=["transpose-rank", "band-lower", "band-upper", "diag-size", "set_diag-shape",
        "tensor_diag_part-shape", "global_norm-list", "norm-ord", "norm-fro-vector",
        "cross-size", "tridiagonal-rows", "tridiagonal-format"])
def test_bad_arguments_raise_tensorflows_errors(call, error):
    for module in (tf, gt):
        expected = getattr(module.errors, error) if isinstance(error, str) else error
        with pytest.raises(expected):
            call(module)


# ---- tf.linalg.LinearOperator and its structured subclasses ----

A2 = RNG.normal(size=(2, 2)).astype(np.float32)
A3 = RNG.normal(size=(3, 3)).astype(np.float32)
BATCH3 = RNG.normal(size=(2, 3, 3)).astype(np.float32)
D3 = (RNG.random(3) + 0.5).astype(np.float32)
D23 = (RNG.random((2, 3)) + 0.5).astype(np.float32)
V3 = RNG.normal(size=(3,)).astype(np.float32)
U31 = RNG.normal(size=(3, 1)).astype(np.float32)
V23 = RNG.normal(size=(2, 3)).astype(np.float32)
T33 = RNG.normal(size=(3, 3)).astype(np.float32)

# (builder given tf.linalg or gpuaccel.linalg, whether gpuaccel computes its determinant and
# solve: structure that needs no decomposition kernel)
OPERATORS = [
    (lambda linalg: linalg.LinearOperatorFullMatrix(A3), False),
    (lambda linalg: linalg.LinearOperatorFullMatrix(BATCH3, is_square=True), False),
    (lambda linalg: linalg.LinearOperatorDiag(D3), True),
    (lambda linalg: linalg.LinearOperatorDiag(D23), True),
    (lambda linalg: linalg.LinearOperatorIdentity(3), True),
    (lambda linalg: linalg.LinearOperatorIdentity(3, batch_shape=[2]), True),
    (lambda linalg: linalg.LinearOperatorScaledIdentity(3, 1.5), True),
    (lambda linalg: linalg.LinearOperatorScaledIdentity(3, np.float32([2.0, -0.5])), True),
    (lambda linalg: linalg.LinearOperatorZeros(3), False),
    (lambda linalg: linalg.LinearOperatorZeros(2, num_columns=3, is_square=False,
                                               is_self_adjoint=False), False),
    (lambda linalg: linalg.LinearOperatorLowerTriangular(A3 + 3 * np.eye(3, dtype=np.float32)),
     True),
    (lambda linalg: linalg.LinearOperatorLowerTriangular(BATCH3 + 3 * np.eye(3,
                                                                            dtype=np.float32)),
     True),
    (lambda linalg: linalg.LinearOperatorComposition(
        [linalg.LinearOperatorDiag(D3), linalg.LinearOperatorLowerTriangular(A3 + 4 * np.eye(
            3, dtype=np.float32))]), True),
    (lambda linalg: linalg.LinearOperatorComposition(
        [linalg.LinearOperatorFullMatrix(A3), linalg.LinearOperatorFullMatrix(A3.T.copy())]),
     False),
    (lambda linalg: linalg.LinearOperatorAdjoint(linalg.LinearOperatorFullMatrix(A3)), False),
    (lambda linalg: linalg.LinearOperatorAdjoint(linalg.LinearOperatorDiag(D3)), True),
    (lambda linalg: linalg.LinearOperatorBlockDiag(
        [linalg.LinearOperatorDiag(D3[:1]), linalg.LinearOperatorFullMatrix(A2)]), False),
    (lambda linalg: linalg.LinearOperatorBlockDiag(
        [linalg.LinearOperatorDiag(D3[:2]), linalg.LinearOperatorIdentity(1)]), True),
    (lambda linalg: linalg.LinearOperatorBlockLowerTriangular(
        [[linalg.LinearOperatorDiag(D3[:1])],
         [linalg.LinearOperatorFullMatrix(A2[:, :1].copy()),
          linalg.LinearOperatorFullMatrix(A2)]]), False),
    (lambda linalg: linalg.LinearOperatorBlockLowerTriangular(
        [[linalg.LinearOperatorFullMatrix(A2)]]), False),
    (lambda linalg: linalg.LinearOperatorKronecker(
        [linalg.LinearOperatorDiag(D3[:2]), linalg.LinearOperatorFullMatrix(A2)]), False),
    (lambda linalg: linalg.LinearOperatorKronecker(
        [linalg.LinearOperatorFullMatrix(A2), linalg.LinearOperatorIdentity(2)]), False),
    (lambda linalg: linalg.LinearOperatorPermutation([2, 0, 1]), True),
    (lambda linalg: linalg.LinearOperatorPermutation([1, 0, 2]), True),
    (lambda linalg: linalg.LinearOperatorHouseholder(V3), True),
    (lambda linalg: linalg.LinearOperatorHouseholder(V23), True),
    (lambda linalg: linalg.LinearOperatorToeplitz(col=V3, row=D3), False),
    (lambda linalg: linalg.LinearOperatorToeplitz(col=D23, row=D23[::-1].copy()), False),
    (lambda linalg: linalg.LinearOperatorTridiag(T33), False),
    (lambda linalg: linalg.LinearOperatorTridiag([V3, D3, V3], diagonals_format="sequence"),
     False),
    (lambda linalg: linalg.LinearOperatorLowRankUpdate(linalg.LinearOperatorDiag(D3), U31),
     False),
    (lambda linalg: linalg.LinearOperatorLowRankUpdate(
        linalg.LinearOperatorFullMatrix(A3), U31, diag_update=np.float32([2.0]),
        v=V3[:, None].copy()), False),
    (lambda linalg: linalg.LinearOperatorInversion(linalg.LinearOperatorDiag(D3)), True),
    (lambda linalg: linalg.LinearOperatorInversion(linalg.LinearOperatorLowerTriangular(
        A3 + 4 * np.eye(3, dtype=np.float32))), True),
]


@pytest.mark.parametrize("build, structured", OPERATORS,
                         ids=[f"operator-{i}" for i in range(len(OPERATORS))])
def test_linear_operators_match_tensorflow(build, structured):
    theirs, ours = build(tf.linalg), build(gt.linalg)
    assert isinstance(theirs, tf.linalg.LinearOperator)
    assert isinstance(ours, gt.linalg.LinearOperator)
    assert ours.shape == tuple(theirs.shape)
    assert ours.batch_shape == tuple(theirs.batch_shape)
    assert (ours.domain_dimension, ours.range_dimension) == (theirs.domain_dimension,
                                                            theirs.range_dimension)
    shape = tuple(theirs.shape)
    rhs = RNG.normal(size=shape[:-2] + (shape[-1], 2)).astype(np.float32)
    vec = RNG.normal(size=shape[:-2] + (shape[-1],)).astype(np.float32)
    pairs = [(ours.to_dense(), theirs.to_dense()), (ours.matmul(rhs), theirs.matmul(rhs)),
             (ours.matvec(vec), theirs.matvec(vec)), (ours.diag_part(), theirs.diag_part()),
             (ours.trace(), theirs.trace()), (ours.adjoint().to_dense(),
                                              theirs.adjoint().to_dense()),
             (ours.add_to_tensor(np.ones(theirs.shape, np.float32)),
              theirs.add_to_tensor(np.ones(theirs.shape, np.float32))),
             (ours.matmul(rhs.swapaxes(-1, -2).copy(), adjoint_arg=True),
              theirs.matmul(rhs.swapaxes(-1, -2).copy(), adjoint_arg=True))]
    if structured:
        pairs += [(ours.determinant(), theirs.determinant()),
                  (ours.log_abs_determinant(), theirs.log_abs_determinant()),
                  (ours.solve(rhs), theirs.solve(rhs)),
                  (ours.solve(rhs, adjoint=True), theirs.solve(rhs, adjoint=True)),
                  (ours.solvevec(vec), theirs.solvevec(vec))]
    elif not isinstance(ours, gt.linalg.LinearOperatorZeros):
        with pytest.raises(NotImplementedError, match="decomposition"):
            ours.solve(rhs)
    for a, b in pairs:
        assert tuple(a.shape) == tuple(b.shape)
        np.testing.assert_allclose(as_array(a), as_array(b), rtol=1e-4, atol=1e-5)


def test_linear_operator_gradients_and_composition_by_matmul():
    for theirs_build, ours_build in (
            (lambda d: tf.linalg.LinearOperatorDiag(d), lambda d: gt.linalg.LinearOperatorDiag(d)),
            (lambda c: tf.linalg.LinearOperatorToeplitz(c, D3),
             lambda c: gt.linalg.LinearOperatorToeplitz(c, D3)),
            (lambda v: tf.linalg.LinearOperatorHouseholder(v),
             lambda v: gt.linalg.LinearOperatorHouseholder(v))):
        rhs = RNG.normal(size=(3, 2)).astype(np.float32)
        assert_gradient_matches(lambda p: theirs_build(p).matmul(rhs),
                                lambda p: ours_build(p).matmul(rhs), (D3,), {}, rtol=1e-4,
                                atol=1e-5)
    composed = gt.linalg.LinearOperatorDiag(D3).matmul(gt.linalg.LinearOperatorFullMatrix(A3))
    assert isinstance(composed, gt.linalg.LinearOperatorComposition)
    np.testing.assert_allclose(as_array(composed.to_dense()),
                               tf.linalg.LinearOperatorDiag(D3).matmul(
                                   tf.linalg.LinearOperatorFullMatrix(A3)).to_dense().numpy(),
                               rtol=1e-6)
