"""A functional model's inputs given as a dict keyed by the names of its keras.Input tensors
(fit, evaluate with sample weights, predict, calling the model, a Dataset of (dict, y)
elements): taken in the model's input order, extra keys left out, a missing one a ValueError,
as Keras 3 does. Compared with Keras on the same weights."""
import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


def two_input_model(lib):
    first, second = lib.Input((3,), name="first"), lib.Input((2,), name="second")
    joined = lib.layers.Concatenate()([first, lib.layers.Dense(2)(second)])
    return lib.Model([first, second], lib.layers.Dense(1)(joined))


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    return (rng.normal(size=(12, 3)).astype(np.float32), rng.normal(size=(12, 2)).astype(np.float32),
            rng.normal(size=(12, 1)).astype(np.float32))


def twins():
    theirs, ours = two_input_model(keras), two_input_model(gk)
    ours.set_weights(theirs.get_weights())
    ours.compile(optimizer=gk.optimizers.SGD(0.1), loss="mse")
    theirs.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    return ours, theirs


def test_a_dict_of_inputs_trains_evaluates_and_predicts_as_keras(arrays):
    first, second, y = arrays
    ours, theirs = twins()
    inputs = {"second": second, "first": first, "unused": second}  # any key order
    losses = [model.fit(inputs, y, batch_size=4, shuffle=False, verbose=0).history["loss"]
              for model in (ours, theirs)]
    np.testing.assert_allclose(losses[0], losses[1], rtol=1e-5)
    weights = np.linspace(0.5, 1.5, 12).astype(np.float32)
    np.testing.assert_allclose(ours.evaluate(inputs, y, sample_weight=weights, verbose=0),
                               theirs.evaluate(inputs, y, sample_weight=weights, verbose=0),
                               rtol=1e-5)
    expected = theirs.predict(inputs, verbose=0)
    np.testing.assert_allclose(ours.predict(inputs, verbose=0), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(ours(inputs)), expected, rtol=1e-5, atol=1e-6)


def test_a_dataset_of_dict_inputs_trains_as_keras(arrays):
    first, second, y = arrays
    ours, theirs = twins()
    ours.fit(gt.data.Dataset.from_tensor_slices(({"first": first, "second": second}, y)).batch(6),
             verbose=0)
    theirs.fit({"first": first, "second": second}, y, batch_size=6, shuffle=False, verbose=0)
    for mine, expected in zip(ours.get_weights(), theirs.get_weights()):
        np.testing.assert_allclose(mine, expected, rtol=1e-5, atol=1e-6)


def test_a_dict_without_an_input_is_refused(arrays):
    first, _, _ = arrays
    messages = []
    for model in twins():
        with pytest.raises(ValueError) as raised:
            model.predict({"first": first}, verbose=0)
        messages.append(str(raised.value))
    assert messages[0] == messages[1] == ('Missing data for input "second". You passed a data '
                                          "dictionary with keys ['first']. Expected the "
                                          "following keys: ['first', 'second']")
