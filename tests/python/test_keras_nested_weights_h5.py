"""``.weights.h5`` files of models that contain models (a Sequential in a Sequential, a
Sequential and a functional model called in a functional model) use Keras 3's layout: the inner
model is a group named like a layer (``layers/sequential``, ``layers/functional``) holding its
own layers' groups. Real Keras reads the files gpuaccel writes, and gpuaccel reads Keras's."""
import h5py
import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

X = np.random.default_rng(5).normal(size=(5, 4)).astype(np.float32)


def nested_models(lib):
    """(a functional model calling a Sequential and a functional model, a Sequential holding a
    Sequential that holds a Sequential), written against ``lib``."""
    inner = lib.Sequential([lib.Input((4,)), lib.layers.Dense(3, name="i1"),
                            lib.layers.BatchNormalization(name="bn")], name="inner")
    head_input = lib.Input((3,))
    head = lib.Model(head_input, lib.layers.Dense(2, name="fd")(head_input), name="head")
    inputs = lib.Input((4,))
    functional = lib.Model(inputs, lib.layers.Dense(1, name="last")(
        head(inner(lib.layers.Dense(4, name="first")(inputs)))))
    deepest = lib.Sequential([lib.Input((4,)), lib.layers.Dense(4, name="d0")], name="deepest")
    middle = lib.Sequential([lib.Input((4,)), deepest, lib.layers.Dense(3, name="d1")],
                            name="middle")
    chain = lib.Sequential([lib.Input((4,)), middle, lib.layers.Dense(2, name="d2")])
    return functional, chain


def datasets(path):
    found = []
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, obj: found.append(name) if isinstance(obj, h5py.Dataset)
                     else None)
    return sorted(found)


@pytest.mark.parametrize("which", [0, 1], ids=["functional", "sequential"])
def test_nested_model_weights_h5_moves_both_ways_with_keras(tmp_path, which):
    rng = np.random.default_rng(which)
    theirs, ours = nested_models(keras)[which], nested_models(gk)[which]
    for variable in theirs.weights:  # BatchNormalization's variance stays positive
        values = rng.uniform(0.5, 1.5, size=variable.shape).astype(np.float32)
        variable.assign(values if "variance" in variable.path else values - 1.0)
    expected = np.asarray(theirs.predict(X, verbose=0))
    theirs_path, ours_path = str(tmp_path / "k.weights.h5"), str(tmp_path / "g.weights.h5")
    theirs.save_weights(theirs_path)
    ours.load_weights(theirs_path)
    np.testing.assert_allclose(ours.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)
    ours.save_weights(ours_path)
    assert datasets(ours_path) == datasets(theirs_path)
    again = nested_models(keras)[which]
    again.load_weights(ours_path)
    np.testing.assert_allclose(again.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)


def test_nested_groups_are_named_as_keras_names_them(tmp_path):
    path = str(tmp_path / "m.weights.h5")
    nested_models(gk)[0].save_weights(path)
    assert "layers/sequential/layers/batch_normalization/vars/3" in datasets(path)
    assert "layers/functional/layers/dense/vars/0" in datasets(path)
    nested_models(gk)[1].save_weights(path)
    assert "layers/sequential/layers/sequential/layers/dense/vars/0" in datasets(path)
