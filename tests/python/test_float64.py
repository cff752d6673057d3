"""float64 (torch.double, tf.float64) against NumPy, TensorFlow and PyTorch (torch_reference):
creation and casts keep every one of the 53 bits, element-wise ops, reductions and matmul compute
in float64, gradients flow in float64 (torch.autograd.gradcheck at PyTorch's default
tolerances), the promotion rules, file formats (torch.save, tf.io.serialize_tensor), and the
layer kernels that have no float64 refuse it by name."""
import math

import numpy as np
import pytest
import tensorflow as tf_real

import gpuaccel as tf
import gpuaccel.torch as torch
import torch_reference
from gpuaccel import errors

RNG = np.random.default_rng(64)
X = RNG.standard_normal((5, 7))
Y = RNG.standard_normal((7, 3))
POSITIVE = RNG.uniform(0.1, 3.0, (4, 6))


def f64(array):
    return torch.tensor(array, dtype=torch.float64)


# ---- dtype objects and creation ----

def test_the_dtype_objects_of_both_faces():
    assert torch.float64 is torch.double is tf.float64 is tf.double
    assert tf.float64.name == "float64" and tf.float64.itemsize == 8
    assert tf.float64.is_floating_point and tf.float64.is_floating
    assert tf.float64 == np.float64 and tf.float64 == "double"
    assert tf.as_dtype(np.dtype("float64")) is tf.float64
    assert tf.float64.as_numpy_dtype is np.float64
    assert str(torch.float64) == "gpuaccel.float64"


def test_legacy_double_tensor_constructor_and_isinstance():
    ref = torch_reference.run("t = torch.DoubleTensor([[0.1, 2.0]]); z = torch.DoubleTensor(2, 3)\n"
                              "out['t'] = t.numpy(); out['z'] = list(z.shape)\n"
                              "out['is'] = isinstance(t, torch.DoubleTensor)")
    t = torch.DoubleTensor([[0.1, 2.0]])
    assert t.dtype == torch.float64 and isinstance(t, torch.DoubleTensor) == ref["is"]
    np.testing.assert_array_equal(t.numpy(), ref["t"])
    assert list(torch.DoubleTensor(2, 3).shape) == ref["z"]
    assert not isinstance(torch.ones(2), torch.DoubleTensor)
    assert tf.constant([1.5], dtype=tf.double).dtype == tf_real.constant([1.5], tf_real.double).dtype.name


def test_creation_keeps_all_53_bits():
    values = [0.1, 1.0 + 2.0 ** -52, 1e300, -2.0 ** -1000]
    t = torch.tensor(values, dtype=torch.float64)
    assert t.dtype == torch.float64
    np.testing.assert_array_equal(t.numpy(), np.array(values))
    assert t.numpy().dtype == np.float64
    c = tf.constant(values, dtype=tf.float64)
    np.testing.assert_array_equal(c.numpy(), tf_real.constant(values, tf_real.float64).numpy())
    np.testing.assert_array_equal(torch.full((2, 2), 0.1, dtype=torch.float64).numpy(),
                                  np.full((2, 2), 0.1))
    np.testing.assert_array_equal(torch.zeros(3, dtype=torch.double).numpy(), np.zeros(3))
    np.testing.assert_array_equal(torch.arange(0, 5, 0.5, dtype=torch.float64).numpy(),
                                  np.arange(0, 5, 0.5))
    assert torch.tensor(7, dtype=torch.float64).item() == 7.0


def test_a_numpy_float64_array_is_float32_unless_float64_is_asked_for():
    # gpuaccel's documented default (Keras's floatx, JAX's default): float64 only when asked.
    assert torch.tensor(X).dtype == torch.float32
    assert tf.constant(X).dtype == tf.float32
    assert torch.tensor(X, dtype=torch.float64).dtype == torch.float64
    assert tf.constant(X, dtype=tf.float64).dtype == tf.float64
    assert torch.as_tensor(X, dtype=torch.double).dtype == torch.double


def test_from_numpy_shares_a_float64_array_as_torch_does():
    array = X.copy()
    t = torch.from_numpy(array)
    assert t.dtype == torch.float64
    array[0, 0] = 123.25
    assert t.numpy()[0, 0] == 123.25
    np.testing.assert_array_equal(t.numpy(), array)
    transposed = torch.from_numpy(array.T)  # a strided view is shared too
    np.testing.assert_array_equal(transposed.numpy(), array.T)


def test_casts_round_as_numpy_does():
    wide = f64(X * 1e-3 + 1.0)
    np.testing.assert_array_equal(wide.float().numpy(), (X * 1e-3 + 1.0).astype(np.float32))
    narrow = torch.tensor(X.astype(np.float32))
    np.testing.assert_array_equal(narrow.double().numpy(), X.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(tf.cast(narrow, tf.float64).numpy(),
                                  X.astype(np.float32).astype(np.float64))
    np.testing.assert_array_equal(wide.to(torch.int64).numpy(), np.trunc(X * 1e-3 + 1.0))
    half = torch.tensor(X, dtype=torch.float64).to(torch.float16)
    np.testing.assert_array_equal(half.numpy(), X.astype(np.float16))


def test_narrowing_float64_to_float16_rounds_once_as_numpy():
    # 1 + 2^-11 + 2^-40 lies just above the midpoint of two float16 values: rounded through the
    # nearest float32 it would land on the midpoint and round to even (1.0), not up.
    values = np.array([1 + 2.0 ** -11 + 2.0 ** -40, -(1 + 2.0 ** -11 + 2.0 ** -40), 65519.99,
                       65520.0, 1e-8, 0.1, 2.0 ** -25 + 2.0 ** -60])
    with np.errstate(over="ignore"):  # 65520 rounds to inf, as it should
        want = values.astype(np.float16)
    np.testing.assert_array_equal(f64(values).to(torch.float16).numpy(), want)
    assert f64(values).half().numpy()[0] == np.float16(1 + 2.0 ** -10)


def test_float64_keeps_what_float32_loses():
    one = f64([1.0])
    tiny = f64([1e-10])
    assert ((one + tiny) - one).item() == pytest.approx(1e-10, rel=1e-6)
    one32, tiny32 = torch.tensor([1.0]), torch.tensor([1e-10])
    assert ((one32 + tiny32) - one32).item() == 0.0


# ---- element-wise ops, reductions, matmul: float64 arithmetic ----

UNARY = {"exp": np.exp, "log": np.log, "sqrt": np.sqrt, "tanh": np.tanh, "sin": np.sin,
         "cos": np.cos, "sigmoid": lambda v: 1 / (1 + np.exp(-v)), "abs": np.abs,
         "reciprocal": np.reciprocal, "rsqrt": lambda v: 1 / np.sqrt(v), "neg": np.negative}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_ops_compute_in_float64(name):
    out = getattr(f64(POSITIVE), name)()
    assert out.dtype == torch.float64
    # float64 libm against NumPy's: within a few ulps (float32 would be ~1e-7 off).
    np.testing.assert_allclose(out.numpy(), UNARY[name](POSITIVE), rtol=1e-14, atol=0)


def test_binary_ops_and_comparisons_compute_in_float64():
    a, b = f64(POSITIVE), f64(POSITIVE[::-1].copy())
    np.testing.assert_array_equal((a + b).numpy(), POSITIVE + POSITIVE[::-1])
    np.testing.assert_array_equal((a * b).numpy(), POSITIVE * POSITIVE[::-1])
    np.testing.assert_array_equal((a / b).numpy(), POSITIVE / POSITIVE[::-1])
    np.testing.assert_array_equal((a - 0.1).numpy(), POSITIVE - 0.1)
    np.testing.assert_allclose((a ** b).numpy(), POSITIVE ** POSITIVE[::-1], rtol=1e-14)
    np.testing.assert_allclose(torch.atan2(a, b).numpy(), np.arctan2(POSITIVE, POSITIVE[::-1]),
                               rtol=1e-14)
    np.testing.assert_array_equal(torch.maximum(a, b).numpy(), np.maximum(POSITIVE, POSITIVE[::-1]))
    np.testing.assert_array_equal((a > b).numpy(), POSITIVE > POSITIVE[::-1])
    np.testing.assert_array_equal(torch.where(a > b, a, b).numpy(),
                                  np.where(POSITIVE > POSITIVE[::-1], POSITIVE, POSITIVE[::-1]))


def test_reductions_accumulate_in_float64():
    # 100,000 terms of 0.1 + 1e-9 * i: a float64 sum in any order is within ~1e-11 relative;
    # the same values stored as float32 are off by ~5e-9 relative even summed in double.
    values = 0.1 + 1e-9 * np.arange(100_000)
    t = f64(values)
    assert t.sum().dtype == torch.float64
    assert t.sum().item() == pytest.approx(math.fsum(values), rel=1e-10)
    assert t.mean().item() == pytest.approx(math.fsum(values) / values.size, rel=1e-10)
    assert abs(torch.tensor(values).sum().item() - math.fsum(values)) > 1e-9 * math.fsum(values)
    m = f64(X)
    np.testing.assert_array_equal(m.max(dim=1).values.numpy(), X.max(axis=1))
    np.testing.assert_array_equal(m.argmin(dim=0).numpy(), X.argmin(axis=0))
    np.testing.assert_allclose(m.sum(dim=0).numpy(), X.sum(axis=0), rtol=1e-13)
    np.testing.assert_allclose(tf.reduce_mean(tf.constant(X, tf.float64), axis=1).numpy(),
                               X.mean(axis=1), rtol=1e-13)


def test_sort_orders_float64_with_nan_last():
    values = np.array([3.0, np.nan, -0.0, 1e-300, -1e300, 0.0, 2.0 ** -1074, 1.0 + 2.0 ** -52, 1.0])
    got = torch.sort(f64(values))
    np.testing.assert_array_equal(got.values.numpy(), np.sort(values, kind="stable"))
    np.testing.assert_array_equal(got.indices.numpy(), np.argsort(values, kind="stable"))


@pytest.mark.parametrize("a_shape, b_shape", [((5, 7), (7, 3)), ((2, 5, 7), (2, 7, 3)),
                                              ((2, 5, 7), (7, 3)), ((7,), (7, 3)), ((5, 7), (7,))])
def test_matmul_matches_numpy_in_float64(a_shape, b_shape):
    a = RNG.standard_normal(a_shape)
    b = RNG.standard_normal(b_shape)
    out = f64(a) @ f64(b)
    assert out.dtype == torch.float64
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-12, atol=1e-13)


def test_matmul_of_transposed_and_large_float64_operands():
    a = RNG.standard_normal((300, 200))
    b = RNG.standard_normal((300, 250))
    out = f64(a).t() @ f64(b)  # a strided (transposed) left operand, parallel rows
    np.testing.assert_allclose(out.numpy(), a.T @ b, rtol=1e-11, atol=1e-11)
    out = tf.matmul(tf.constant(a, tf.float64), tf.constant(b, tf.float64), transpose_a=True)
    np.testing.assert_allclose(out.numpy(), a.T @ b, rtol=1e-11, atol=1e-11)


def test_linear_with_bias_and_relu_in_float64():
    x, w, bias = RNG.standard_normal((4, 7)), RNG.standard_normal((3, 7)), RNG.standard_normal(3)
    out = torch.nn.functional.relu(torch.nn.functional.linear(f64(x), f64(w), f64(bias)))
    np.testing.assert_allclose(out.numpy(), np.maximum(x @ w.T + bias, 0), rtol=1e-13, atol=1e-14)


def test_softmax_in_float64_matches_pytorch_values_and_gradients():
    ref = torch_reference.run(
        "t = torch.tensor(x, dtype=torch.float64, requires_grad=True)\n"
        "w = torch.tensor(w)\n"
        "y = torch.softmax(t, dim=1) * w\n"
        "l = torch.log_softmax(t, dim=0) * w\n"
        "(y.sum() + l.sum()).backward()\n"
        "out['y'] = y.detach().numpy(); out['l'] = l.detach().numpy(); out['g'] = t.grad.numpy()",
        x=X, w=np.linspace(-1, 1, X.size).reshape(X.shape))
    t = f64(X)
    t.requires_grad = True
    w = f64(np.linspace(-1, 1, X.size).reshape(X.shape))
    y = torch.softmax(t, dim=1) * w
    l = torch.log_softmax(t, dim=0) * w
    (y.sum() + l.sum()).backward()
    assert y.dtype == torch.float64 and t.grad.dtype == torch.float64
    np.testing.assert_allclose(y.detach().numpy(), ref["y"], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(l.detach().numpy(), ref["l"], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(t.grad.numpy(), ref["g"], rtol=1e-12, atol=1e-14)


# ---- gradients ----

def test_gradcheck_passes_at_pytorchs_default_tolerances():
    # PyTorch's defaults (eps=1e-6, atol=1e-5, rtol=1e-3) assume float64 inputs: with float32
    # the finite differences alone would be off by more than that.
    x = f64(RNG.standard_normal((3, 4)))
    w = f64(RNG.standard_normal((4, 2)))
    x.requires_grad = True
    w.requires_grad = True

    def model(a, b):
        return torch.softmax(torch.tanh(a @ b), dim=1) * a.sum()

    assert torch.autograd.gradcheck(model, (x, w))


def test_gradients_match_pytorch_in_float64():
    ref = torch_reference.run(
        "a = torch.tensor(x, requires_grad=True); b = torch.tensor(y, requires_grad=True)\n"
        "z = (torch.sigmoid(a @ b) ** 2).mean() + torch.exp(a).sum() / 7\n"
        "z.backward()\n"
        "out['z'] = z.item(); out['ga'] = a.grad.numpy(); out['gb'] = b.grad.numpy()",
        x=X, y=Y)
    a, b = f64(X), f64(Y)
    a.requires_grad = True
    b.requires_grad = True
    z = (torch.sigmoid(a @ b) ** 2).mean() + torch.exp(a).sum() / 7
    z.backward()
    assert z.item() == pytest.approx(ref["z"], rel=1e-13)
    assert a.grad.dtype == torch.float64
    np.testing.assert_allclose(a.grad.numpy(), ref["ga"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(b.grad.numpy(), ref["gb"], rtol=1e-12, atol=1e-15)


def test_gradient_tape_on_a_float64_variable():
    v = tf.Variable(np.array([0.5, 2.0]), dtype=tf.float64)
    with tf.GradientTape() as tape:
        y = tf.reduce_sum(tf.math.log(v) * v)
    grad = tape.gradient(y, v)
    assert grad.dtype == tf.float64
    np.testing.assert_allclose(grad.numpy(), np.log([0.5, 2.0]) + 1.0, rtol=1e-15)


def test_a_module_converted_with_double_matches_pytorchs():
    ref = torch_reference.run(
        "torch.manual_seed(0)\n"
        "m = torch.nn.Linear(7, 3).double()\n"
        "with torch.no_grad():\n"
        "    m.weight.copy_(torch.tensor(w)); m.bias.copy_(torch.tensor(b))\n"
        "y = m(torch.tensor(x)); y.sum().backward()\n"
        "out['y'] = y.detach().numpy(); out['gw'] = m.weight.grad.numpy()\n"
        "out['dtype'] = str(m.weight.dtype)",
        x=X, w=Y.T.copy(), b=np.array([0.1, 0.2, 0.3]))
    m = torch.nn.Linear(7, 3).double()
    with torch.no_grad():
        m.weight.copy_(f64(Y.T.copy()))
        m.bias.copy_(f64([0.1, 0.2, 0.3]))
    assert ref["dtype"] == "torch.float64" and m.weight.dtype == torch.float64
    y = m(f64(X))
    y.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), ref["y"], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(m.weight.grad.numpy(), ref["gw"], rtol=1e-13, atol=1e-15)


# ---- promotion ----

def test_torch_promotion_with_float64():
    ref = torch_reference.run(
        "d = torch.ones(2, dtype=torch.float64); f = torch.ones(2); i = torch.ones(2, dtype=torch.int64)\n"
        "out['d+f'] = str((d + f).dtype); out['i+d0'] = str((i + torch.tensor(1.5, dtype=torch.float64)).dtype)\n"
        "out['f+d0'] = str((f + torch.tensor(1.5, dtype=torch.float64)).dtype)\n"
        "out['d*2.5'] = str((d * 2.5).dtype); out['i/d'] = str((i / d).dtype)")
    d, f, i = torch.ones(2, dtype=torch.float64), torch.ones(2), torch.ones(2, dtype=torch.int64)
    ours = {"d+f": (d + f).dtype, "i+d0": (i + torch.tensor(1.5, dtype=torch.float64)).dtype,
            "f+d0": (f + torch.tensor(1.5, dtype=torch.float64)).dtype, "d*2.5": (d * 2.5).dtype,
            "i/d": (i / d).dtype}
    assert {k: "torch." + v.name for k, v in ours.items()} == ref


def test_the_tensorflow_face_promotes_float64_as_it_promotes_every_pair():
    # TF itself refuses mixed dtypes; the TF face promotes every pair by one rule (float16 +
    # float32 is float32 there too), and float64 joins it as the widest float.
    mixed = tf.add(tf.constant([1.0], tf.float64), tf.constant([0.1]))
    assert mixed.dtype == tf.float64 and mixed.numpy()[0] == 1.0 + float(np.float32(0.1))
    out = tf.constant([1.0], tf.float64) * 0.1  # a Python number takes the tensor's dtype
    assert out.dtype == tf.float64 and out.numpy()[0] == 0.1


# ---- files and formats ----

def test_torch_save_and_load_float64_both_ways(tmp_path):
    ours = tmp_path / "ours.pt"
    torch.save({"t": f64(X)}, str(ours))
    ref = torch_reference.run(
        f"d = torch.load({str(ours)!r})\n"
        "out['dtype'] = str(d['t'].dtype); out['t'] = d['t'].numpy()\n"
        f"torch.save({{'u': torch.tensor(x) * 3}}, {str(tmp_path / 'theirs.pt')!r})",
        x=X)
    assert ref["dtype"] == "torch.float64"
    np.testing.assert_array_equal(ref["t"], X)
    loaded = torch.load(str(tmp_path / "theirs.pt"))["u"]
    assert loaded.dtype == torch.float64
    np.testing.assert_array_equal(loaded.numpy(), X * 3)


def test_serialize_tensor_of_float64_is_tensorflows_bytes():
    ours = tf.io.serialize_tensor(tf.constant(X, tf.float64))
    theirs = tf_real.io.serialize_tensor(tf_real.constant(X, tf_real.float64)).numpy()
    assert bytes(ours) == theirs
    back = tf.io.parse_tensor(theirs, out_type=tf.float64)
    np.testing.assert_array_equal(back.numpy(), X)


def test_timestamp_is_float64_seconds():
    import time
    before = time.time()
    stamp = tf.timestamp()
    assert stamp.dtype == tf.float64 and stamp.shape == ()
    assert before <= stamp.numpy() <= time.time()
    assert tf_real.timestamp().dtype == tf_real.float64


def test_finfo_of_float64_is_pytorchs():
    ref = torch_reference.run("i = torch.finfo(torch.float64)\n"
                              "out['eps'] = i.eps; out['max'] = i.max; out['tiny'] = i.tiny")
    info = torch.finfo(torch.float64)
    assert (info.eps, info.max, info.tiny) == (ref["eps"], ref["max"], ref["tiny"])


# ---- what has no float64 kernel says so ----

def test_layer_kernels_without_float64_refuse_it_by_name():
    x = f64(RNG.standard_normal((1, 2, 5, 5)))
    w = f64(RNG.standard_normal((3, 2, 3, 3)))
    with pytest.raises(errors.InvalidArgumentError, match="float64.*cast it to float32"):
        torch.nn.functional.conv2d(x, w)
    with pytest.raises(errors.InvalidArgumentError, match="float64"):
        torch.nn.functional.max_pool2d(x, 2)
    with pytest.raises(errors.InvalidArgumentError, match="float64"):
        torch.nn.functional.dropout(x, 0.5, training=True)
    # the same model in float32 runs: the error is about the dtype only
    assert torch.nn.functional.conv2d(x.float(), w.float()).shape == (1, 3, 3, 3)
