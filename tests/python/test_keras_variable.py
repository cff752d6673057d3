"""``keras.Variable`` against real Keras 3: made from a value or an initializer and a shape,
with Keras's attributes; assigned to a layer's attribute it is the layer's weight (tracked in
assignment order with add_weight's, trained by ``fit``, saved in ``.weights.h5``), as the
keras-io examples use it (PatchConvNet's class token, Swin's non-trainable index)."""
import keras
import numpy as np
import pytest

from gpuaccel import keras as gk

RNG = np.random.default_rng(8)
D = 4
TOKEN = RNG.standard_normal((1, 1, D)).astype(np.float32)
ORDER = np.array([4, 0, 3, 1, 2, 5], np.int32)  # a permutation of the 6 positions
X = RNG.standard_normal((64, 5, D)).astype(np.float32)
Y = RNG.standard_normal((64, 1)).astype(np.float32)


def token_model(lib):
    class ClassToken(lib.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.cls = lib.Variable(TOKEN)  # trainable, from a value
            self.scale = self.add_weight(shape=(D,), initializer="ones", name="scale")
            self.order = lib.Variable(initializer=ORDER, trainable=False, dtype="int32")

        def call(self, x):
            token = lib.ops.broadcast_to(self.cls, (lib.ops.shape(x)[0], 1, D))
            joined = lib.ops.concatenate([token, x], axis=1) * self.scale
            return lib.ops.take(joined, self.order, axis=1)

    inputs = lib.Input((5, D))
    hidden = lib.layers.Flatten()(ClassToken(name="class_token")(inputs))
    model = lib.Model(inputs, lib.layers.Dense(1)(hidden))
    kernel = np.linspace(-0.5, 0.5, 6 * D, dtype=np.float32).reshape(6 * D, 1)
    model.layers[-1].set_weights([kernel, np.zeros(1, np.float32)])
    return model


def test_variables_are_the_layers_weights_in_keras_order():
    ours, theirs = token_model(gk), token_model(keras)
    layer_ours, layer_theirs = ours.get_layer("class_token"), theirs.get_layer("class_token")
    assert [tuple(w.shape) for w in layer_ours.weights] == \
        [tuple(w.shape) for w in layer_theirs.weights] == [(1, 1, D), (D,), (6,)]
    assert [w.trainable for w in layer_ours.weights] == [w.trainable for w in layer_theirs.weights]
    assert len(layer_ours.trainable_weights) == len(layer_theirs.trainable_weights) == 2
    assert layer_ours.cls is layer_ours.weights[0] and layer_ours.order is layer_ours.weights[2]
    np.testing.assert_allclose(ours.predict(X, verbose=0), theirs.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_fit_trains_a_variable_as_keras():
    ours, theirs = token_model(gk), token_model(keras)
    histories = []
    for model in (ours, theirs):
        model.compile(optimizer="sgd", loss="mse")
        histories.append(model.fit(X, Y, batch_size=16, epochs=3, shuffle=False,
                                   verbose=0).history["loss"])
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ours.get_layer("class_token").cls), np.asarray(theirs.get_layer("class_token").cls),
                               rtol=1e-5, atol=1e-7)
    assert not np.allclose(np.asarray(ours.get_layer("class_token").cls), TOKEN)  # it did train
    np.testing.assert_array_equal(np.asarray(ours.get_layer("class_token").order), ORDER)  # not trainable


def test_weights_file_round_trips_with_keras(tmp_path):
    ours, theirs = token_model(gk), token_model(keras)
    ours.get_layer("class_token").cls.assign(np.full((1, 1, D), 0.25, np.float32))
    path = str(tmp_path / "token.weights.h5")
    ours.save_weights(path)
    theirs.load_weights(path)
    np.testing.assert_allclose(np.asarray(theirs.get_layer("class_token").cls), 0.25)
    np.testing.assert_allclose(ours.predict(X, verbose=0), theirs.predict(X, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_a_variable_alone_has_keras_attributes_and_errors():
    ours = gk.Variable(initializer="ones", shape=(2, 3), trainable=False, name="counts")
    theirs = keras.Variable(initializer="ones", shape=(2, 3), trainable=False, name="counts")
    assert (ours.name, tuple(ours.shape), ours.trainable) == \
        (theirs.name, tuple(theirs.shape), theirs.trainable)
    np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))
    ours.assign_add(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(np.asarray(ours), 2.0)
    source = np.zeros(3, np.float32)
    copied = gk.Variable(source)
    copied.assign([1.0, 2.0, 3.0])
    assert source.tolist() == [0.0, 0.0, 0.0]  # the variable holds its own copy, as Keras
    with pytest.raises(ValueError, match="shape"):
        gk.Variable(initializer="zeros")
    with pytest.raises(ValueError, match="shape"):
        keras.Variable(initializer="zeros")
