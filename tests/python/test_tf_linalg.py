"""``gpuaccel.linalg`` against real ``tf.linalg`` on the same seeded inputs: values, shapes and
dtypes, the gradient of sum(output * cotangent) through both tapes, and TF's errors for bad
arguments. Only the names that compose from existing ops are here (no decompositions)."""
import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import (assert_case_matches, assert_forward_matches, assert_gradient_matches,
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
], ids=["transpose-rank", "band-lower", "band-upper", "diag-size", "set_diag-shape",
        "tensor_diag_part-shape", "global_norm-list", "norm-ord", "norm-fro-vector",
        "cross-size"])
def test_bad_arguments_raise_tensorflows_errors(call, error):
    for module in (tf, gt):
        expected = getattr(module.errors, error) if isinstance(error, str) else error
        with pytest.raises(expected):
            call(module)
