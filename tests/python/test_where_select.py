"""The select kernel (``_C.where``) and what it made exact: tf.where / torch.where /
keras.ops.where, tf.math.multiply_no_nan and keras.ops's nan* family. The branch not taken is
never read, so its inf or NaN reaches neither the result nor the gradients (the arithmetic
where it replaced, mask * x + (1 - mask) * y, gave NaN for 0 * inf)."""
import warnings

import numpy as np
import pytest

import gpuaccel as tf
import gpuaccel.keras as keras
import gpuaccel.torch as torch

INF, NAN = np.inf, np.nan


def test_the_branch_not_taken_never_shows_on_any_face():
    cond = np.array([True, False, False, True])
    x = np.array([1.0, INF, NAN, -INF], np.float32)
    y = np.array([NAN, 2.0, -INF, 4.0], np.float32)
    want = np.where(cond, x, y)
    np.testing.assert_array_equal(tf.where(cond, x, y).numpy(), want)
    np.testing.assert_array_equal(np.asarray(keras.ops.where(cond, x, y)), want)
    np.testing.assert_array_equal(
        torch.where(torch.tensor(cond), torch.tensor(x), torch.tensor(y)).numpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "int32", "int64", "uint8",
                                   "bool"])
def test_broadcasts_like_numpy_in_every_dtype(dtype):
    rng = np.random.default_rng(3)
    cond = rng.uniform(size=(4, 1, 5)) > 0.4
    x = rng.integers(0, 2 if dtype == "bool" else 50, (3, 1)).astype(np.float32)
    y = rng.integers(0, 2 if dtype == "bool" else 50, (5,)).astype(np.float32)
    ours = tf.where(cond, tf.cast(x, dtype), tf.cast(y, dtype))
    assert ours.dtype.name == dtype and tuple(ours.shape) == (4, 3, 5)
    np.testing.assert_array_equal(tf.cast(ours, "float32").numpy(),
                                  np.where(cond, x, y).astype(np.float32))


def test_gradients_go_to_the_chosen_side_only_and_never_turn_nan():
    cond = np.array([[True, False, True], [False, False, True]])
    x = tf.Variable(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], np.float32))
    y = tf.Variable(np.array([0.5, -1.5, 2.5], np.float32))  # broadcast over the rows
    # The upstream gradient is inf where the condition is false: x's gradient must still be 0
    # there (where(cond, g, 0), not cond * g = 0 * inf = NaN).
    weight = np.where(cond, 2.0, INF).astype(np.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.where(cond, x, y) * tf.where(cond, weight, 1.0))
    dx, dy = tape.gradient(loss, [x, y])
    np.testing.assert_array_equal(dx.numpy(), np.where(cond, 2.0, 0.0))
    np.testing.assert_array_equal(dy.numpy(), (~cond).sum(0).astype(np.float32))
    # A NaN input on the side not taken gets a zero gradient, and the other side a clean one.
    a = torch.tensor([NAN, 1.0, 2.0], requires_grad=True)
    b = torch.tensor([3.0, INF, 4.0], requires_grad=True)
    out = torch.where(torch.tensor([False, True, True]), a, b)
    (out * torch.tensor([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(out.detach().numpy(), [3.0, 1.0, 2.0])
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 2.0, 3.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 0.0, 0.0])


def test_multiply_no_nan_is_zero_where_y_is_zero():
    x = np.array([INF, NAN, 2.0, -INF], np.float32)
    y = np.array([0.0, 0.0, 3.0, -0.0], np.float32)
    np.testing.assert_array_equal(tf.math.multiply_no_nan(x, y).numpy(), [0.0, 0.0, 6.0, 0.0])
    v = tf.Variable(np.array([5.0, 7.0], np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.multiply_no_nan(v, np.array([0.0, 4.0], np.float32)))
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), [0.0, 4.0])


def test_divide_no_nan_is_zero_where_y_is_zero_even_for_inf_and_nan():
    """TF's divide_no_nan: 0 where y is 0 whatever x is (the arithmetic blend gave inf * 0)."""
    x = np.array([INF, NAN, 1.0, 0.0, -INF], np.float32)
    y = np.array([0.0, 0.0, 0.0, 2.0, 4.0], np.float32)
    np.testing.assert_array_equal(tf.math.divide_no_nan(x, y).numpy(), [0.0, 0.0, 0.0, 0.0, -INF])
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.divide_no_nan(v, y))
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), [0.0, 0.0, 0.0, 0.5, 0.25])
    np.testing.assert_array_equal(tf.math.reciprocal_no_nan(np.array([0.0, 4.0], np.float32))
                                  .numpy(), [0.0, 0.25])


def test_index_fill_and_index_copy_replace_rows_holding_inf():
    x = torch.tensor([[INF, 1.0], [2.0, NAN], [3.0, 4.0]])
    np.testing.assert_array_equal(x.index_fill(0, torch.tensor([0, 1]), -1.0).numpy(),
                                  [[-1.0, -1.0], [-1.0, -1.0], [3.0, 4.0]])
    np.testing.assert_array_equal(
        x.index_copy(0, torch.tensor([1, 0]), torch.tensor([[5.0, 6.0], [7.0, 8.0]])).numpy(),
        [[7.0, 8.0], [5.0, 6.0], [3.0, 4.0]])


ROWS = np.array([[NAN, NAN, NAN], [1.0, NAN, 3.0], [INF, -2.0, NAN], [0.5, -1.0, 2.0]],
                np.float32)
# Each expression runs with keras.ops as ``ops`` and with gpuaccel's face as ``ops``.
KERAS_NAN = [
    "ops.nansum(x, axis=1)", "ops.nansum(x, axis=0, keepdims=True)", "ops.nansum(x)",
    "ops.nanmean(x, axis=1)", "ops.nanmean(x, axis=0, keepdims=True)", "ops.nanmean(x)",
    "ops.nanmax(x, axis=1)", "ops.nanmax(x, axis=0, keepdims=True)", "ops.nanmax(x)",
    "ops.nanmin(x, axis=1)", "ops.nanmin(x, axis=0, keepdims=True)", "ops.nanmin(x)",
    "ops.nanprod(x, axis=1)", "ops.nanprod(x, axis=0, keepdims=True)", "ops.nanprod(x)",
    "ops.nanstd(x, axis=1)", "ops.nanstd(x, axis=0, keepdims=True)", "ops.nanstd(x)",
    "ops.nanvar(x, axis=1)", "ops.nanvar(x, axis=0, keepdims=True)", "ops.nanvar(x)",
    "ops.nanargmax(x, axis=1)", "ops.nanargmax(x, axis=0, keepdims=True)", "ops.nanargmax(x)",
    "ops.nanargmin(x, axis=1)", "ops.nanargmin(x, axis=0, keepdims=True)", "ops.nanargmin(x)",
    "ops.nan_to_num(x)", "ops.nan_to_num(x, nan=5.0, posinf=7.0, neginf=-9.0)",
    "ops.nancumsum(x, axis=1)", "ops.nancumprod(x, axis=0)", "ops.nancumsum(x)",
    "ops.nancumprod(x)", "ops.fmax(x, other)", "ops.fmin(x, other)", "ops.fmax(other, x)",
    "ops.fmin(other, x)",
]


@pytest.mark.parametrize("expression", KERAS_NAN)
def test_keras_nan_family_matches_keras(expression):
    real_keras = pytest.importorskip("keras")
    inputs = {"x": ROWS, "other": np.array([NAN, 0.5, 1.0], np.float32)}
    ours = np.asarray(eval(expression, {"ops": keras.ops}, inputs))
    theirs = np.asarray(eval(expression, {"ops": real_keras.ops}, inputs))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype, (ours, theirs)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanmax", "nanmin", "nanprod", "nanstd",
                                  "nanvar"])
def test_keras_nan_reductions_match_numpy(name):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's all-NaN slice warning
        want = getattr(np, name)(ROWS, axis=1)
    np.testing.assert_allclose(np.asarray(getattr(keras.ops, name)(ROWS, axis=1)), want,
                               rtol=1e-6)


def test_nansum_gradient_is_zero_at_the_nans():
    # nansum's gradient: 1 at the numbers, 0 (not NaN) at the NaNs.
    v = tf.Variable(ROWS)
    with tf.GradientTape() as tape:
        loss = keras.ops.nansum(v)
    np.testing.assert_array_equal(tape.gradient(loss, v).numpy(), (~np.isnan(ROWS)).astype(
        np.float32))
