"""Keras-compatible weight files: a model trained in gpuaccel and saved as ``.weights.h5`` or
``.keras`` loads into real Keras with the same predictions, and files real Keras writes load
into gpuaccel; the layout checks and the errors for mismatched models."""
import os

import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
h5py = pytest.importorskip("h5py")


def cnn(lib):
    L = lib.layers
    return lib.Sequential([
        lib.Input((8, 8, 1)), L.Conv2D(4, 3, activation="relu"), L.BatchNormalization(),
        L.MaxPooling2D(2), L.Conv2D(3, 2, padding="same"), L.Flatten(), L.Dropout(0.2),
        L.Dense(6, activation="relu"), L.Dense(3), L.Softmax()])


def mlp_functional(lib):
    inputs = lib.Input((5,))
    hidden = lib.layers.Dense(7, activation="tanh")(inputs)
    hidden = lib.layers.LayerNormalization()(hidden)
    outputs = lib.layers.Dense(2)(hidden)
    return lib.Model(inputs, outputs)


def data(shape, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=shape).astype(np.float32), rng.integers(0, 3, shape[0])


def trained_gpuaccel_cnn():
    x, y = data((32, 8, 8, 1))
    model = cnn(gk)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
    model.fit(x, y, epochs=1, batch_size=8, verbose=0)
    return model, x


def test_weights_h5_from_gpuaccel_load_into_keras(tmp_path):
    model, x = trained_gpuaccel_cnn()
    path = str(tmp_path / "cnn.weights.h5")
    model.save_weights(path)
    with h5py.File(path, "r") as f:  # Keras 3's layout
        assert f["layers/conv2d_1/vars/0"].shape == (2, 2, 4, 3)
        assert len(f["layers/batch_normalization/vars"]) == 4
    reference = cnn(keras)
    reference.load_weights(path)
    np.testing.assert_allclose(reference.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)


def test_weights_h5_from_keras_load_into_gpuaccel(tmp_path):
    x, _ = data((6, 5))
    reference = mlp_functional(keras)
    rng = np.random.default_rng(1)
    reference.set_weights([rng.normal(size=w.shape) for w in reference.get_weights()])
    path = str(tmp_path / "mlp.weights.h5")
    reference.save_weights(path)
    model = mlp_functional(gk)
    model.load_weights(path)
    np.testing.assert_allclose(model.predict(x, verbose=0), reference.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)


def test_keras_archive_round_trips_both_ways(tmp_path):
    model, x = trained_gpuaccel_cnn()
    ours = str(tmp_path / "ours.keras")
    model.save(ours)
    in_keras = keras.models.load_model(ours)
    np.testing.assert_allclose(in_keras.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    back = gk.models.load_model(ours)
    np.testing.assert_allclose(back.predict(x, verbose=0), model.predict(x, verbose=0),
                               rtol=1e-6, atol=1e-7)
    theirs = str(tmp_path / "theirs.keras")
    in_keras.save(theirs)
    from_keras = gk.models.load_model(theirs)
    np.testing.assert_allclose(from_keras.predict(x, verbose=0), in_keras.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    other = cnn(gk)
    other.load_weights(theirs)  # weights straight from a .keras archive
    np.testing.assert_allclose(other.predict(x, verbose=0), in_keras.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)


def test_mismatched_model_is_refused_before_any_weight_changes(tmp_path):
    model, x = trained_gpuaccel_cnn()
    path = str(tmp_path / "cnn.weights.h5")
    model.save_weights(path)
    other = gk.Sequential([gk.Input((5,)), gk.layers.Dense(3)])
    before = other.get_weights()
    with pytest.raises(ValueError, match="expected 2 variables|has shape"):
        other.load_weights(path)
    for a, b in zip(before, other.get_weights()):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(FileNotFoundError):
        model.load_weights(str(tmp_path / "missing.weights.h5"))
    with pytest.raises(ValueError, match=".keras"):
        model.save(str(tmp_path / "model.h5"))


def test_save_refuses_subclassed_models(tmp_path):
    model = _subclassed(gk)
    model(np.zeros((1, 5), np.float32))
    with pytest.raises(NotImplementedError, match="save_weights"):
        model.save(str(tmp_path / "s.keras"))
    assert not os.path.exists(tmp_path / "s.keras")


def _merged(lib):
    a, b = lib.Input((4,)), lib.Input((4,))
    dense = lib.layers.Dense(3, activation="relu")
    da, db = dense(a), dense(b)  # one layer called twice: two inbound nodes
    joined = lib.layers.Concatenate()([lib.layers.Add()([da, db]), da])
    return lib.Model([a, b], lib.layers.Dense(2)(joined))


def test_functional_models_written_by_gpuaccel_load_into_keras(tmp_path):
    x, _ = data((6, 5))
    model = mlp_functional(gk)
    path = str(tmp_path / "mlp.keras")
    model.save(path)
    np.testing.assert_allclose(keras.models.load_model(path).predict(x, verbose=0),
                               model.predict(x, verbose=0), rtol=1e-4, atol=1e-5)
    merged = _merged(gk)
    inputs = [data((5, 4), seed)[0] for seed in (1, 2)]
    path = str(tmp_path / "merged.keras")
    merged.save(path)
    in_keras = keras.models.load_model(path)
    np.testing.assert_allclose(in_keras.predict(inputs, verbose=0),
                               merged.predict(inputs, verbose=0), rtol=1e-4, atol=1e-5)
    back = gk.models.load_model(path)
    np.testing.assert_allclose(back.predict(inputs, verbose=0), merged.predict(inputs, verbose=0),
                               rtol=1e-6)


def test_functional_keras_archive_and_from_keras(tmp_path):
    x, _ = data((6, 5))
    reference = mlp_functional(keras)
    rng = np.random.default_rng(2)
    reference.set_weights([rng.normal(size=w.shape) for w in reference.get_weights()])
    path = str(tmp_path / "functional.keras")
    reference.save(path)
    loaded = gk.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(x, verbose=0), reference.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    rebuilt = gk.models.from_keras(reference)
    np.testing.assert_allclose(rebuilt.predict(x, verbose=0), reference.predict(x, verbose=0),
                               rtol=1e-4, atol=1e-5)
    model, images = trained_gpuaccel_cnn()
    twin = gk.models.from_keras(keras.models.load_model(_saved(model, tmp_path)))
    np.testing.assert_allclose(twin.predict(images, verbose=0), model.predict(images, verbose=0),
                               rtol=1e-4, atol=1e-5)


def _saved(model, folder):
    path = str(folder / "cnn.keras")
    model.save(path)
    return path


def _subclassed(lib):
    class Classifier(lib.Model):
        def __init__(self):
            super().__init__()
            self.hidden = lib.layers.Dense(6, activation="relu")
            self.out = lib.layers.Dense(3)

        def call(self, x):
            return self.out(self.hidden(x))

    return Classifier()


def test_subclassed_model_weights_h5_both_ways(tmp_path):
    x, _ = data((4, 5))
    ours, theirs = _subclassed(gk), _subclassed(keras)
    ours(x)
    theirs(x)
    path = str(tmp_path / "sub.weights.h5")
    ours.save_weights(path)
    with h5py.File(path, "r") as f:
        # Keras walks dir(model): `hidden` by its attribute; `layers` (a property, sorted before
        # `out`) then saves the second Dense as layers/dense_1.
        assert f["hidden/vars/0"].shape == (5, 6) and f["layers/dense_1/vars/1"].shape == (3,)
    theirs.load_weights(path)
    np.testing.assert_allclose(np.asarray(theirs(x)), ours(x).numpy(), rtol=1e-5, atol=1e-6)
    rng = np.random.default_rng(4)
    theirs.set_weights([rng.normal(size=w.shape) for w in theirs.get_weights()])
    theirs.save_weights(path)
    ours.load_weights(path)
    np.testing.assert_allclose(ours(x).numpy(), np.asarray(theirs(x)), rtol=1e-5, atol=1e-6)
