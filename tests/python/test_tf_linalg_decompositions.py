"""tf.linalg's decompositions and keras.ops' linear algebra (host LAPACK forward, gradients in
gpuaccel ops) against TensorFlow 2.21 / Keras 3 in this process: the same expression on seeded,
well-conditioned batched matrices gives TensorFlow's values, dtypes and GradientTape gradients
(TensorFlow's own gradient conventions: eigh's gradient is a lower triangle). Where signs are
arbitrary the expressions take absolute values, whose gradients do not depend on the sign."""
import numpy as np
import pytest
import tensorflow as real_tf
from tensorflow import keras as real_keras

import gpuaccel as ga
from gpuaccel import errors as ga_errors
from gpuaccel import keras as ga_keras

_rng = np.random.default_rng(11)
SQUARE = (_rng.normal(size=(2, 3, 3)) + 3 * np.eye(3)).astype(np.float32)
_half = _rng.normal(size=(2, 3, 3))
SPD = (_half @ np.swapaxes(_half, -1, -2) + np.eye(3)).astype(np.float32)
TALL = (_rng.normal(size=(2, 4, 3)) + np.eye(4, 3) * 2).astype(np.float32)
RHS = _rng.normal(size=(2, 3, 2)).astype(np.float32)
TALL_RHS = _rng.normal(size=(2, 4, 2)).astype(np.float32)
RANK_TWO = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], np.float32)
SINGULAR = np.array([[1, 2], [2, 4]], np.float32)
NOT_PD = np.array([[1, 2], [2, 1]], np.float32)


def _outputs(result):
    return list(result) if isinstance(result, (tuple, list)) else [result]


def _cotangent(shape):
    n = int(np.prod(shape, dtype=np.int64))
    return (np.cos(np.arange(n) * 0.7) + 0.1).reshape(shape).astype(np.float32)


def _array(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t.numpy())


def _run(tf, ops, expr, inputs, grad):
    tensors = {k: tf.constant(v) for k, v in inputs.items()}
    with tf.GradientTape(persistent=True) as tape:
        for k in grad:
            tape.watch(tensors[k])
        outs = _outputs(eval(expr, {"tf": tf, "ops": ops, **tensors}))
        floats = [o for o in outs if np.issubdtype(_array(o).dtype, np.floating)]
        loss = None
        for o in floats:
            term = tf.reduce_sum(o * tf.constant(_cotangent(tuple(o.shape))))
            loss = term if loss is None else loss + term
    values = [_array(o) for o in outs]
    grads = [_array(tape.gradient(loss, tensors[k])) for k in grad]
    return values, grads


def _case(expr, inputs, grad=()):
    return pytest.param(expr, inputs, tuple(grad), id=expr)


CASES = [
    _case("tf.linalg.det(a)", {"a": SQUARE}, "a"),
    _case("tf.linalg.inv(a)", {"a": SQUARE}, "a"),
    _case("tf.linalg.inv(a, adjoint=True)", {"a": SQUARE}, "a"),
    _case("tf.linalg.slogdet(a)", {"a": SQUARE}, "a"),
    _case("tf.linalg.logdet(s)", {"s": SPD}, "s"),
    _case("tf.linalg.cholesky(s)", {"s": SPD}, "s"),
    _case("tf.linalg.solve(a, b)", {"a": SQUARE, "b": RHS}, ("a", "b")),
    _case("tf.linalg.solve(a, b, adjoint=True)", {"a": SQUARE, "b": RHS}, ("a", "b")),
    _case("[tf.abs(m) for m in tf.linalg.qr(t)]", {"t": TALL}, "t"),
    _case("(lambda e, v: (e, tf.abs(v)))(*tf.linalg.eigh(s))", {"s": SPD}, "s"),
    _case("tf.linalg.eigvalsh(s)", {"s": SPD}, "s"),
    _case("(lambda s, u, v: (s, tf.abs(u), tf.abs(v)))(*tf.linalg.svd(t))", {"t": TALL}, "t"),
    _case("tf.linalg.svd(t, compute_uv=False)", {"t": TALL}, "t"),
    _case("tf.linalg.lstsq(t, c)", {"t": TALL, "c": TALL_RHS}, ("t", "c")),
    _case("tf.linalg.pinv(t)", {"t": TALL}, "t"),
    _case("tf.linalg.matrix_rank(r)", {"r": RANK_TWO}),
    _case("tf.linalg.expm(a * 0.3)", {"a": SQUARE}, "a"),
    _case("tf.linalg.expm(a[0] * 2)", {"a": SQUARE}, "a"),
    # single matrices and other variants
    _case("tf.linalg.det(a[0])", {"a": SQUARE}, "a"),
    _case("tf.linalg.slogdet(a[0])", {"a": SQUARE}, "a"),
    _case("tf.linalg.logdet(s[0])", {"s": SPD}, "s"),
    _case("[tf.abs(m) for m in tf.linalg.qr(a)]", {"a": SQUARE}, "a"),
    _case("tf.linalg.eigh(s[0])[0]", {"s": SPD}, "s"),
    _case("tf.linalg.eigvalsh(s[0])", {"s": SPD}, "s"),
    _case("tf.linalg.lstsq(t, c, l2_regularizer=0.5)", {"t": TALL, "c": TALL_RHS}, ("t", "c")),
    _case("tf.linalg.pinv(t[0])", {"t": TALL}, "t"),
    _case("tf.linalg.matrix_rank(t)", {"t": TALL}),
    _case("ops.det(a)", {"a": SQUARE}, "a"),
    _case("ops.inv(a)", {"a": SQUARE}, "a"),
    _case("ops.solve(a, b)", {"a": SQUARE, "b": RHS}, ("a", "b")),
    _case("ops.solve_triangular(s, b, lower=True)", {"s": SPD, "b": RHS}, ("s", "b")),
    _case("ops.cholesky(s)", {"s": SPD}, "s"),
    _case("ops.cholesky(s, upper=True)", {"s": SPD}, "s"),
    _case("[ops.abs(m) for m in ops.qr(t)]", {"t": TALL}, "t"),
    _case("(lambda w, v: (w, ops.abs(v)))(*ops.eigh(s))", {"s": SPD}, "s"),
    _case("(lambda u, s, vh: (ops.abs(u), s, ops.abs(vh)))(*ops.svd(t, full_matrices=False))",
          {"t": TALL}, "t"),
    _case("ops.svd(t, compute_uv=False)", {"t": TALL}, "t"),
    _case("ops.slogdet(a)", {"a": SQUARE}, "a"),
    _case("ops.logdet(s)", {"s": SPD}, "s"),
    _case("ops.lstsq(t[0], c[0])", {"t": TALL, "c": TALL_RHS}, ("t", "c")),
    _case("ops.lstsq(t[0], c[0, :, 0])", {"t": TALL, "c": TALL_RHS}, ("t", "c")),
    _case("ops.pinv(t)", {"t": TALL}, "t"),
    _case("ops.matrix_rank(r)", {"r": RANK_TWO}),
    _case("ops.det(a[0])", {"a": SQUARE}, "a"),
    _case("ops.inv(a[0])", {"a": SQUARE}, "a"),
    _case("ops.solve(a[0], b[0, :, 0])", {"a": SQUARE, "b": RHS}, ("a", "b")),
    _case("ops.solve_triangular(s, b)", {"s": SPD, "b": RHS}, ("s", "b")),
    _case("[ops.abs(m) for m in ops.qr(a)]", {"a": SQUARE}, "a"),
    _case("ops.eigh(s[0])[0]", {"s": SPD}, "s"),
    _case("ops.slogdet(a[0])", {"a": SQUARE}, "a"),
    _case("ops.logdet(s[0])", {"s": SPD}, "s"),
    _case("ops.pinv(t[0])", {"t": TALL}, "t"),
    _case("ops.matrix_rank(t[0])", {"t": TALL}),
]


@pytest.mark.parametrize("expr, inputs, grad", CASES)
def test_matches_tensorflow(expr, inputs, grad):
    ours = _run(ga, ga_keras.ops, expr, inputs, grad)
    theirs = _run(real_tf, real_keras.ops, expr, inputs, grad)
    assert len(ours[0]) == len(theirs[0])
    for mine, reference in zip(ours[0], theirs[0]):
        assert mine.shape == reference.shape and mine.dtype == reference.dtype, (
            mine.shape, mine.dtype, reference.shape, reference.dtype)
        np.testing.assert_allclose(mine, reference, rtol=1e-4, atol=1e-4)
    for name, mine, reference in zip(grad, ours[1], theirs[1]):
        np.testing.assert_allclose(mine, reference, rtol=1e-3, atol=1e-3,
                                   err_msg=f"gradient of {name}")


@pytest.mark.parametrize("expr, value", [("tf.linalg.inv(x)", SINGULAR),
                                         ("tf.linalg.solve(x, x)", SINGULAR),
                                         ("tf.linalg.inv(x)", np.ones((2, 3), np.float32))],
                         ids=["singular", "singular_solve", "not_square"])
def test_errors_are_tensorflows(expr, value):
    with pytest.raises(real_tf.errors.InvalidArgumentError):
        eval(expr, {"tf": real_tf, "x": real_tf.constant(value)})
    with pytest.raises(ga_errors.InvalidArgumentError):
        eval(expr, {"tf": ga, "x": ga.constant(value)})


def test_cholesky_of_a_matrix_not_positive_definite_is_nan_as_in_tensorflow():
    batch = np.stack([SPD[0][:2, :2], NOT_PD])
    theirs = real_tf.linalg.cholesky(real_tf.constant(batch)).numpy()
    ours = ga.linalg.cholesky(ga.constant(batch)).numpy()
    lower = np.tril_indices(2)  # TF leaves the upper triangle of a failed factor unwritten
    assert np.isnan(theirs[1][lower]).all() and np.isnan(ours[1][lower]).all()
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5)


def test_keras_lstsq_refuses_a_batch_as_keras_does():
    with pytest.raises(TypeError, match="two-dimensional"):
        real_keras.ops.lstsq(TALL, TALL_RHS)
    with pytest.raises(TypeError, match="two-dimensional"):
        ga_keras.ops.lstsq(ga.constant(TALL), ga.constant(TALL_RHS))


def test_svd_reconstructs_with_v_not_transposed():
    s, u, v = ga.linalg.svd(ga.constant(TALL))
    rebuilt = ga.linalg.matmul(u * s[..., None, :], v, adjoint_b=True)
    np.testing.assert_allclose(rebuilt.numpy(), TALL, atol=1e-5)
