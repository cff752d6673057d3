"""``layer.input`` / ``layer.output``: the KerasTensors of a layer's first functional call, also
for the layers of a built Sequential model (Keras builds it as a functional one), so that
``keras.Model(inputs=seq.inputs, outputs=[layer.output for layer in seq.layers])`` extracts
every layer's features. Compared with Keras 3 on the same weights."""
import numpy as np
import pytest

from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


def conv_stack(lib, with_input):
    layers = [lib.layers.Conv2D(4, 3, activation="relu"), lib.layers.Conv2D(2, 3),
              lib.layers.Flatten()]
    model = lib.Sequential(([lib.Input((7, 7, 3))] if with_input else []) + layers)
    if not with_input:
        model.build((None, 7, 7, 3))
    return model


@pytest.mark.parametrize("with_input", [True, False], ids=["keras_input", "build"])
def test_sequential_layer_outputs_make_a_feature_extractor(with_input):
    theirs, ours = conv_stack(keras, with_input), conv_stack(gk, with_input)
    ours.set_weights(theirs.get_weights())
    x = np.random.default_rng(0).normal(size=(2, 7, 7, 3)).astype(np.float32)
    features = []
    for lib, model in ((keras, theirs), (gk, ours)):
        if with_input:
            extractor = lib.Model(inputs=model.inputs,
                                  outputs=[layer.output for layer in model.layers])
        else:  # a Sequential built from a shape: its first layer's input stands for it
            extractor = lib.Model(inputs=model.layers[0].input,
                                  outputs=[layer.output for layer in model.layers])
        features.append([np.asarray(f) for f in extractor(x)])
        assert [tuple(layer.input.shape) for layer in model.layers] == \
            [(None, 7, 7, 3), (None, 5, 5, 4), (None, 3, 3, 2)]
    for mine, expected in zip(features[1], features[0]):
        np.testing.assert_allclose(mine, expected, rtol=1e-5, atol=1e-5)


def test_a_functional_call_gives_input_and_output_and_an_uncalled_layer_says_so():
    messages = []
    for lib in (keras, gk):
        dense = lib.layers.Dense(3, name="probe")
        with pytest.raises(AttributeError) as raised:
            dense.output
        messages.append(str(raised.value))
        inputs = lib.Input((5,))
        first = dense(inputs)
        dense(lib.Input((5,)))  # a second call: input and output stay the first call's
        assert dense.input is inputs and dense.output is first
    assert messages[0] == messages[1] == \
        "The layer probe has never been called and thus has no defined output."
