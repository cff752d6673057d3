"""A Python function as a layer's activation (``Dense(1, activation=custom_fn)``): it runs
after the C++ layer, traced into the step, and a ``.keras`` archive names it as Keras does, so
the archive loads here and in Keras with the function in ``custom_objects`` or registered.
Compared with Keras 3 on the same weights."""
import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


def squared(x):
    return x * x


def model_with(lib, activation):
    inputs = lib.Input((4,))
    hidden = lib.layers.Dense(3, activation=activation)(inputs)
    return lib.Model(inputs, lib.layers.Dense(1)(hidden))


def data(rows=8):
    rng = np.random.default_rng(0)
    return rng.normal(size=(rows, 4)).astype(np.float32), rng.normal(size=(rows, 1)).astype(np.float32)


def test_a_function_activation_predicts_and_trains_as_keras():
    theirs, ours = model_with(keras, squared), model_with(gk, squared)
    ours.set_weights(theirs.get_weights())
    x, y = data()
    np.testing.assert_allclose(ours.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)
    ours.compile(optimizer=gk.optimizers.SGD(0.01), loss="mse")
    theirs.compile(optimizer=keras.optimizers.SGD(0.01), loss="mse")
    losses = [model.fit(x, y, batch_size=4, shuffle=False, verbose=0).history["loss"]
              for model in (ours, theirs)]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
    assert [layer.activation for layer in ours.layers if hasattr(layer, "activation")] == \
        [squared, "linear"]


def test_archives_with_a_function_activation_load_both_ways(tmp_path):
    x, _ = data()
    ours = model_with(gk, squared)
    expected = ours.predict(x, verbose=0)
    ours.save(tmp_path / "ours.keras")
    for lib in (keras, gk):
        again = lib.models.load_model(tmp_path / "ours.keras", custom_objects={"squared": squared})
        np.testing.assert_allclose(np.asarray(again.predict(x, verbose=0)), expected,
                                   rtol=1e-5, atol=1e-6)
    theirs = model_with(keras, squared)
    theirs.save(tmp_path / "theirs.keras")
    loaded = gk.models.load_model(tmp_path / "theirs.keras", custom_objects={"squared": squared})
    np.testing.assert_allclose(loaded.predict(x, verbose=0), theirs.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-6)


def test_an_activation_that_is_no_function_is_refused_as_keras():
    for lib in (keras, gk):
        with pytest.raises(ValueError, match="Could not interpret activation function"):
            lib.layers.Dense(2, activation=5)


def test_clone_model_keeps_a_function_activation():
    x, _ = data()
    model = model_with(gk, squared)
    clone = gk.models.clone_model(model)
    clone.set_weights(model.get_weights())
    np.testing.assert_allclose(clone.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6)
