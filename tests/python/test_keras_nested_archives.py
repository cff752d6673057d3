"""``.keras`` archives of models that contain models: a Sequential called in a functional model,
a functional model in a Sequential, and a registered subclassed model in either. The inner
model is one entry of the outer config, as Keras writes it (a functional model's inlined layer
calls grouped back into one call of the model). Real Keras 3 loads our archives and we load
Keras's, with the same predictions."""
import json
import zipfile

import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

X = np.random.default_rng(3).normal(size=(6, 4)).astype(np.float32)


def subclassed_class(lib, relu):
    """A registered subclassed model with a constructor argument and tensor ops in its call."""

    @lib.saving.register_keras_serializable(package="NestedArchive")
    class Block(lib.Model):
        def __init__(self, units=3, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.d1 = lib.layers.Dense(5, activation="tanh")
            self.d2 = lib.layers.Dense(units)

        def call(self, x, training=None):
            h = self.d1(x)
            return self.d2(h * 0.5 + relu(h))

    return Block


BLOCKS = {"keras": None, "gpuaccel": None}


def block_class(lib):
    """The library's Block, defined (and so registered) once per session whatever the test order."""
    key = "keras" if lib is keras else "gpuaccel"
    if BLOCKS[key] is None:
        BLOCKS[key] = subclassed_class(lib, keras.ops.relu if lib is keras else gt.nn.relu)
    return BLOCKS[key]


def block(lib):
    return block_class(lib)(units=3)


def build(lib, kind):
    L = lib.layers
    if kind == "sequential_in_functional":
        inner = lib.Sequential([lib.Input((4,)), L.Dense(3, name="i1"),
                                L.BatchNormalization(name="bn")], name="inner")
        inputs = lib.Input((4,))
        return lib.Model(inputs, L.Dense(2, name="last")(inner(L.Dense(4, name="first")(inputs))))
    if kind == "functional_in_sequential":
        head_input = lib.Input((3,))
        head = lib.Model(head_input, L.Dense(2, name="fd")(head_input), name="head")
        return lib.Sequential([lib.Input((4,)), L.Dense(3, name="d"), head])
    if kind == "subclassed_in_functional":
        inputs = lib.Input((4,))
        return lib.Model(inputs, L.Dense(2, name="out")(block(lib)(inputs)))
    return lib.Sequential([lib.Input((4,)), block(lib), L.Dense(2, name="out")])


KINDS = ["sequential_in_functional", "functional_in_sequential", "subclassed_in_functional",
         "subclassed_in_sequential"]


@pytest.mark.parametrize("kind", KINDS)
def test_nested_model_archive_moves_both_ways_with_keras(kind, tmp_path):
    theirs, ours = build(keras, kind), build(gk, kind)
    rng = np.random.default_rng(len(kind))
    weights = [rng.uniform(0.5, 1.5, size=w.shape).astype(np.float32)
               for w in theirs.get_weights()]  # BatchNormalization's variance stays positive
    theirs.set_weights(weights)
    ours.set_weights(weights)
    expected = np.asarray(theirs.predict(X, verbose=0))
    np.testing.assert_allclose(ours.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)
    ours_path, theirs_path = str(tmp_path / "g.keras"), str(tmp_path / "k.keras")
    ours.save(ours_path)
    theirs.save(theirs_path)
    # the inner model is one entry of the outer config, of Keras's class
    entries = {json.loads(zipfile.ZipFile(path).read("config.json"))["config"]["layers"][
        1 + (kind == "sequential_in_functional" or kind == "functional_in_sequential")][
            "class_name"] for path in (ours_path, theirs_path)}
    assert len(entries) == 1
    for loaded in (keras.models.load_model(ours_path), gk.models.load_model(theirs_path),
                   gk.models.load_model(ours_path)):
        np.testing.assert_allclose(np.asarray(loaded.predict(X, verbose=0)), expected,
                                   rtol=1e-5, atol=1e-6)


def test_a_loaded_nested_archive_trains_as_keras(tmp_path):
    path = str(tmp_path / "m.keras")
    block_class(gk)  # our loader finds the class Keras's archive names by its registration
    theirs = build(keras, "subclassed_in_functional")
    theirs.save(path)
    ours, theirs = gk.models.load_model(path), keras.models.load_model(path)
    block_layer = ours.get_layer(theirs.layers[1].name)
    assert type(block_layer).__name__ == "Block" and block_layer.units == 3
    y = np.random.default_rng(4).normal(size=(6, 2)).astype(np.float32)
    for model, lib in ((ours, gk), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(0.05), loss="mse")
    h_ours = ours.fit(X, y, epochs=2, batch_size=3, shuffle=False, verbose=0)
    h_theirs = theirs.fit(X, y, epochs=2, batch_size=3, shuffle=False, verbose=0)
    np.testing.assert_allclose(h_ours.history["loss"], h_theirs.history["loss"], rtol=1e-4)
