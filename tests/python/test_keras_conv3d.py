"""keras.layers.Conv3D (gpuaccel/_conv3d.py: a sum of conv2d ops over the kernel's depth) against Keras's with the
same weights and inputs: outputs and the gradients of input and weights for padding, strides,
dilation, groups and activation; a short fit; a .keras archive both load; Keras's errors."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel.keras import layers as L
from test_grouped_conv import assert_layer_matches_keras, close, rng, same_weights

keras = pytest.importorskip("keras")

CASES = [
    (dict(filters=3, kernel_size=2), (2, 4, 5, 4, 2)),
    (dict(filters=4, kernel_size=(3, 2, 3), strides=(2, 1, 2), padding="same",
          activation="relu"), (2, 5, 4, 6, 3)),
    (dict(filters=2, kernel_size=2, dilation_rate=(2, 1, 2), use_bias=False), (1, 5, 4, 5, 2)),
    (dict(filters=4, kernel_size=(1, 3, 2), groups=2, padding="same"), (2, 3, 4, 4, 4)),
]


@pytest.mark.parametrize("kwargs,shape", CASES, ids=[str(i) for i in range(len(CASES))])
def test_conv3d_matches_keras_forward_and_gradients(kwargs, shape):
    assert_layer_matches_keras(L.Conv3D(**kwargs), keras.layers.Conv3D(**kwargs), shape)


def test_conv3d_fits_and_saves_like_keras(tmp_path):
    x = rng(7).standard_normal((6, 4, 5, 5, 2)).astype(np.float32)
    y = rng(8).standard_normal((6, 1)).astype(np.float32)

    def model(module):
        return module.Sequential([module.Input((4, 5, 5, 2)),
                                  module.layers.Conv3D(3, 2, activation="tanh"),
                                  module.layers.Flatten(), module.layers.Dense(1)])

    ours, theirs = model(ga.keras), model(keras)
    same_weights(ours, theirs, seed=9)
    for m, module in ((ours, ga.keras), (theirs, keras)):
        m.compile(optimizer=module.optimizers.SGD(0.01), loss="mse")
    want = theirs.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    got = ours.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, want, rtol=1e-4)
    ours.save(tmp_path / "m.keras")
    expected = ours.predict(x, verbose=0)
    close(keras.models.load_model(tmp_path / "m.keras").predict(x, verbose=0), expected)
    close(ga.keras.models.load_model(tmp_path / "m.keras").predict(x, verbose=0), expected)


@pytest.mark.parametrize("make", [
    lambda m: m.layers.Conv3D(0, 2), lambda m: m.layers.Conv3D(3, 2, groups=2),
    lambda m: m.layers.Conv3D(2, 2, padding="causal"),
    lambda m: m.layers.Conv3D(2, 2, strides=2, dilation_rate=2),
    lambda m: m.layers.Conv3D(2, 2, groups=2).build((None, 3, 3, 3, 3))])
def test_conv3d_bad_arguments_raise_kerass_error_type(make):
    with pytest.raises(ValueError):
        make(keras)
    with pytest.raises(ValueError):
        make(ga.keras)
