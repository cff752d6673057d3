"""``model.to_json()`` / ``keras.models.model_from_json``: the architecture as Keras 3's JSON,
rebuilt with new weights, here from ours and Keras's and in Keras from ours."""
import json

import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


def functional(lib):
    inputs = lib.Input((4,), name="features")
    hidden = lib.layers.Dense(3, activation="relu", name="hidden")(inputs)
    return lib.Model(inputs, lib.layers.Dense(2, name="head")(hidden), name="net")


def sequential(lib):
    return lib.Sequential([lib.Input((4,)), lib.layers.Dense(2, name="only")], name="seq")


@pytest.mark.parametrize("build", [functional, sequential])
def test_json_round_trips_here_and_with_keras(build):
    x = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    ours, theirs = build(gk), build(keras)
    ours_json = ours.to_json()
    assert json.loads(ours_json)["class_name"] == json.loads(theirs.to_json())["class_name"]
    for rebuilt, source in ((gk.models.model_from_json(ours_json), ours),
                            (gk.models.model_from_json(theirs.to_json()), theirs),
                            (keras.models.model_from_json(ours_json), ours)):
        assert [layer.name for layer in rebuilt.layers if type(layer).__name__ != "InputLayer"] \
            == [layer.name for layer in source.layers if type(layer).__name__ != "InputLayer"]
        rebuilt.set_weights(source.get_weights())
        np.testing.assert_allclose(np.asarray(rebuilt.predict(x, verbose=0)),
                                   np.asarray(source.predict(x, verbose=0)), rtol=1e-5,
                                   atol=1e-6)
