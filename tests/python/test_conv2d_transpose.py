"""Conv2DTranspose end to end: the op (``gpuaccel.nn.conv2d_transpose``) against a direct NumPy
loop and against ``tf.nn.conv2d_transpose``, its gradients (input, kernel, bias) against finite
differences, the Keras layer against real Keras 3 with the same weights (outputs, gradients, one
SGD fit step, config and weight files), ``torch.nn.functional.conv_transpose2d`` against PyTorch
(torch_reference), and the typed errors for bad input."""
import numpy as np
import pytest

import gpuaccel as ga
import gpuaccel.torch as gtorch
from gpuaccel import errors
from gpuaccel.keras import layers as L
import torch_reference

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")


def rng(seed):
    return np.random.default_rng(seed)


def npy(t):
    """An output that requires grad as NumPy (detached first, as torch asks)."""
    return t.detach().numpy()


def close(got, want, rel=1e-5):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(float(np.abs(want).max()), 1e-6)
    np.testing.assert_allclose(got, want, rtol=0, atol=rel * scale)


def reference_transpose(x, w, bias, stride, dilation, pads, out_hw):
    """The definition, one input pixel at a time: x[n, i, j] scattered through the kernel
    w (kh, kw, F, C) into y at (i * stride - pad_top + a * dilation, ...)."""
    n, h, wd, _ = x.shape
    kh, kw, f, _ = w.shape
    y = np.zeros((n, out_hw[0], out_hw[1], f), np.float64)
    for b in range(n):
        for i in range(h):
            for j in range(wd):
                for a in range(kh):
                    for c in range(kw):
                        oy = i * stride[0] - pads[0] + a * dilation[0]
                        ox = j * stride[1] - pads[2] + c * dilation[1]
                        if 0 <= oy < out_hw[0] and 0 <= ox < out_hw[1]:
                            y[b, oy, ox] += w[a, c].astype(np.float64) @ x[b, i, j]
    if bias is not None:
        y += bias
    return y


def tf_pads(out, kernel, stride, dilation, padding):
    """TF's padding of the convolution of an output of size ``out`` (top/left, bottom/right)."""
    if padding == "VALID":
        return 0, 0
    effective = (kernel - 1) * dilation + 1
    total = max((-(-out // stride) - 1) * stride + effective - out, 0)
    return total // 2, total - total // 2


# (input HW, kernel HW, strides, dilations, padding, output HW)
OP_CASES = [
    ((4, 5), (3, 3), (2, 2), (1, 1), "SAME", (8, 10)),
    ((4, 5), (3, 3), (2, 2), (1, 1), "SAME", (7, 9)),   # odd output: asymmetric padding
    ((3, 4), (3, 2), (2, 3), (1, 1), "VALID", (7, 11)),  # extra row/columns (output_padding)
    ((3, 3), (1, 1), (3, 3), (1, 1), "VALID", (9, 9)),   # kernel smaller than the stride
    ((5, 4), (3, 3), (1, 1), (2, 2), "SAME", (5, 4)),    # dilated
    ((2, 3), (4, 3), (2, 2), (1, 1), "VALID", (6, 7)),
]


@pytest.mark.parametrize("case", OP_CASES)
@pytest.mark.parametrize("with_bias", [False, True])
def test_op_matches_numpy_loop_and_tf(case, with_bias):
    (h, w), (kh, kw), strides, dilations, padding, out_hw = case
    r = rng(1)
    x = r.standard_normal((2, h, w, 3)).astype(np.float32)
    k = r.standard_normal((kh, kw, 4, 3)).astype(np.float32)
    b = r.standard_normal(4).astype(np.float32) if with_bias else None
    pads = (*tf_pads(out_hw[0], kh, strides[0], dilations[0], padding),
            *tf_pads(out_hw[1], kw, strides[1], dilations[1], padding))
    want = reference_transpose(x, k, b, strides, dilations, pads, out_hw)
    out_shape = [2, *out_hw, 4]
    y = ga.nn.conv2d_transpose(x, k, out_shape, list(strides), padding, dilations=list(dilations))
    if b is not None:
        y = ga.nn.bias_add(y, b)
    close(y.numpy(), want)
    theirs = tf.nn.conv2d_transpose(x, k, out_shape, list(strides), padding,
                                    dilations=list(dilations))
    close(theirs.numpy() + (0 if b is None else b), want)  # the reference is TF's meaning


@pytest.mark.parametrize("case", [OP_CASES[1], OP_CASES[2], OP_CASES[4]])
def test_gradients_match_finite_differences(case):
    """y is bilinear in (x, kernel) and linear in the bias, so a central difference of
    sum(y * upstream) is exact up to float32 rounding: every coordinate is checked."""
    (h, w), (kh, kw), strides, dilations, padding, out_hw = case
    r = rng(2)
    x = r.standard_normal((1, h, w, 2)).astype(np.float32)
    k = r.standard_normal((kh, kw, 3, 2)).astype(np.float32)
    b = r.standard_normal(3).astype(np.float32)
    upstream = r.standard_normal((1, *out_hw, 3)).astype(np.float32)
    pads = (*tf_pads(out_hw[0], kh, strides[0], dilations[0], padding),
            *tf_pads(out_hw[1], kw, strides[1], dilations[1], padding))

    def loss(xv, kv, bv):
        y = ga._C.conv2d_transpose_padded(ga.tensor(xv), ga.tensor(kv), ga.tensor(bv), *out_hw,
                                          *strides, *dilations, list(pads))
        return float((y.numpy().astype(np.float64) * upstream).sum())

    tx, tk, tb = ga.Variable(x), ga.Variable(k), ga.Variable(b)
    with ga.GradientTape() as tape:
        y = ga._C.conv2d_transpose_padded(tx, tk, tb, *out_hw, *strides, *dilations, list(pads))
        total = ga.reduce_sum(y * ga.tensor(upstream))
    grads = [g.numpy() for g in tape.gradient(total, [tx, tk, tb])]

    eps = 0.5
    for index, value in enumerate((x, k, b)):
        numeric = np.zeros(value.shape, np.float64)
        for pos in np.ndindex(value.shape):
            args = [x, k, b]
            plus, minus = value.copy(), value.copy()
            plus[pos] += eps
            minus[pos] -= eps
            args[index] = plus
            up = loss(*args)
            args[index] = minus
            numeric[pos] = (up - loss(*args)) / (2 * eps)
        close(grads[index], numeric, rel=1e-4)


# ---- the Keras layer ----

LAYER_CASES = [
    dict(filters=3, kernel_size=3, strides=2, padding="same"),
    dict(filters=2, kernel_size=3, strides=2, padding="valid"),
    dict(filters=4, kernel_size=(3, 2), strides=(2, 3), padding="same", output_padding=(1, 2)),
    dict(filters=3, kernel_size=4, strides=2, padding="valid", output_padding=1, activation="relu"),
    dict(filters=2, kernel_size=3, dilation_rate=2, padding="same", use_bias=False,
         activation="tanh"),
    dict(filters=3, kernel_size=1, strides=3, padding="valid"),
    dict(filters=2, kernel_size=3, strides=2, padding="same", output_padding=0,
         activation="sigmoid"),
]


def set_same_weights(ours, theirs, seed=42):
    r = rng(seed)
    weights = [(r.standard_normal(w.shape) * 0.5).astype(np.float32) for w in theirs.get_weights()]
    theirs.set_weights(weights)
    ours.set_weights(weights)


@pytest.mark.parametrize("kwargs", LAYER_CASES)
def test_layer_matches_keras(kwargs):
    ours, theirs = L.Conv2DTranspose(**kwargs), keras.layers.Conv2DTranspose(**kwargs)
    x = rng(3).standard_normal((2, 5, 6, 3)).astype(np.float32)
    for layer in (ours, theirs):
        layer.build((None, 5, 6, 3))
    assert [tuple(w.shape) for w in ours.get_weights()] == \
        [tuple(w.shape) for w in theirs.get_weights()]
    set_same_weights(ours, theirs)
    assert tuple(ours.compute_output_shape((None, 5, 6, 3))) == \
        tuple(theirs.compute_output_shape((None, 5, 6, 3)))

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
    for g, w in zip(got_grads, want_grads):
        close(npy(g), w.numpy(), rel=1e-4)


def decoder(lib):
    return lib.Sequential([
        lib.Input((4, 4, 2)),
        lib.layers.Conv2DTranspose(3, 3, strides=2, padding="same", activation="relu"),
        lib.layers.Conv2DTranspose(1, 2, strides=2, padding="valid", output_padding=1)])


def test_fit_step_matches_keras():
    ours, theirs = decoder(ga.keras), decoder(keras)
    weights = [(rng(7).standard_normal(w.shape) * 0.3).astype(np.float32)
               for w in theirs.get_weights()]
    theirs.set_weights(weights)
    ours.set_weights(weights)
    x = rng(8).standard_normal((8, 4, 4, 2)).astype(np.float32)
    target = rng(9).standard_normal((8, 17, 17, 1)).astype(np.float32)
    assert ours.output_shape == tuple(theirs.output_shape) == (None, 17, 17, 1)
    for model, lib in ((ours, ga.keras), (theirs, keras)):
        model.compile(optimizer=lib.optimizers.SGD(learning_rate=0.1), loss="mse")
    our_loss = ours.train_on_batch(x, target)
    their_loss = theirs.train_on_batch(x, target)
    assert float(our_loss) == pytest.approx(float(their_loss), rel=1e-5)
    for a, b in zip(ours.get_weights(), theirs.get_weights()):
        close(a, b, rel=1e-5)
    assert not np.allclose(ours.get_weights()[0], weights[0])  # the step did move the kernel


def test_config_and_weight_files_round_trip_with_keras(tmp_path):
    assert L.Convolution2DTranspose is L.Conv2DTranspose  # Keras's other name, as Keras has it
    assert keras.layers.Convolution2DTranspose is keras.layers.Conv2DTranspose
    ours = decoder(ga.keras)
    config = ours.layers[1].get_config()
    assert config["output_padding"] == (1, 1) and config["kernel_size"] == (2, 2)
    clone = L.Conv2DTranspose.from_config(config)
    assert clone.get_config() == config
    x = rng(10).standard_normal((3, 4, 4, 2)).astype(np.float32)
    path = str(tmp_path / "decoder.weights.h5")
    ours.save_weights(path)
    theirs = decoder(keras)
    theirs.load_weights(path)
    close(theirs.predict(x, verbose=0), ours.predict(x, verbose=0))
    archive = str(tmp_path / "decoder.keras")
    ours.save(archive)
    loaded = ga.keras.models.load_model(archive)
    close(loaded.predict(x, verbose=0), ours.predict(x, verbose=0), rel=0)
    assert type(loaded.layers[0]).__name__ == "Conv2DTranspose"
    close(keras.models.load_model(archive).predict(x, verbose=0), ours.predict(x, verbose=0))


# ---- the torch face ----

TORCH_CASES = [
    dict(stride=2, padding=1, output_padding=1, dilation=1),
    dict(stride=(2, 3), padding=(0, 1), output_padding=(1, 2), dilation=1),
    dict(stride=1, padding=2, output_padding=0, dilation=2),
    dict(stride=3, padding=0, output_padding=0, dilation=1),
]


@pytest.mark.parametrize("kwargs", TORCH_CASES)
def test_torch_conv_transpose2d_matches_pytorch(kwargs):
    r = rng(11)
    x = r.standard_normal((2, 3, 4, 5)).astype(np.float32)
    w = r.standard_normal((3, 2, 3, 3)).astype(np.float32)  # (in, out, kh, kw)
    b = r.standard_normal(2).astype(np.float32)
    F = gtorch.nn.functional
    tx, tw, tb = ga.Variable(x), ga.Variable(w), ga.Variable(b)
    with ga.GradientTape() as tape:
        y = F.conv_transpose2d(tx, tw, tb, **kwargs)
        up = r.standard_normal(tuple(y.shape)).astype(np.float32)
        total = ga.reduce_sum(y * ga.tensor(up))
    grads = tape.gradient(total, [tx, tw, tb])
    ref = torch_reference.run(
        "tx = torch.tensor(x, requires_grad=True); tw = torch.tensor(w, requires_grad=True)\n"
        "tb = torch.tensor(b, requires_grad=True)\n"
        f"y = torch.nn.functional.conv_transpose2d(tx, tw, tb, **{kwargs!r})\n"
        "(y * torch.tensor(up)).sum().backward()\n"
        "out['y'] = y.tolist()\n"
        "out['gx'] = tx.grad.numpy(); out['gw'] = tw.grad.numpy(); out['gb'] = tb.grad.numpy()\n",
        x=x, w=w, b=b, up=up)
    assert "error" not in ref, ref
    close(npy(y), np.asarray(ref["y"], np.float32))
    for got, name in zip(grads, ("gx", "gw", "gb")):
        close(got.numpy(), ref[name], rel=1e-4)


# ---- errors ----

def test_bad_input_gets_typed_errors():
    x = np.zeros((1, 4, 4, 3), np.float32)
    k = np.zeros((3, 3, 2, 3), np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="rank 4"):
        ga.nn.conv2d_transpose(x[0], k, [1, 8, 8, 2], 2, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="input has 3 channels but the kernel"):
        ga.nn.conv2d_transpose(x, k[..., :2], [1, 8, 8, 2], 2, "SAME")
    with pytest.raises(errors.InvalidArgumentError, match="does not fit an input of"):
        ga.nn.conv2d_transpose(x, k, [1, 11, 8, 2], 2, "SAME")
    with pytest.raises(ValueError, match="output_shape"):
        ga.nn.conv2d_transpose(x, k, [1, 8, 8, 5], 2, "SAME")
    # Keras 3 sizes this output 8 (4 * 2 + 2 % 2 + 0), which no 'same' convolution takes back
    # to 5: TF fails inside its kernel, gpuaccel names the sizes.
    with pytest.raises(errors.InvalidArgumentError,
                       match=r"\(8, 10\) does not fit an input of \(5, 6\)"):
        L.Conv2DTranspose(2, 2, strides=2, padding="same", output_padding=0)(
            np.zeros((1, 5, 6, 3), np.float32))
    with pytest.raises(ValueError, match="strictly less than `strides`"):
        L.Conv2DTranspose(2, 3, strides=2, output_padding=2)
    with pytest.raises(ValueError, match="dilation_rate > 1"):
        L.Conv2DTranspose(2, 3, strides=2, dilation_rate=2)
    F = gtorch.nn.functional
    xt = np.zeros((1, 3, 4, 4), np.float32)
    wt = np.zeros((3, 2, 3, 3), np.float32)
    with pytest.raises(ValueError, match="output_padding"):
        F.conv_transpose2d(xt, wt, stride=2, output_padding=2)
    with pytest.raises(ValueError, match="groups"):
        F.conv_transpose2d(xt, wt, groups=3)
    with pytest.raises(RuntimeError, match=r"expected \(3, out, kh, kw\)"):
        F.conv_transpose2d(xt, wt[:2])
    with pytest.raises(errors.InvalidArgumentError, match="output_padding must be smaller"):
        ga._C.conv2d_transpose_padded(ga.tensor(x), ga.tensor(k), None, 11, 8, 2, 2, 1, 1,
                                      [0, 0, 0, 0])
    with pytest.raises(AttributeError, match="conv_transpose2d"):
        gtorch.nn.ConvTranspose2d


# ---- the CUDA backend's boundary, on the tests' fake CUDA library ----

FAKE_GPU_PROBE = r"""
import json
import numpy as np
import gpuaccel as ga
from gpuaccel.keras import layers as L

r = np.random.default_rng(0)
x = r.standard_normal((2, 4, 5, 3)).astype('float32')
upstream = r.standard_normal((2, 8, 10, 4)).astype('float32')
kernel = r.standard_normal((3, 3, 4, 3)).astype('float32')

def run(device):
    with ga.device(device):
        layer = L.Conv2DTranspose(4, 3, strides=2, padding='same')
        layer.build((None, 4, 5, 3))
        layer.set_weights([kernel, np.arange(4.0, dtype='float32')])
        tx = ga.Variable(x)
        with ga.GradientTape() as tape:
            y = layer(tx)
        grads = tape.gradient(y, [tx, *layer.trainable_weights],
                              output_gradients=ga.tensor(upstream))
        with ga.no_grad():
            y = layer(tx)
        return [y.numpy().tolist()] + [g.numpy().tolist() for g in grads]

ops, layouts = fake_counters.ops, fake_counters.kernel_layout_copies
gpu = run('/GPU:0')
out = {'ops': fake_counters.ops - ops, 'layouts': fake_counters.kernel_layout_copies - layouts}
out['same'] = gpu == run('/CPU:0')
print(json.dumps(out))
"""


def test_fake_gpu_runs_the_op_through_the_library_as_the_cpu():
    """The CUDA backend's override and the fake's forward (tests/cpp/fake_cuda_library.cc, the
    CPU kernels behind the library boundary, the kernel through its KRSC copy as cuDNN gets
    it): forward and the three gradients equal the CPU's bit for bit."""
    from test_library_backend import FAKE_COUNTERS, run_with_fake
    r = run_with_fake(FAKE_COUNTERS + FAKE_GPU_PROBE)
    assert r["same"]
    assert r["ops"] >= 4  # forward, conv2d_forward (dx), backward weights (dw), reduce (db)
    assert r["layouts"] >= 1  # the kernel went through the KRSC copy cuDNN's filters take


@pytest.mark.parametrize("dtype,rel", [("float16", 2e-3), ("bfloat16", 2e-2)])
def test_16_bit_dtypes_match_float32_to_their_rounding(dtype, rel):
    """The 16-bit types (oneDNN's f16 staged through f32) with the bias in the same op."""
    r = rng(12)
    x = r.standard_normal((2, 4, 5, 3)).astype(np.float32)
    k = (r.standard_normal((3, 3, 4, 3)) * 0.3).astype(np.float32)
    b = r.standard_normal(4).astype(np.float32)
    want = reference_transpose(x, k, b, (2, 2), (1, 1),
                               (*tf_pads(7, 3, 2, 1, "SAME"), *tf_pads(9, 3, 2, 1, "SAME")), (7, 9))

    def low(a):
        return ga.cast(ga.tensor(a), dtype)
    got = ga._C.conv2d_transpose(low(x), low(k), low(b), 7, 9, 2, 2, "SAME", 1, 1)
    assert got.dtype.name == dtype
    close(ga.cast(got, "float32").numpy(), want, rel=rel)
