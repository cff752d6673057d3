"""ConvLSTM1D/2D/3D (keras/_conv_lstm.py: LSTMCell's gates over convolutions) against Keras 3
with the same weights and inputs: outputs, states and gradients (input, kernels, bias) on
both tapes, return_sequences/return_state/go_backwards/initial_state, configs and Keras's
errors, a short fit and Keras's .weights.h5 and .keras files."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")


def normal(shape, seed, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def close(got, want, rel=1e-5):
    if isinstance(got, ga.Tensor):
        got = got.detach().numpy()
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=0, atol=rel * max(float(np.abs(want).max()), 1e-6))


def same_weights(ours, theirs, seed=5):
    weights = [normal(w.shape, seed + i, 0.3) for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)


CASES = [
    ((L.ConvLSTM2D, keras.layers.ConvLSTM2D), dict(filters=3, kernel_size=2), (2, 4, 5, 5, 2)),
    ((L.ConvLSTM2D, keras.layers.ConvLSTM2D),
     dict(filters=2, kernel_size=3, padding="same", return_sequences=True, go_backwards=True,
          recurrent_activation="hard_sigmoid"), (2, 3, 4, 5, 2)),
    ((L.ConvLSTM1D, keras.layers.ConvLSTM1D),
     dict(filters=2, kernel_size=3, strides=2, return_state=True, unit_forget_bias=False,
          use_bias=True), (2, 3, 7, 3)),
    ((L.ConvLSTM3D, keras.layers.ConvLSTM3D),
     dict(filters=2, kernel_size=2, dilation_rate=(1, 2, 1)), (1, 3, 4, 5, 4, 2)),
]


@pytest.mark.parametrize("classes,kwargs,shape", CASES,
                         ids=[f"{c[0][0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_matches_keras_outputs_and_gradients(classes, kwargs, shape):
    ours, theirs = classes[0](**kwargs), classes[1](**kwargs)
    x = normal(shape, 1)
    ours(x), theirs(x)
    assert [(w.name, tuple(w.shape)) for w in ours.weights] == \
        [(w.name, tuple(w.shape)) for w in theirs.weights]
    same_weights(ours, theirs)

    tx = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(tx)
        want = theirs(tx)
        first = want[0] if isinstance(want, (list, tuple)) else want
    upstream = normal(tuple(first.shape), 9)
    want_grads = tape.gradient(first, [tx, *theirs.trainable_weights],
                               output_gradients=tf.constant(upstream))
    gx = ga.Variable(x)
    with ga.GradientTape() as tape:
        got = ours(gx)
        got_first = got[0] if isinstance(got, (list, tuple)) else got
    got_grads = tape.gradient(got_first, [gx, *ours.trainable_weights],
                              output_gradients=ga.tensor(upstream))
    if isinstance(want, (list, tuple)):
        assert len(got) == len(want) == 3
        for g, w in zip(got, want):
            close(g, w.numpy())
    close(got_first, first.numpy())
    for g, w in zip(got_grads, want_grads):
        close(g.numpy(), w.numpy(), rel=1e-4)
    assert tuple(ours.compute_output_shape(shape)[0] if kwargs.get("return_state")
                 else ours.compute_output_shape(shape)) == tuple(
        theirs.compute_output_shape(shape)[0] if kwargs.get("return_state")
        else theirs.compute_output_shape(shape))


def test_initial_state_is_used_as_keras_uses_it():
    """ConvLSTM1D's states are rank 3, like a timestep mask: they must stay states."""
    x = normal((2, 3, 6, 2), 2)
    h0, c0 = normal((2, 6, 3), 3), normal((2, 6, 3), 4)
    ours = L.ConvLSTM1D(3, 2, padding="same")
    theirs = keras.layers.ConvLSTM1D(3, 2, padding="same")
    ours(x), theirs(x)
    same_weights(ours, theirs)
    close(ours(x, initial_state=[h0, c0]), theirs(x, initial_state=[h0, c0]).numpy())


def test_config_round_trip_and_keras_errors():
    ours = L.ConvLSTM2D(4, (3, 2), strides=(2, 1), padding="same", name="clstm")
    theirs = keras.layers.ConvLSTM2D(4, (3, 2), strides=(2, 1), padding="same", name="clstm")
    config, keras_config = ours.get_config(), theirs.get_config()
    assert set(config) == set(keras_config)
    for key in ("filters", "kernel_size", "strides", "padding", "dilation_rate",
                "return_sequences", "unit_forget_bias", "activation", "recurrent_activation"):
        assert config[key] == keras_config[key] or tuple(config[key]) == tuple(
            keras_config[key]), key
    assert type(ours).from_config(config).get_config() == config
    with pytest.raises(ValueError, match="not supported in conjunction with `dilation_rate"):
        L.ConvLSTM2D(2, 3, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="only support static input shapes"):
        L.ConvLSTM2D(2, 2).build((None, 3, None, 4, 2))
    with pytest.raises(ValueError, match="expected ndim=5"):
        L.ConvLSTM2D(2, 2)(normal((2, 3, 4, 2), 0))
    with pytest.raises(NotImplementedError, match="dropout"):
        L.ConvLSTM2D(2, 2, dropout=0.2)


def test_fit_and_weight_files_match_keras(tmp_path):
    x, y = normal((6, 3, 5, 5, 2), 7), normal((6, 1), 8)

    def model(module):
        layers = module.layers
        return module.Sequential([
            module.Input((3, 5, 5, 2)), layers.ConvLSTM2D(3, 2, return_sequences=True),
            layers.ConvLSTM2D(2, 2, padding="same"), layers.Flatten(), layers.Dense(1)])

    ours, theirs = model(ga.keras), model(keras)
    weights = [normal(w.shape, 20 + i, 0.3) for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    for m, module in ((ours, ga.keras), (theirs, keras)):
        m.compile(optimizer=module.optimizers.SGD(0.05), loss="mse")
    want = theirs.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    got = ours.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, want, rtol=1e-4)
    for g, w in zip(ours.get_weights(), theirs.get_weights()):
        close(g, w, rel=1e-4)
    theirs.save_weights(tmp_path / "c.weights.h5")
    fresh = model(ga.keras)
    fresh.load_weights(tmp_path / "c.weights.h5")
    close(fresh.predict(x, verbose=0), theirs.predict(x, verbose=0), rel=1e-4)
    ours.save(tmp_path / "c.keras")
    close(keras.models.load_model(tmp_path / "c.keras").predict(x, verbose=0),
          ours.predict(x, verbose=0), rel=1e-4)
