"""A subclassed keras.Model whose ``call`` uses tensor ops (one traced C++ layer) used as a layer
of another model: in a Sequential, called in a functional model, and held by another subclassed
model. Compared with real Keras 3 on the same weights and data: predict, a few SGD steps of
``fit``, evaluate, a GradientTape step, and ``.weights.h5`` files both ways."""
import h5py
import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

X = np.random.default_rng(0).normal(size=(24, 5)).astype(np.float32)
Y = np.random.default_rng(1).normal(size=(24, 2)).astype(np.float32)


def inner_model(lib, relu):
    """TF's expert-quickstart style: layers held by attributes, tensor ops between them."""

    class Inner(lib.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.d1 = lib.layers.Dense(6, activation="tanh")
            self.d2 = lib.layers.Dense(3)

        def call(self, x, training=None):
            h = self.d1(x)
            return self.d2(h * 0.5 + relu(h))

    return Inner()


def nesting(lib, relu, kind):
    """A model of ``kind`` holding an ``Inner`` model, written against ``lib``."""
    inner = inner_model(lib, relu)
    if kind == "sequential":
        return lib.Sequential([lib.Input((5,)), inner, lib.layers.Dense(2)])
    if kind == "functional":
        inputs = lib.Input((5,))
        return lib.Model(inputs, lib.layers.Dense(2)(inner(lib.layers.Dense(5)(inputs))))

    class Outer(lib.Model):  # a subclassed model with tensor ops of its own
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.inner = inner
            self.head = lib.layers.Dense(2)

        def call(self, x, training=None):
            return self.head(relu(self.inner(x)) - 0.25)

    outer = Outer()
    outer(X[:1])
    return outer


def twins(kind):
    theirs = nesting(keras, keras.ops.relu, kind)
    ours = nesting(gk, gt.nn.relu, kind)
    ours.set_weights(theirs.get_weights())
    return ours, theirs


def datasets(path):
    """The weight datasets of a .weights.h5 file (not Keras's optimizer state, which
    gpuaccel does not write)."""
    found = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset)
                     and not name.startswith("optimizer/") else None)
    return sorted(found)


@pytest.mark.parametrize("kind", ["sequential", "functional", "subclassed"])
def test_traced_subclassed_model_nested_trains_as_keras(kind, tmp_path):
    ours, theirs = twins(kind)
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]
    np.testing.assert_allclose(ours.predict(X, verbose=0), theirs.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse")
    h_ours = ours.fit(X, Y, epochs=2, batch_size=8, shuffle=False, verbose=0)
    h_theirs = theirs.fit(X, Y, epochs=2, batch_size=8, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    # Keras lists the inner model as one layer; its call was traced, not run eagerly
    inner = next(layer for layer in ours.layers if type(layer).__name__ == "Inner") \
        if kind != "subclassed" else ours.inner
    assert inner._call_layer_cpp.eager_reason == ""
    if kind == "subclassed":
        assert ours._call_layer_cpp.eager_reason == ""
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours.evaluate(X, Y, verbose=0), theirs.evaluate(X, Y, verbose=0),
                               rtol=1e-4)
    # Keras's layout both ways: Keras reads our file, we read Keras's
    theirs_path, ours_path = str(tmp_path / "k.weights.h5"), str(tmp_path / "g.weights.h5")
    ours.save_weights(ours_path)
    theirs.save_weights(theirs_path)
    assert datasets(ours_path) == datasets(theirs_path)
    again, fresh = nesting(keras, keras.ops.relu, kind), nesting(gk, gt.nn.relu, kind)
    again.load_weights(ours_path)
    fresh.load_weights(theirs_path)
    expected = theirs.predict(X, verbose=0)
    np.testing.assert_allclose(again.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fresh.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["sequential", "subclassed"])
def test_gradient_tape_through_a_nested_traced_model_matches_keras(kind):
    import tensorflow as tf
    ours, theirs = twins(kind)
    with gt.GradientTape() as tape:
        loss = gt.reduce_mean(gt.square(ours(X, training=True) - Y))
    grads = tape.gradient(loss, ours.trainable_weights)
    with tf.GradientTape() as tf_tape:
        tf_loss = tf.reduce_mean(tf.square(theirs(X, training=True) - Y))
    expected = tf_tape.gradient(tf_loss, theirs.trainable_weights)
    assert len(grads) == len(expected) == 6
    for g, e in zip(grads, expected):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-4, atol=1e-6)
