"""Grouped convolutions (the conv2d op's groups, Conv2dParams::groups) end to end against the
frameworks with the same weights and inputs: Keras's Conv2D(groups=), DepthwiseConv1D/2D and
SeparableConv1D/2D (outputs, gradients of input and weights, a short fit, weight layouts,
configs, Keras's errors), tf.nn.depthwise_conv2d and tf.nn.separable_conv2d (now one grouped
conv each), and torch's F.conv2d / F.conv1d(groups=) against PyTorch (torch_reference)."""
import numpy as np
import pytest

import gpuaccel as ga
import gpuaccel.torch as gtorch
from gpuaccel.keras import layers as L
import torch_reference
from numeric_asserts import close, npy  # noqa: F401 (test_keras_conv3d imports close from here)

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")


def rng(seed):
    return np.random.default_rng(seed)


def same_weights(ours, theirs, seed=42):
    r = rng(seed)
    weights = [(r.standard_normal(w.shape) * 0.5).astype(np.float32) for w in theirs.get_weights()]
    theirs.set_weights(weights)
    ours.set_weights(weights)


# (layer class name, arguments, input shape): every new layer, and Conv2D/Conv1D grouped.
LAYER_CASES = [
    ("Conv2D", dict(filters=6, kernel_size=3, groups=2, padding="same"), (2, 6, 5, 4)),
    ("Conv1D", dict(filters=4, kernel_size=2, groups=4, strides=2, activation="relu"), (2, 7, 8)),
    ("DepthwiseConv2D", dict(kernel_size=3, depth_multiplier=2, strides=2, padding="same",
                             activation="tanh"), (2, 7, 6, 3)),
    ("DepthwiseConv2D", dict(kernel_size=(3, 2), dilation_rate=2, use_bias=False), (1, 8, 7, 4)),
    ("DepthwiseConv1D", dict(kernel_size=3, depth_multiplier=3, padding="same"), (2, 6, 2)),
    ("SeparableConv2D", dict(filters=5, kernel_size=3, depth_multiplier=2, strides=(2, 1),
                             activation="relu"), (2, 7, 6, 3)),
    ("SeparableConv1D", dict(filters=3, kernel_size=2, dilation_rate=2, padding="same"),
     (2, 9, 4)),
]


@pytest.mark.parametrize("name,kwargs,shape", LAYER_CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(LAYER_CASES)])
def test_layer_matches_keras_forward_and_gradients(name, kwargs, shape):
    assert_layer_matches_keras(getattr(L, name)(**kwargs), getattr(keras.layers, name)(**kwargs),
                               shape)


def assert_layer_matches_keras(ours, theirs, shape):
    """The same weight names and shapes, output shape, outputs, and gradients of the input and
    the weights from the same seeded weights and input (test_keras_conv3d.py uses it too)."""
    for layer in (ours, theirs):
        layer.build((None,) + shape[1:])
    assert [tuple(w.shape) for w in ours.get_weights()] == \
        [tuple(w.shape) for w in theirs.get_weights()]
    assert [w.name for w in ours.weights] == [w.name for w in theirs.weights]
    same_weights(ours, theirs)
    assert tuple(ours.compute_output_shape((None,) + shape[1:])) == \
        tuple(theirs.compute_output_shape((None,) + shape[1:]))

    x = rng(3).standard_normal(shape).astype(np.float32)
    tx = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(tx)
        want = theirs(tx)
    upstream = rng(4).standard_normal(want.shape).astype(np.float32)
    want_grads = tape.gradient(want, [tx, *theirs.trainable_weights],
                               output_gradients=tf.constant(upstream))
    gx = ga.Variable(x)
    with ga.GradientTape() as tape:
        got = ours(gx)
    got_grads = tape.gradient(got, [gx, *ours.trainable_weights],
                              output_gradients=ga.tensor(upstream))
    close(npy(got), want.numpy())
    assert len(got_grads) == len(want_grads)
    for g, w in zip(got_grads, want_grads):
        close(g.numpy(), w.numpy(), rel=1e-4)


def test_depthwise_and_separable_fit_like_keras():
    """Two SGD epochs of a model with both layers, from the same weights: the same losses and
    weights as Keras (the layers' gradients inside the C++ step, traced)."""
    x = rng(7).standard_normal((8, 6, 6, 3)).astype(np.float32)
    y = rng(8).standard_normal((8, 1)).astype(np.float32)

    def model(module):
        return module.Sequential([
            module.Input((6, 6, 3)),
            module.layers.DepthwiseConv2D(3, depth_multiplier=2, activation="relu"),
            module.layers.SeparableConv2D(4, 2, padding="same"),
            module.layers.Flatten(), module.layers.Dense(1)])

    ours, theirs = model(ga.keras), model(keras)
    same_weights(ours, theirs, seed=9)
    for m, module in ((ours, ga.keras), (theirs, keras)):
        m.compile(optimizer=module.optimizers.SGD(0.01), loss="mse")
    want = theirs.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0).history["loss"]
    got = ours.fit(x, y, epochs=2, batch_size=4, shuffle=False, verbose=0).history["loss"]
    np.testing.assert_allclose(got, want, rtol=1e-4)
    for g, w in zip(ours.get_weights(), theirs.get_weights()):
        close(g, w, rel=1e-4)


def test_weight_files_and_archives_move_between_keras_and_gpuaccel(tmp_path):
    """Keras's .weights.h5 loads into the same gpuaccel model, and a gpuaccel .keras archive
    loads back in both (the layers' configs and weight layouts are Keras 3's)."""
    def model(module):
        L_ = module.layers
        return module.Sequential([module.Input((6, 6, 3)), L_.DepthwiseConv2D(3, depth_multiplier=2),
                                  L_.SeparableConv2D(4, 2), L_.Conv2D(4, 1, groups=2),
                                  L_.Flatten(), L_.Dense(1)])
    theirs, ours = model(keras), model(ga.keras)
    theirs.save_weights(tmp_path / "w.weights.h5")
    ours.load_weights(tmp_path / "w.weights.h5")
    x = rng(5).standard_normal((2, 6, 6, 3)).astype(np.float32)
    want = theirs.predict(x, verbose=0)
    close(ours.predict(x, verbose=0), want)
    ours.save(tmp_path / "m.keras")
    close(ga.keras.models.load_model(tmp_path / "m.keras").predict(x, verbose=0), want)
    close(keras.models.load_model(tmp_path / "m.keras").predict(x, verbose=0), want)


def test_configs_round_trip_and_aliases():
    layer = L.SeparableConv2D(4, 3, depth_multiplier=2, name="sep")
    config = layer.get_config()
    want = keras.layers.SeparableConv2D(4, 3, depth_multiplier=2, name="sep").get_config()
    for key in ("filters", "kernel_size", "strides", "padding", "dilation_rate",
                "depth_multiplier", "use_bias"):
        assert tuple(np.atleast_1d(config[key])) == tuple(np.atleast_1d(want[key])), key
    assert L.SeparableConv2D.from_config(config).get_config() == config
    assert L.Conv2D(4, 3, groups=2).get_config()["groups"] == 2
    # Keras's other names, and the 1-D layers' shapes, against Keras's own.
    pairs = [(ga.keras.layers.SeparableConvolution2D(3, 2), keras.layers.SeparableConvolution2D(3, 2),
              (None, 5, 5, 2)),
             (ga.keras.layers.SeparableConvolution1D(3, 2), keras.layers.SeparableConvolution1D(3, 2),
              (None, 5, 2)),
             (ga.keras.layers.DepthwiseConv1D(2, depth_multiplier=2),
              keras.layers.DepthwiseConv1D(2, depth_multiplier=2), (None, 5, 3))]
    for ours, theirs, shape in pairs:
        assert type(ours).__name__ == type(theirs).__name__
        for layer in (ours, theirs):
            layer.build(shape)
        assert [tuple(w.shape) for w in ours.get_weights()] == \
            [tuple(w.shape) for w in theirs.get_weights()]
        assert tuple(ours.compute_output_shape(shape)) == tuple(theirs.compute_output_shape(shape))


def keras_error(make, build_shape=None):
    try:
        layer = make()
        if build_shape is not None:
            layer.build(build_shape)
    except ValueError as e:
        return str(e)
    raise AssertionError("no ValueError")


@pytest.mark.parametrize("make,shape", [
    (lambda m: m.layers.Conv2D(5, 3, groups=2), None),
    (lambda m: m.layers.Conv2D(4, 3, groups=0), None),
    (lambda m: m.layers.Conv2D(4, 3, groups=2), (None, 5, 5, 3)),
    (lambda m: m.layers.Conv1D(6, 3, groups=3), (None, 5, 4)),
    (lambda m: m.layers.DepthwiseConv2D(3, depth_multiplier=0), None),
    (lambda m: m.layers.SeparableConv1D(0, 3), None),
    (lambda m: m.layers.SeparableConv1D(2, 3, depth_multiplier=-1), None),
])
def test_bad_groups_and_multipliers_raise_keras_errors(make, shape):
    want = keras_error(lambda: make(keras), shape)
    got = keras_error(lambda: make(ga.keras), shape)
    # Keras's words; the C++ layers put "[Conv2D 'name'] " before them.
    assert want.split(" (full input shape")[0] in got, (got, want)


def test_tf_nn_depthwise_and_separable_conv2d_match_tensorflow():
    r = rng(11)
    x = r.standard_normal((2, 7, 8, 3)).astype(np.float32)
    depthwise = r.standard_normal((3, 3, 3, 2)).astype(np.float32)
    pointwise = r.standard_normal((1, 1, 6, 4)).astype(np.float32)
    upstream = r.standard_normal((2, 4, 4, 6)).astype(np.float32)

    tx, tk = tf.constant(x), tf.constant(depthwise)
    with tf.GradientTape() as tape:
        tape.watch([tx, tk])
        want = tf.nn.depthwise_conv2d(tx, tk, [1, 2, 2, 1], "SAME")
    want_grads = tape.gradient(want, [tx, tk], output_gradients=tf.constant(upstream))
    gx, gk = ga.Variable(x), ga.Variable(depthwise)
    with ga.GradientTape() as tape:
        got = ga.nn.depthwise_conv2d(gx, gk, [1, 2, 2, 1], "SAME")
    got_grads = tape.gradient(got, [gx, gk], output_gradients=ga.tensor(upstream))
    close(npy(got), want.numpy())
    for g, w in zip(got_grads, want_grads):
        close(g.numpy(), w.numpy(), rel=1e-4)

    want = tf.nn.separable_conv2d(tx, tk, tf.constant(pointwise), [1, 1, 1, 1], "VALID",
                                  dilations=[2, 2])
    got = ga.nn.separable_conv2d(x, depthwise, pointwise, [1, 1, 1, 1], "VALID", dilations=[2, 2])
    close(got.numpy(), want.numpy())


# torch's grouped F.conv2d / F.conv1d cases (groups, stride, padding) and bad (weight shape,
# groups) pairs for an input of 4 channels; PyTorch computes them all in one child process
# (starting torch costs seconds).
TORCH_CASES = [(2, 1, 1), (4, 2, 0)]
TORCH_BAD = [((3, 2, 3, 3), 2), ((4, 1, 3, 3), 2), ((4, 4, 3, 3), 0)]


def torch_inputs(groups, seed):
    r = rng(seed)
    return {"x": r.standard_normal((2, 4, 6, 5)).astype(np.float32),
            "w": r.standard_normal((8, 4 // groups, 3, 3)).astype(np.float32),
            "b": r.standard_normal((8,)).astype(np.float32),
            "w1": r.standard_normal((4, 4 // groups, 2)).astype(np.float32),
            "up": r.standard_normal((2, 8, 6, 5)).astype(np.float32)}  # cut to y's shape


@pytest.fixture(scope="module")
def torch_results():
    inputs = {}
    for index, (groups, _, _) in enumerate(TORCH_CASES):
        inputs.update({f"{k}{index}": v for k, v in torch_inputs(groups, 13 + index).items()})
    snippet = (
        "F = torch.nn.functional\n"
        f"for i, (groups, stride, padding) in enumerate({TORCH_CASES!r}):\n"
        "    x, w, b = (torch.tensor(scope_arrays[k + str(i)], requires_grad=True)\n"
        "               for k in ('x', 'w', 'b'))\n"
        "    y = F.conv2d(x, w, b, stride=stride, padding=padding, groups=groups)\n"
        "    up = torch.tensor(scope_arrays['up' + str(i)])[:, :, :y.shape[2], :y.shape[3]]\n"
        "    (y * up).sum().backward()\n"
        "    y1 = F.conv1d(x.detach()[:, :, 0], torch.tensor(scope_arrays['w1' + str(i)]),\n"
        "                  stride=stride, groups=groups)\n"
        "    out.update({k + str(i): v for k, v in dict(y=y.detach().numpy(), gx=x.grad.numpy(),\n"
        "               gw=w.grad.numpy(), gb=b.grad.numpy(), y1=y1.numpy()).items()})\n"
        "out['errors'] = []\n"
        f"for shape, groups in {TORCH_BAD!r}:\n"
        "    try:\n"
        "        F.conv2d(torch.zeros(1, 4, 5, 5), torch.zeros(shape), groups=groups)\n"
        "        out['errors'].append(None)\n"
        "    except RuntimeError as e:\n"
        "        out['errors'].append(str(e))\n")
    ref = torch_reference.run("scope_arrays = {k: v for k, v in dict(globals()).items() "
                              "if isinstance(v, np.ndarray)}\n" + snippet, **inputs)
    assert "error" not in ref, ref
    return ref


@pytest.mark.parametrize("index", range(len(TORCH_CASES)))
def test_torch_conv2d_and_conv1d_groups_match_pytorch(torch_results, index):
    F = gtorch.nn.functional
    groups, stride, padding = TORCH_CASES[index]
    v = torch_inputs(groups, 13 + index)
    tx, tw, tb = ga.Variable(v["x"]), ga.Variable(v["w"]), ga.Variable(v["b"])
    with ga.GradientTape() as tape:
        y = F.conv2d(tx, tw, tb, stride=stride, padding=padding, groups=groups)
        up = v["up"][:, :, :y.shape[2], :y.shape[3]]
        total = ga.reduce_sum(y * ga.tensor(np.ascontiguousarray(up)))
    grads = tape.gradient(total, [tx, tw, tb])
    y1 = F.conv1d(ga.tensor(v["x"][:, :, 0]), ga.tensor(v["w1"]), stride=stride, groups=groups)
    close(npy(y), torch_results[f"y{index}"])
    for got, name in zip(grads, ("gx", "gw", "gb")):
        close(got.numpy(), torch_results[f"{name}{index}"], rel=1e-4)
    close(y1.numpy(), torch_results[f"y1{index}"])


def test_torch_groups_errors_match_pytorch(torch_results):
    F = gtorch.nn.functional
    x = ga.tensor(np.zeros((1, 4, 5, 5), np.float32))
    for (shape, groups), want in zip(TORCH_BAD, torch_results["errors"]):
        with pytest.raises(RuntimeError) as info:
            F.conv2d(x, ga.tensor(np.zeros(shape, np.float32)), groups=groups)
        assert str(info.value) == want
