"""A Python ``keras.layers.Layer`` subclass that holds other layers in its attributes (the Keras
guides' ``MLPBlock``, a residual block): its held layers' weights train with ``fit`` and a
GradientTape, appear in ``weights``/``trainable_weights`` in Keras's order, their losses join
``layer.losses`` and fit's loss, and a ``.weights.h5`` file moves between gpuaccel and Keras.
Each case is compared with real Keras 3 on the same weights and data."""
import numpy as np
import pytest

import gpuaccel as tf
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

X = np.random.default_rng(1).normal(size=(12, 3)).astype(np.float32)
Y = np.random.default_rng(2).normal(size=(12, 2)).astype(np.float32)


def block_class(lib):
    """Own weight, a Dense, a list holding a BatchNormalization and a Dense with an L2
    penalty, and a held layer that is frozen."""

    class Block(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.first = lib.layers.Dense(4, activation="tanh")
            self.parts = [lib.layers.BatchNormalization(),
                          lib.layers.Dense(2, kernel_regularizer=lib.regularizers.l2(0.05))]
            self.frozen = lib.layers.Dense(2)
            self.frozen.trainable = False

        def build(self, input_shape):
            self.scale = self.add_weight(shape=(2,), initializer="ones", name="scale")

        def call(self, x, training=None):
            h = self.parts[0](self.first(x), training=training)
            return self.parts[1](h) * self.scale + self.frozen(h[:, :4] * 0.5)

    return Block


def twin_models():
    models = []
    for lib in (keras, gk):
        models.append(lib.Sequential([lib.Input((3,)), block_class(lib)(name="block"),
                                      lib.layers.Dense(2, name="head")]))
    theirs, ours = models
    rng = np.random.default_rng(3)
    weights = [rng.uniform(0.1, 0.4, size=w.shape).astype(np.float32)
               for w in theirs.get_weights()]  # BatchNormalization's variance stays positive
    theirs.set_weights(weights)
    ours.set_weights(weights)
    return theirs, ours


def test_weights_follow_keras_order_and_identity():
    theirs, ours = twin_models()
    their_block, our_block = theirs.get_layer("block"), ours.get_layer("block")
    assert [tuple(w.shape) for w in our_block.weights] == \
        [tuple(w.shape) for w in their_block.weights]
    assert [w.name for w in our_block.weights] == [w.name for w in their_block.weights]
    assert [tuple(w.shape) for w in our_block.trainable_weights] == \
        [tuple(w.shape) for w in their_block.trainable_weights]
    assert len(our_block.non_trainable_weights) == len(their_block.non_trainable_weights)
    # the same objects as the held layers hand out (list equality and `in` use identity)
    assert our_block.weights[1] is our_block.first.kernel
    assert any(w is our_block.first.kernel for w in ours.trainable_weights)
    assert our_block.weights[:2] == [our_block.scale, our_block.first.kernel]
    np.testing.assert_allclose(ours.predict(X, verbose=0), theirs.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_held_layers_losses_join_the_layers_losses():
    theirs, ours = twin_models()
    theirs(X)
    ours(X)
    their_losses = theirs.get_layer("block").losses
    our_losses = ours.get_layer("block").losses
    assert len(our_losses) == len(their_losses) == 1
    np.testing.assert_allclose(float(our_losses[0]), float(their_losses[0]), rtol=1e-5)


def test_fit_trains_the_held_layers_as_keras():
    theirs, ours = twin_models()
    for model, lib in ((theirs, keras), (ours, gk)):
        model.compile(optimizer=lib.optimizers.SGD(0.02), loss="mse")
    frozen_before = ours.get_layer("block").frozen.kernel.numpy().copy()
    h_theirs = theirs.fit(X, Y, epochs=3, batch_size=4, shuffle=False, verbose=0)
    h_ours = ours.fit(X, Y, epochs=3, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    assert h_ours.history["loss"][-1] < h_ours.history["loss"][0]
    for mine, want in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(mine, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(ours.get_layer("block").frozen.kernel.numpy(), frozen_before)


def test_gradient_tape_reaches_the_held_layers():
    theirs, ours = twin_models()
    import tensorflow as real_tf
    with real_tf.GradientTape() as tape:
        loss = real_tf.reduce_mean((theirs(X, training=True) - Y) ** 2)
    want = tape.gradient(loss, theirs.trainable_weights)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((ours(X, training=True) - Y) ** 2)
    got = tape.gradient(loss, ours.trainable_weights)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-4, atol=1e-5)


def test_weights_files_move_both_ways_with_keras(tmp_path):
    theirs, ours = twin_models()
    expected = theirs.predict(X, verbose=0)
    ours_path, theirs_path = str(tmp_path / "g.weights.h5"), str(tmp_path / "k.weights.h5")
    ours.save_weights(ours_path)
    theirs.save_weights(theirs_path)
    fresh_keras, fresh_ours = [lib.Sequential([lib.Input((3,)), block_class(lib)(name="block"),
                                               lib.layers.Dense(2, name="head")])
                               for lib in (keras, gk)]
    fresh_keras.load_weights(ours_path)
    fresh_ours.load_weights(theirs_path)
    np.testing.assert_allclose(fresh_keras.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fresh_ours.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)
