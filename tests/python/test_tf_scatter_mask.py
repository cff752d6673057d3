"""tf.scatter_nd, tf.boolean_mask, keras.ops.scatter and keras.ops.scatter_update against the
real TensorFlow and Keras: values, dtypes, gradients (GradientTape) and the errors."""
import numpy as np
import pytest
import tensorflow as tf_real
import keras

import gpuaccel as tf
from gpuaccel.keras import ops as gops

INDICES = np.array([[1], [3], [1], [0]], np.int32)
UPDATES = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [-1.0, 0.5]], np.float32)
POINT_INDICES = np.array([[0, 1], [2, 2], [0, 1]], np.int64)
X = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 7.0
MASK2 = np.array([[True, False, True], [False, False, True]])


def _tape_grad(module, fn, value):
    """fn(v) and the gradient of sum(fn(v) * a fixed non-uniform weight) with respect to v."""
    v = module.Variable(value)
    with module.GradientTape() as tape:
        out = fn(v)
        shape = tuple(int(d) for d in out.shape)
        weight = np.cos(np.arange(int(np.prod(shape))) * 0.7).reshape(shape).astype(np.float32)
        loss = module.reduce_sum(out * weight)
    return module.stop_gradient(out).numpy(), tape.gradient(loss, v).numpy()


@pytest.mark.parametrize("indices, shape", [(INDICES, [5, 2]), (POINT_INDICES, [3, 3])],
                         ids=["rows", "points"])
def test_scatter_nd_sums_repeats_as_tensorflow(indices, shape):
    updates = UPDATES if indices is INDICES else UPDATES[:3, 0].copy()
    want, want_grad = _tape_grad(tf_real, lambda u: tf_real.scatter_nd(indices, u, shape), updates)
    got, got_grad = _tape_grad(tf, lambda u: tf.scatter_nd(indices, u, shape), updates)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)
    ints = tf.scatter_nd(tf.constant(indices), tf.constant(updates.astype(np.int32)),
                         tf.constant(shape))
    assert ints._dtype_name == "int32"
    np.testing.assert_array_equal(
        ints.numpy(), tf_real.scatter_nd(indices, updates.astype(np.int32), shape).numpy())


def test_scatter_nd_refuses_an_index_outside_the_shape():
    with pytest.raises(tf_real.errors.InvalidArgumentError, match=r"indices\[1\] = \[3\] does "
                                                                  r"not index into shape \[3,2\]"):
        tf_real.scatter_nd(INDICES, UPDATES, [3, 2])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"indices\[1\] = \[3\] does not "
                                                             r"index into shape \[3, 2\]"):
        tf.scatter_nd(INDICES, UPDATES, [3, 2])


@pytest.mark.parametrize("mask, axis", [(MASK2, None), (np.array([True, False]), None),
                                        (np.array([False, True, True]), 1),
                                        (np.array([True, False, True, True]), 2)],
                         ids=["2d", "1d", "axis1", "last"])
def test_boolean_mask_matches_tensorflow_with_gradient(mask, axis):
    want, want_grad = _tape_grad(tf_real, lambda v: tf_real.boolean_mask(v, mask, axis=axis), X)
    got, got_grad = _tape_grad(tf, lambda v: tf.boolean_mask(v, mask, axis=axis), X)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6)
    np.testing.assert_allclose(got_grad, want_grad, rtol=1e-6)


def test_boolean_mask_of_nothing_is_empty():
    want = tf_real.boolean_mask(X, np.zeros((2, 3), bool))
    got = tf.boolean_mask(tf.constant(X), np.zeros((2, 3), bool))
    assert tuple(got.shape) == tuple(want.shape) == (0, 4)


def test_boolean_mask_errors():
    with pytest.raises(ValueError, match="incompatible"):
        tf_real.boolean_mask(X, np.array([True, False, True]))
    with pytest.raises(ValueError, match="incompatible"):
        tf.boolean_mask(tf.constant(X), np.array([True, False, True]))
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(tf.constant(X), np.array(True))


def test_keras_scatter_and_scatter_update_match_keras():
    np.testing.assert_allclose(gops.scatter(INDICES, UPDATES, (5, 2)).numpy(),
                               keras.ops.convert_to_numpy(keras.ops.scatter(INDICES, UPDATES,
                                                                            (5, 2))))
    base = np.full((5, 2), 2.0, np.float32)
    unique_rows = INDICES[[0, 1, 3]]
    for reduction in (None, "add", "max", "min"):
        want = keras.ops.scatter_update(base, unique_rows, UPDATES[:3], reduction=reduction)
        got = gops.scatter_update(base, unique_rows, UPDATES[:3], reduction=reduction)
        np.testing.assert_allclose(got.numpy(), keras.ops.convert_to_numpy(want))
    with pytest.raises(ValueError, match="Unsupported reduction: mean"):
        gops.scatter_update(base, unique_rows, UPDATES[:3], reduction="mean")
