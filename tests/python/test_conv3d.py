"""3-D convolutions (gpuaccel/_conv3d.py: depth slices folded into the batch of 2-D
convolutions) on every face against the frameworks with the same weights and inputs:
tf.nn.conv3d / conv3d_transpose / convolution / conv_transpose against TensorFlow (values and
gradients), keras Conv3D / Conv3DTranspose (and their Convolution3D names) against Keras
(outputs, gradients, shapes, configs, a short fit, weight files), keras.ops.conv /
conv_transpose for 1-D, 2-D and 3-D against Keras, and F.conv3d / conv_transpose3d against
PyTorch (torch_reference)."""
import numpy as np
import pytest

import gpuaccel as ga
import gpuaccel.torch as gtorch
from gpuaccel.keras import layers as L
import torch_reference

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")


def normal(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def close(got, want, rel=1e-5):
    if isinstance(got, ga.Tensor):
        got = got.detach().numpy()
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.abs(want).max()), 1e-6)
    np.testing.assert_allclose(got, want, rtol=0, atol=rel * scale)


def both_tapes(ours, theirs, arrays, upstream_seed=99):
    """(our value, our gradients, TF's value, TF's gradients) of ours(*tensors) and
    theirs(*tensors), gradients of sum(output * upstream) for every array."""
    tensors = [tf.constant(a) for a in arrays]
    with tf.GradientTape() as tape:
        tape.watch(tensors)
        want = theirs(*tensors)
    upstream = normal(tuple(want.shape), upstream_seed)
    want_grads = tape.gradient(want, tensors, output_gradients=tf.constant(upstream))
    variables = [ga.Variable(a) for a in arrays]
    with ga.GradientTape() as tape:
        got = ours(*variables)
    got_grads = tape.gradient(got, variables, output_gradients=ga.tensor(upstream))
    return got, got_grads, want, want_grads


# (input (N, D, H, W, C), kernel (KD, KH, KW, C, F), strides, padding, dilations)
TF_CASES = [
    ((2, 5, 6, 7, 3), (3, 2, 3, 3, 4), (1, 1, 1), "VALID", (1, 1, 1)),
    ((2, 6, 7, 5, 2), (3, 3, 2, 2, 3), (2, 2, 1), "SAME", (1, 1, 1)),
    ((1, 7, 6, 6, 2), (2, 3, 3, 2, 2), (1, 1, 1), "SAME", (2, 1, 2)),
    ((2, 5, 5, 5, 2), (3, 3, 3, 2, 2), (2, 3, 2), "VALID", (1, 1, 1)),
    ((1, 7, 5, 4, 2), (4, 3, 2, 2, 2), (1, 1, 1), "SAME", (1, 1, 1)),  # a depth pad in front
]


@pytest.mark.parametrize("x_shape,k_shape,strides,padding,dilations", TF_CASES)
def test_tf_nn_conv3d_matches_tensorflow(x_shape, k_shape, strides, padding, dilations):
    steps, dil = [1, *strides, 1], [1, *dilations, 1]
    got, got_grads, want, want_grads = both_tapes(
        lambda x, k: ga.nn.conv3d(x, k, steps, padding, dilations=dil),
        lambda x, k: tf.nn.conv3d(x, k, steps, padding, dilations=dil),
        [normal(x_shape, 1), normal(k_shape, 2)])
    close(got, want.numpy())
    for g, w in zip(got_grads, want_grads):
        close(g.numpy(), w.numpy(), rel=1e-4)
    # tf.nn.convolution's rank-5 form is the same op.
    close(ga.nn.convolution(normal(x_shape, 1), normal(k_shape, 2), list(strides), padding,
                            dilations=list(dilations)).numpy(), want.numpy())


@pytest.mark.parametrize("x_shape,k_shape,strides,padding,dilations",
                         [c for c in TF_CASES if c[4] == (1, 1, 1)])
def test_tf_nn_conv3d_transpose_matches_tensorflow(x_shape, k_shape, strides, padding,
                                                    dilations):
    """The transposed convolution back to x_shape from conv3d's output shape."""
    steps = [1, *strides, 1]
    forward = tf.nn.conv3d(normal(x_shape, 1), normal(k_shape, 2), steps, padding)
    dy = normal(tuple(forward.shape), 3)
    got, got_grads, want, want_grads = both_tapes(
        lambda y, k: ga.nn.conv3d_transpose(y, k, list(x_shape), steps, padding),
        lambda y, k: tf.nn.conv3d_transpose(y, k, list(x_shape), steps, padding),
        [dy, normal(k_shape[:3] + (k_shape[3], k_shape[4]), 4)])
    close(got, want.numpy())
    for g, w in zip(got_grads, want_grads):
        close(g.numpy(), w.numpy(), rel=1e-4)
    close(ga.nn.conv_transpose(dy, normal(k_shape, 4), list(x_shape), list(strides),
                               padding).numpy(), want.numpy())


def test_tf_nn_conv3d_errors_are_tensorflows():
    x, k = normal((1, 4, 4, 4, 2), 0), normal((2, 2, 2, 2, 3), 1)
    for strides, error in ((1, TypeError), ([1, 1, 1], tf.errors.InvalidArgumentError),
                           ([2, 1, 1, 1, 1], tf.errors.UnimplementedError)):
        with pytest.raises(error):
            tf.nn.conv3d(x, k, strides, "VALID")
        with pytest.raises(getattr(ga.errors, error.__name__, error)):
            ga.nn.conv3d(x, k, strides, "VALID")
    wrong = normal((2, 2, 2, 3, 3), 2)  # three input channels against the input's two
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.conv3d(x, wrong, [1] * 5, "VALID")
    with pytest.raises(ga.errors.InvalidArgumentError, match="same depth"):
        ga.nn.conv3d(x, wrong, [1] * 5, "VALID")


LAYER_CASES = [
    ((L.Conv3D, keras.layers.Conv3D),
     dict(filters=4, kernel_size=3, padding="same", activation="relu"), (2, 5, 6, 4, 3)),
    ((L.Conv3D, keras.layers.Conv3D),
     dict(filters=3, kernel_size=(2, 3, 2), strides=(2, 1, 2), use_bias=False), (2, 6, 5, 6, 2)),
    ((L.Convolution3D, keras.layers.Convolution3D),
     dict(filters=2, kernel_size=2, dilation_rate=(2, 1, 1)), (1, 6, 4, 4, 2)),
    ((L.Conv3DTranspose, keras.layers.Conv3DTranspose),
     dict(filters=3, kernel_size=3, strides=2, padding="same"), (2, 3, 4, 3, 2)),
    ((L.Conv3DTranspose, keras.layers.Conv3DTranspose),
     dict(filters=2, kernel_size=(2, 3, 3), strides=(2, 1, 2), output_padding=(1, 0, 1),
          activation="tanh"), (1, 3, 4, 3, 3)),
    ((L.Convolution3DTranspose, keras.layers.Convolution3DTranspose),
     dict(filters=2, kernel_size=2, padding="valid"), (2, 3, 3, 3, 2)),
]


@pytest.mark.parametrize("classes,kwargs,shape", LAYER_CASES,
                         ids=[f"{c[0][0].__name__}-{i}" for i, c in enumerate(LAYER_CASES)])
def test_layer_matches_keras_forward_gradients_and_config(classes, kwargs, shape):
    ours, theirs = classes[0](**kwargs), classes[1](**kwargs)
    for layer in (ours, theirs):
        layer.build((None,) + shape[1:])
    assert [(w.name, tuple(w.shape)) for w in ours.weights] == \
        [(w.name, tuple(w.shape)) for w in theirs.weights]
    weights = [normal(w.shape, 10 + i) * 0.5 for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    assert tuple(ours.compute_output_shape((None,) + shape[1:])) == \
        tuple(theirs.compute_output_shape((None,) + shape[1:]))
    got, got_grads, want, want_grads = both_tapes(ours, theirs, [normal(shape, 3)])
    close(got, want.numpy())
    close(got_grads[0].numpy(), want_grads[0].numpy(), rel=1e-4)
    config, keras_config = ours.get_config(), theirs.get_config()
    for key in ("filters", "kernel_size", "strides", "padding", "dilation_rate", "use_bias",
                "groups", "output_padding"):
        if key in keras_config:
            assert np.array_equal(np.atleast_1d(config[key]), np.atleast_1d(keras_config[key])) \
                or config[key] == keras_config[key], key
    assert type(ours).from_config(config).get_config() == config


def test_a_volume_model_fits_like_keras_and_moves_its_weights(tmp_path):
    """Two SGD epochs of Conv3D -> Conv3DTranspose -> Conv3D from the same weights: Keras's
    losses and weights (the layers traced into the C++ step); Keras's .weights.h5 loads."""
    x, y = normal((6, 4, 5, 4, 2), 7), normal((6, 1), 8)

    def model(module):
        layers = module.layers
        return module.Sequential([
            module.Input((4, 5, 4, 2)), layers.Conv3D(3, 2, activation="relu"),
            layers.Conv3DTranspose(2, 2, strides=(1, 2, 1), padding="same"),
            layers.Conv3D(2, (1, 3, 2), strides=2), layers.Flatten(), layers.Dense(1)])

    ours, theirs = model(ga.keras), model(keras)
    weights = [normal(w.shape, 20 + i) * 0.4 for i, w in enumerate(theirs.get_weights())]
    ours.set_weights(weights)
    theirs.set_weights(weights)
    for m, module in ((ours, ga.keras), (theirs, keras)):
        m.compile(optimizer=module.optimizers.SGD(0.02), loss="mse")
    want = theirs.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    got = ours.fit(x, y, epochs=2, batch_size=3, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, want, rtol=1e-4)
    for g, w in zip(ours.get_weights(), theirs.get_weights()):
        close(g, w, rel=1e-4)
    theirs.save_weights(tmp_path / "v.weights.h5")
    fresh = model(ga.keras)
    fresh.load_weights(tmp_path / "v.weights.h5")
    close(fresh.predict(x, verbose=0), theirs.predict(x, verbose=0), rel=1e-4)


@pytest.mark.parametrize("x_shape,k_shape,kwargs", [
    ((2, 7, 3), (3, 3, 4), dict(strides=2, padding="same")),
    ((2, 6, 5, 4), (3, 2, 2, 6), dict(padding="valid", dilation_rate=(1, 2))),  # 2 groups
    ((1, 5, 4, 6, 2), (2, 3, 2, 2, 3), dict(strides=(1, 2, 2), padding="same")),
])
def test_keras_ops_conv_and_conv_transpose_match_keras(x_shape, k_shape, kwargs):
    x, k = normal(x_shape, 1), normal(k_shape, 2)
    close(ga.keras.ops.conv(x, k, **kwargs).numpy(), keras.ops.conv(x, k, **kwargs).numpy())
    kwargs.pop("dilation_rate", None)
    transposed = normal(k_shape[:-2] + (k_shape[-1], x_shape[-1]), 3)
    for extra in ({}, {"output_padding": 1} if kwargs.get("strides", 1) != 1 else {}):
        close(ga.keras.ops.conv_transpose(x, transposed, **kwargs, **extra).numpy(),
              keras.ops.conv_transpose(x, transposed, **kwargs, **extra).numpy())


def test_torch_conv3d_and_conv_transpose3d_match_pytorch():
    x, w = normal((2, 4, 5, 6, 4), 1), normal((6, 2, 3, 2, 3), 2)  # groups=2: in 4, per group 2
    wt, b = normal((4, 3, 2, 3, 2), 3), normal((6,), 4)
    want = torch_reference.run(
        "xt = torch.tensor(x, requires_grad=True); wtt = torch.tensor(w, requires_grad=True)\n"
        "y = torch.nn.functional.conv3d(xt, wtt, torch.tensor(b), stride=(1, 2, 1), "
        "padding=(1, 0, 1), dilation=(2, 1, 1), groups=2)\n"
        "y.backward(torch.ones_like(y))\n"
        "out['y'] = y.detach().numpy(); out['dx'] = xt.grad.numpy(); out['dw'] = wtt.grad.numpy()\n"
        "out['same'] = torch.conv3d(torch.tensor(x), torch.tensor(w), padding='same', "
        "groups=2).numpy()\n"
        "out['t'] = torch.nn.functional.conv_transpose3d(torch.tensor(x), torch.tensor(wt), "
        "stride=2, padding=(1, 0, 1), output_padding=(1, 0, 0)).numpy()\n"
        "out['t2'] = torch.conv_transpose3d(torch.tensor(x), torch.tensor(wt), "
        "dilation=(1, 2, 1)).numpy()\n",
        x=x, w=w, wt=wt, b=b)
    xt, wtt = gtorch.tensor(x, requires_grad=True), gtorch.tensor(w, requires_grad=True)
    y = gtorch.nn.functional.conv3d(xt, wtt, gtorch.tensor(b), stride=(1, 2, 1),
                                    padding=(1, 0, 1), dilation=(2, 1, 1), groups=2)
    y.backward(gtorch.ones_like(y))
    close(y, want["y"])
    close(xt.grad.numpy(), want["dx"], rel=1e-4)
    close(wtt.grad.numpy(), want["dw"], rel=1e-4)
    close(gtorch.conv3d(gtorch.tensor(x), gtorch.tensor(w), padding="same", groups=2).numpy(),
          want["same"])
    close(gtorch.nn.functional.conv_transpose3d(gtorch.tensor(x), gtorch.tensor(wt), stride=2,
                                                padding=(1, 0, 1),
                                                output_padding=(1, 0, 0)).numpy(), want["t"])
    close(gtorch.conv_transpose3d(gtorch.tensor(x), gtorch.tensor(wt),
                                  dilation=(1, 2, 1)).numpy(), want["t2"])


def test_torch_conv_transpose2d_top_level_matches_pytorch():
    x, w = normal((1, 3, 5, 4), 5), normal((3, 2, 3, 3), 6)
    want = torch_reference.run(
        "out['y'] = torch.conv_transpose2d(torch.tensor(x), torch.tensor(w), stride=2, "
        "padding=1).numpy()\n", x=x, w=w)
    close(gtorch.conv_transpose2d(gtorch.tensor(x), gtorch.tensor(w), stride=2,
                                  padding=1).numpy(), want["y"])
