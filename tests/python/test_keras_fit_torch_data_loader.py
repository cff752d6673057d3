"""Keras 3's fit/evaluate/predict take a PyTorch DataLoader: gpuaccel.torch's, of a
TensorDataset, runs len(loader) batches an epoch (training and validation), as Keras does.
Compared with Keras fed the same batches on the same weights."""
import numpy as np
import pytest

from gpuaccel import data as gdata
from gpuaccel import keras as gk
from gpuaccel import torch as gtorch

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


def classifier(lib):
    return lib.Sequential([lib.Input((5,)), lib.layers.Dense(8, activation="relu"),
                           lib.layers.Dense(3)])


def test_fit_and_evaluate_on_a_data_loader_match_keras_on_the_same_batches():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 5)).astype(np.float32)
    y = rng.integers(0, 3, 20).astype(np.int64)
    theirs, ours = classifier(keras), classifier(gk)
    ours.set_weights(theirs.get_weights())
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.1), metrics=["accuracy"],
                      loss=lib.losses.SparseCategoricalCrossentropy(from_logits=True))
    dataset = gtorch.utils.data.TensorDataset(gtorch.from_numpy(x), gtorch.from_numpy(y))
    loader = gtorch.utils.data.DataLoader(dataset, batch_size=8, shuffle=False)
    h_ours = ours.fit(loader, epochs=2, validation_data=loader, verbose=0)
    h_theirs = theirs.fit(x, y, batch_size=8, epochs=2, shuffle=False, validation_data=(x, y),
                          verbose=0)
    for key in ("loss", "accuracy", "val_loss", "val_accuracy"):
        np.testing.assert_allclose(h_ours.history[key], h_theirs.history[key], rtol=1e-5,
                                   err_msg=key)
    np.testing.assert_allclose(ours.evaluate(loader, verbose=0),
                               theirs.evaluate(x, y, batch_size=8, verbose=0), rtol=1e-5)
    with pytest.raises(ValueError, match="`y` argument is not supported"):
        ours.fit(loader, y, verbose=0)


def subclassed_classifier(lib):
    class Classifier(lib.Model):
        def __init__(self):
            super().__init__()
            self.hidden = lib.layers.Dense(6, activation="relu")
            self.head = lib.layers.Dense(3)

        def call(self, inputs):
            return self.head(self.hidden(inputs))

    return Classifier()


def test_models_not_built_yet_build_from_the_first_batch_of_a_loader_or_dataset():
    """As Keras builds them: a subclassed model fit on a DataLoader, a Sequential model
    without an input shape fit on a Dataset."""
    rng = np.random.default_rng(1)
    x = rng.normal(size=(12, 5)).astype(np.float32)
    y = rng.integers(0, 3, 12).astype(np.int64)
    loader = gtorch.utils.data.DataLoader(
        gtorch.utils.data.TensorDataset(gtorch.from_numpy(x), gtorch.from_numpy(y)),
        batch_size=4)
    for model, source in ((subclassed_classifier(gk), loader),
                          (gk.Sequential([gk.layers.Dense(3)]),
                           gdata.Dataset.from_tensor_slices((x, y)).batch(4))):
        model.compile(optimizer="sgd", loss=gk.losses.SparseCategoricalCrossentropy(True))
        history = model.fit(source, verbose=0)
        assert model.built and len(history.history["loss"]) == 1
        assert model.predict(x, verbose=0).shape == (12, 3)
