"""Python layers whose call returns several tensors beyond the one-dtype functional case
(test_keras_multi_output.py): outputs of different dtypes, such a layer as the last layer of a
Sequential (Keras allows it: the model returns the tuple), and a model holding one called in
another functional model. Compared with real Keras 3 on the same weights and data: predict,
a few SGD steps, and .keras archives both ways."""
import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

X = np.random.default_rng(11).normal(size=(12, 4)).astype(np.float32)
Y = np.random.default_rng(12).normal(size=(12, 3)).astype(np.float32)


def split_class(lib, ops):
    """Two float outputs of different shapes and an int32 one (which entries are positive)."""

    class Split(lib.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

        def call(self, x):
            h = x * self.w
            return ops.tanh(h[:, :3]), ops.reshape(h * 2.0, (-1, 2, 2)), \
                ops.cast(ops.greater(h, 0.0), "int32")

    return Split


def layer_outputs(lib, ops):
    return split_class(lib, ops)(name="split")


def sequential(lib, ops):
    return lib.Sequential([lib.Input((4,)), lib.layers.Dense(4, name="d"),
                           layer_outputs(lib, ops)])


def called_in_functional(lib, ops):
    """A functional model holding the layer, called in another functional model that uses
    two of its outputs."""
    inner_in = lib.Input((4,))
    a, b, c = layer_outputs(lib, ops)(lib.layers.Dense(4, name="d")(inner_in))
    inner = lib.Model(inner_in, [a, b, c], name="inner")
    inputs = lib.Input((4,))
    first, second, flags = inner(inputs)
    out = lib.layers.Add(name="add")([lib.layers.Dense(3, name="h1")(first),
                                      lib.layers.Dense(3, name="h2")(
                                          lib.layers.Flatten(name="f")(second))])
    return lib.Model(inputs, [out, flags])


def twins(build):
    theirs, ours = build(keras, keras.ops), build(gk, gk.ops)
    rng = np.random.default_rng(5)
    weights = [rng.normal(size=w.shape).astype(np.float32) * 0.5 for w in theirs.get_weights()]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    return ours, theirs


def assert_outputs_match(ours, theirs):
    assert type(ours) is type(theirs) and len(ours) == len(theirs)
    for got, want in zip(ours, theirs):
        want = np.asarray(want)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_outputs_of_different_dtypes_eagerly_and_in_a_functional_model():
    ours_layer, theirs_layer = layer_outputs(gk, gk.ops), layer_outputs(keras, keras.ops)
    theirs_out = theirs_layer(X)
    ours_layer.build((None, 4))
    ours_layer.set_weights([np.linspace(-1, 1, 4).astype(np.float32)])
    theirs_layer.set_weights(ours_layer.get_weights())
    assert_outputs_match(tuple(t.numpy() for t in ours_layer(X)),
                         tuple(np.asarray(t) for t in theirs_layer(X)))
    assert len(theirs_out) == 3
    inputs = gk.Input((4,))
    outputs = layer_outputs(gk, gk.ops)(inputs)
    assert [t.dtype for t in outputs] == ["float32", "float32", "int32"]


def test_several_outputs_as_the_last_layer_of_a_sequential_match_keras(tmp_path):
    ours, theirs = twins(sequential)
    assert_outputs_match(ours.predict(X, verbose=0), theirs.predict(X, verbose=0))
    assert_outputs_match(tuple(t.numpy() for t in ours(X)),
                         tuple(np.asarray(t) for t in theirs(X)))
    assert ours.output_shape == [(None, 3), (None, 2, 2), (None, 4)]
    # compile takes one loss per output (Keras's per-output log names for a Sequential differ:
    # the total loss and the trained weights are compared)
    y2 = np.random.default_rng(13).normal(size=(12, 2, 2)).astype(np.float32)
    flags = np.zeros((12, 4), np.int32)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.05), loss=["mse", "mse", None])
    h_ours = ours.fit(X, [Y, y2, flags], epochs=2, batch_size=6, shuffle=False, verbose=0)
    h_theirs = theirs.fit(X, [Y, y2, flags], epochs=2, batch_size=6, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    path = str(tmp_path / "seq.keras")
    ours.save(path)
    expected = ours.predict(X, verbose=0)
    assert_outputs_match(tuple(np.asarray(t) for t in keras.models.load_model(
        path, custom_objects={"Split": split_class(keras, keras.ops)}).predict(X, verbose=0)),
        expected)
    assert_outputs_match(gk.models.load_model(path, custom_objects={
        "Split": split_class(gk, gk.ops)}).predict(X, verbose=0), expected)


def test_a_model_with_such_a_layer_called_in_a_functional_model_trains_as_keras(tmp_path):
    ours, theirs = twins(called_in_functional)
    assert_outputs_match(tuple(ours.predict(X, verbose=0)),
                         tuple(theirs.predict(X, verbose=0)))
    # Keras lists the inner model as one layer
    assert [layer.name for layer in theirs.layers if layer.weights][:1] == ["inner"]
    flags = (X @ theirs.get_layer("inner").get_layer("d").get_weights()[0] > 0)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.05), loss=["mse", None])
    h_ours = ours.fit(X, [Y, flags], epochs=2, batch_size=6, shuffle=False, verbose=0)
    h_theirs = theirs.fit(X, [Y, flags], epochs=2, batch_size=6, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    path = str(tmp_path / "nested.keras")
    ours.save(path)
    expected = tuple(ours.predict(X, verbose=0))
    loaded = keras.models.load_model(path, custom_objects={"Split": split_class(keras, keras.ops)})
    assert_outputs_match(tuple(np.asarray(t) for t in loaded.predict(X, verbose=0)), expected)
    theirs.save(str(tmp_path / "k.keras"))
    again = gk.models.load_model(str(tmp_path / "k.keras"),
                                 custom_objects={"Split": split_class(gk, gk.ops)})
    assert_outputs_match(tuple(again.predict(X, verbose=0)), expected)
