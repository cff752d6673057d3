"""``keras.ops.nn``, ``keras.ops.numpy`` and ``keras.ops.linalg`` against real Keras 3: every
name Keras files under a group is there as the same function as keras.ops's (or, where
gpuaccel lacks it, raises keras.ops's AttributeError), names outside the group are absent as in
Keras, and calls through the groups give Keras's values."""
import keras
import numpy as np
import pytest

from gpuaccel import keras as gk

RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 4)).astype(np.float32)
SQUARE = (RNG.standard_normal((3, 3)) + 3 * np.eye(3)).astype(np.float32)


@pytest.mark.parametrize("group", ["nn", "numpy", "linalg"])
def test_each_group_is_keras_ops_names_as_keras_files_them(group):
    ours, theirs = getattr(gk.ops, group), getattr(keras.ops, group)
    names = [n for n in dir(theirs) if not n.startswith("_")]
    present = 0
    for name in names:
        if hasattr(gk.ops, name):
            assert getattr(ours, name) is getattr(gk.ops, name), name
            present += 1
        else:
            with pytest.raises(AttributeError, match=name):
                getattr(ours, name)
    assert present >= 0.7 * len(names)  # linalg: 12 of 16 (eig, lu_factor... are refused)
    assert sorted(dir(ours)) == sorted(n for n in names if hasattr(gk.ops, n))
    outside = "matmul" if group != "numpy" else "softmax"  # a keras.ops name of another group
    assert hasattr(gk.ops, outside) and not hasattr(theirs, outside)
    with pytest.raises(AttributeError, match=outside):
        getattr(ours, outside)


def test_calls_through_the_groups_match_keras():
    np.testing.assert_allclose(np.asarray(gk.ops.nn.softmax(X, axis=-1)),
                               np.asarray(keras.ops.nn.softmax(X, axis=-1)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gk.ops.nn.gelu(X)), np.asarray(keras.ops.nn.gelu(X)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gk.ops.numpy.matmul(X.T, X)),
                               np.asarray(keras.ops.numpy.matmul(X.T, X)), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(gk.ops.numpy.cumsum(X, axis=1)),
                               np.asarray(keras.ops.numpy.cumsum(X, axis=1)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gk.ops.linalg.det(SQUARE)),
                               np.asarray(keras.ops.linalg.det(SQUARE)), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gk.ops.linalg.norm(X)),
                               np.asarray(keras.ops.linalg.norm(X)), rtol=1e-6)
