"""Python layers whose ``call`` takes arguments beyond ``training``/``mask``, passed as Keras 3
passes them: a tensor positionally or by keyword, numbers and flags by keyword. Compared with
real Keras on the same weights and data: eager calls, a functional model (predict, fit,
gradients), .keras archives both ways, and Keras's error for a value passed positionally."""
import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

A = np.random.default_rng(21).normal(size=(8, 3)).astype(np.float32)
G = np.random.default_rng(22).normal(size=(8, 3)).astype(np.float32)
Y = np.random.default_rng(23).normal(size=(8, 2)).astype(np.float32)


def scale_class(lib, ops):
    class Scale(lib.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

        def call(self, x, gate=None, factor=1.0, squash=False, training=None):
            y = x * self.w * factor
            if gate is not None:
                y = y * ops.sigmoid(gate)
            return ops.tanh(y) if squash else y

    return Scale


def model(lib, ops):
    Scale = scale_class(lib, ops)
    a, g = lib.Input((3,)), lib.Input((3,))
    first = Scale(name="s1")(a, gate=g, factor=2.0, squash=True)
    second = Scale(name="s2")(first, g, factor=0.5)  # the tensor positionally
    return lib.Model([a, g], lib.layers.Dense(2, name="d")(second))


def twins():
    theirs, ours = model(keras, keras.ops), model(gk, gk.ops)
    rng = np.random.default_rng(24)
    weights = [rng.normal(size=w.shape).astype(np.float32) for w in theirs.get_weights()]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    return ours, theirs


def test_eager_calls_with_extra_arguments_match_keras():
    ours, theirs = scale_class(gk, gk.ops)(), scale_class(keras, keras.ops)()
    theirs(A)
    ours(A)
    w = np.linspace(0.5, 1.5, 3).astype(np.float32)
    ours.set_weights([w])
    theirs.set_weights([w])
    for kwargs in ({}, {"factor": 3.0}, {"factor": 3.0, "squash": True}, {"gate": G}):
        np.testing.assert_allclose(ours(A, **kwargs).numpy(), np.asarray(theirs(A, **kwargs)),
                                   rtol=1e-5, atol=1e-6, err_msg=str(sorted(kwargs)))
    # each set of values runs a trace of its own: the first one is not replayed for the others
    assert not np.allclose(ours(A, factor=3.0).numpy(), ours(A, factor=4.0).numpy())
    with pytest.raises(ValueError, match="Only input tensors may be passed as positional"):
        ours(A, G, 2.0)
    with pytest.raises(ValueError, match="Only input tensors may be passed as positional"):
        theirs(A, G, 2.0)


def test_functional_model_with_extra_arguments_trains_and_saves_as_keras(tmp_path):
    import tensorflow as tf
    ours, theirs = twins()
    np.testing.assert_allclose(ours.predict([A, G], verbose=0), theirs.predict([A, G], verbose=0),
                               rtol=1e-5, atol=1e-6)
    with gt.GradientTape() as tape:
        loss = gt.reduce_mean(gt.square(ours([A, G]) - Y))
    grads = tape.gradient(loss, ours.trainable_weights)
    with tf.GradientTape() as tf_tape:
        tf_loss = tf.reduce_mean(tf.square(theirs([A, G]) - Y))
    for g, e in zip(grads, tf_tape.gradient(tf_loss, theirs.trainable_weights)):
        np.testing.assert_allclose(g.numpy(), e.numpy(), rtol=1e-4, atol=1e-6)
    for m, lib in ((ours, gk), (theirs, keras)):
        m.compile(optimizer=lib.optimizers.SGD(0.1), loss="mse")
    h_ours = ours.fit([A, G], Y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    h_theirs = theirs.fit([A, G], Y, epochs=2, batch_size=4, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    for name in ("s1", "s2"):  # the calls with their arguments replayed their traces
        variants = ours.get_layer(name)._call_variants.values()
        assert [cpp.eager_reason for cpp in variants] == [""]
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    expected = theirs.predict([A, G], verbose=0)
    ours_path, theirs_path = str(tmp_path / "g.keras"), str(tmp_path / "k.keras")
    ours.save(ours_path)
    theirs.save(theirs_path)
    loaded = [keras.models.load_model(ours_path, custom_objects={
        "Scale": scale_class(keras, keras.ops)})] + [
        gk.models.load_model(path, custom_objects={"Scale": scale_class(gk, gk.ops)})
        for path in (ours_path, theirs_path)]
    for m in loaded:
        np.testing.assert_allclose(m.predict([A, G], verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_one_layer_called_with_different_values_in_one_model_is_refused():
    Scale = scale_class(gk, gk.ops)
    a = gk.Input((3,))
    shared = Scale()
    with pytest.raises(NotImplementedError, match="different non-tensor arguments"):
        gk.Model(a, shared(shared(a, factor=2.0), factor=3.0))
