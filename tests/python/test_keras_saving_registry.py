"""keras.saving.register_keras_serializable (and keras.utils's copies, get_custom_objects,
custom_object_scope): a .keras archive of a model with a registered Python layer loads without
custom_objects, here and in real Keras 3, whichever of the two wrote it."""
import json
import zipfile

import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")

X = np.random.default_rng(3).normal(size=(6, 4)).astype(np.float32)


def scale_layer_class(lib):
    """A Python layer with a weight and a config entry, written against ``lib``."""

    class Scale(lib.layers.Layer):
        def __init__(self, factor=2.0, **kwargs):
            super().__init__(**kwargs)
            self.factor = factor

        def build(self, input_shape):
            self.w = self.add_weight(shape=(input_shape[-1],), initializer="ones", name="w")

        def call(self, inputs):
            return inputs * self.w * self.factor

        def get_config(self):
            return {**super().get_config(), "factor": self.factor}

    return Scale


def model_with(lib, layer_class):
    model = lib.Sequential([lib.Input((4,)), layer_class(factor=3.0, name="scale"),
                            lib.layers.Dense(2, name="out")])
    model.get_layer("scale").set_weights([np.array([1.0, -2.0, 0.5, 4.0], np.float32)])
    return model


def registered_layer(archive):
    with zipfile.ZipFile(archive) as zf:
        config = json.loads(zf.read("config.json"))
    return next(entry for entry in config["config"]["layers"]
                if entry["config"].get("name") == "scale")


def test_registered_layer_archives_load_without_custom_objects_both_ways(tmp_path):
    ours_class = gk.utils.register_keras_serializable(package="RegistryTest")(
        scale_layer_class(gk))
    theirs_class = keras.utils.register_keras_serializable(package="RegistryTest")(
        scale_layer_class(keras))
    assert gk.utils.get_registered_name(ours_class) == \
        keras.utils.get_registered_name(theirs_class) == "RegistryTest>Scale"
    assert gk.utils.get_registered_object("RegistryTest>Scale") is ours_class
    assert keras.utils.get_registered_object("RegistryTest>Scale") is theirs_class
    assert gk.saving.get_custom_objects()["RegistryTest>Scale"] is ours_class
    assert keras.utils.get_custom_objects()["RegistryTest>Scale"] is theirs_class
    ours, theirs = model_with(gk, ours_class), model_with(keras, theirs_class)
    ours.get_layer("out").set_weights(theirs.get_layer("out").get_weights())
    expected = np.asarray(theirs.predict(X, verbose=0))
    ours_path, theirs_path = str(tmp_path / "ours.keras"), str(tmp_path / "theirs.keras")
    ours.save(ours_path)
    theirs.save(theirs_path)
    # the entry names the class by its registered name, as Keras's does
    assert registered_layer(ours_path)["registered_name"] == \
        registered_layer(theirs_path)["registered_name"] == "RegistryTest>Scale"
    for path in (ours_path, theirs_path):
        loaded = gk.models.load_model(path)
        assert isinstance(loaded.get_layer("scale"), ours_class)
        assert loaded.get_layer("scale").factor == 3.0
        np.testing.assert_allclose(loaded.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(keras.saving.load_model(ours_path).predict(X, verbose=0), expected,
                               rtol=1e-5, atol=1e-6)


def test_custom_object_scope_and_get_custom_objects_supply_unregistered_classes(tmp_path):
    layer_class = scale_layer_class(gk)
    path = str(tmp_path / "plain.keras")
    model_with(gk, layer_class).save(path)
    expected = gk.models.load_model(path, custom_objects={"Scale": layer_class}).predict(
        X, verbose=0)
    with pytest.raises(NotImplementedError, match="register_keras_serializable"):
        gk.models.load_model(path)
    with gk.utils.custom_object_scope({"Scale": layer_class}):
        with gk.utils.CustomObjectScope({}):  # an inner scope replaces the outer one (Keras)
            with pytest.raises(NotImplementedError, match="custom_objects"):
                gk.saving.load_model(path)
        loaded = gk.saving.load_model(path)
    np.testing.assert_allclose(loaded.predict(X, verbose=0), expected, rtol=1e-6)
    # Keras reads our archive under its scope the same way (and refuses it in an empty one)
    theirs_class = scale_layer_class(keras)
    with keras.utils.custom_object_scope({"Scale": theirs_class}):
        with keras.utils.CustomObjectScope({}):
            with pytest.raises(TypeError, match="Scale"):
                keras.models.load_model(path)
        theirs = keras.models.load_model(path)
    np.testing.assert_allclose(theirs.predict(X, verbose=0), expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError):  # the scope is closed again
        gk.models.load_model(path)
    gk.utils.get_custom_objects()["Scale"] = layer_class
    try:
        assert isinstance(gk.models.load_model(path).get_layer("scale"), layer_class)
    finally:
        del gk.saving.get_custom_objects()["Scale"]


def test_registering_a_class_without_get_config_is_keras_error():
    class NoConfig:
        pass

    for lib in (gk, keras):
        with pytest.raises(ValueError, match="Cannot register a class that does not have a "
                                             "get_config"):
            lib.saving.register_keras_serializable()(NoConfig)
