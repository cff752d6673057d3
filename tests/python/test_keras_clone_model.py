"""``keras.models.clone_model``: the same architecture (layer classes, names, shapes, counts)
with new weights of its own, for functional and Sequential models, as Keras 3 clones them."""
import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


def functional(lib):
    inputs = lib.Input((4,), name="features")
    hidden = lib.layers.Dense(3, activation="relu", name="hidden")(inputs)
    return lib.Model(inputs, lib.layers.Dense(2, name="head")(hidden))


def sequential(lib):
    return lib.Sequential([lib.Input((4,)), lib.layers.Dense(3, name="only")])


@pytest.mark.parametrize("build", [functional, sequential])
def test_a_clone_has_the_architecture_and_weights_of_its_own(build):
    described = []
    for lib in (keras, gk):
        model = build(lib)
        clone = lib.models.clone_model(model)
        described.append([(type(layer).__name__, layer.name) for layer in clone.layers
                          if type(layer).__name__ != "InputLayer"])
        assert clone.count_params() == model.count_params()
        zeros = np.zeros((2, 4), np.float32)
        assert np.asarray(clone.predict(zeros, verbose=0)).shape == \
            np.asarray(model.predict(zeros, verbose=0)).shape
        original = [w.copy() for w in model.get_weights()]
        clone.set_weights([w + 1.0 for w in clone.get_weights()])
        for mine, before in zip(model.get_weights(), original):  # the original is untouched
            np.testing.assert_array_equal(mine, before)
    assert described[1] == described[0]


def test_clone_function_is_refused_with_what_is_supported():
    with pytest.raises(NotImplementedError, match="defaults only"):
        gk.models.clone_model(functional(gk), clone_function=lambda layer: layer)
