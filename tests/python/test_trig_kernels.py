"""The trigonometric, hyperbolic and erf kernels (UnaryOp kSin ... kErf, BinaryOp kAtan2) through
every face, from one table: values against NumPy (large |x| included, where a range reduction
followed by a polynomial loses ~|x|·1e-7, and the domain's edges and beyond, NaN as NumPy and
TF give), gradients against central finite differences, and TensorFlow (tf.math and
keras.ops) and PyTorch 1.13 (torch_reference) on the same inputs."""
import math

import numpy as np
import pytest

import gpuaccel as tf
import gpuaccel.keras as keras
import gpuaccel.torch as torch
import torch_reference

LARGE = [1.0e4, -123456.789, 3.0e7, -1.0e22]
ANY = np.array([-7.5, -3.0, -1.25, -0.6, -0.01, 0.0, 0.02, 0.3, 0.9, 2.5, 8.25] + LARGE,
               np.float32)
UNIT = np.array([-1.5, -1.0, -0.999, -0.6, -0.01, 0.0, 0.3, 0.75, 0.999, 1.0, 1.0001, 7.0],
                np.float32)
ABOVE_ONE = np.array([-2.0, 0.5, 0.999, 1.0, 1.001, 1.7, 3.0, 123.0, 1.0e30], np.float32)
MODERATE = np.array([-80.0, -7.5, -1.25, -0.01, 0.0, 0.3, 2.5, 80.0], np.float32)
NEAR_POLES = np.array([-1.5, -1.0, -0.3, 0.0, 0.7, 1.55, 4.0, 1.0e4, -3.0e7], np.float32)

# (name, the TF face's, keras.ops's and the torch face's function, the NumPy reference, inputs,
# finite-difference points). The finite-difference points stay inside the domain, away from its
# edges.
UNARY = [
    ("sin", tf.math.sin, keras.ops.sin, torch.sin, np.sin, ANY, ANY[:11]),
    ("cos", tf.math.cos, keras.ops.cos, torch.cos, np.cos, ANY, ANY[:11]),
    ("tan", tf.math.tan, keras.ops.tan, torch.tan, np.tan, NEAR_POLES, NEAR_POLES[:6]),
    ("asin", tf.math.asin, keras.ops.arcsin, torch.asin, np.arcsin, UNIT, UNIT[3:8]),
    ("acos", tf.math.acos, keras.ops.arccos, torch.acos, np.arccos, UNIT, UNIT[3:8]),
    ("atan", tf.math.atan, keras.ops.arctan, torch.atan, np.arctan, ANY, ANY[:11]),
    ("sinh", tf.math.sinh, keras.ops.sinh, torch.sinh, np.sinh, MODERATE, MODERATE[1:7]),
    ("cosh", tf.math.cosh, keras.ops.cosh, torch.cosh, np.cosh, MODERATE, MODERATE[1:7]),
    ("asinh", tf.math.asinh, keras.ops.arcsinh, torch.asinh, np.arcsinh, ANY, ANY[:11]),
    ("acosh", tf.math.acosh, keras.ops.arccosh, torch.acosh, np.arccosh, ABOVE_ONE,
     ABOVE_ONE[5:8]),
    ("atanh", tf.math.atanh, keras.ops.arctanh, torch.atanh, np.arctanh, UNIT, UNIT[3:8]),
    ("erf", tf.math.erf, keras.ops.erf, torch.erf, np.vectorize(math.erf), ANY, ANY[:11]),
]
IDS = [row[0] for row in UNARY]

# atan2(y, x): every quadrant, both axes, the signed zeros, infinities.
Y = np.array([1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 0.0, 2.0, -2.0, np.inf, 3.0, 1e30], np.float32)
X = np.array([1.0, -1.0, -1.0, 1.0, -1.0, -1.0, 1.0, 0.0, 0.0, 1.0, -np.inf, 1e-30], np.float32)


def reference(function, x):
    """The NumPy function in float64 at the float32 inputs, rounded to float32."""
    with np.errstate(all="ignore"):
        return function(x.astype(np.float64)).astype(np.float32)


def assert_same(ours, want, rtol=2e-6, atol=1e-37):
    """Equal to float32 rounding, with NaN and infinities where the reference has them."""
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(want), np.isinf(ours))
    finite = np.isfinite(want)
    np.testing.assert_allclose(ours[finite], want[finite], rtol=rtol, atol=atol)


@pytest.mark.parametrize("name, tf_fn, keras_fn, torch_fn, numpy_fn, x, fd_points", UNARY,
                         ids=IDS)
def test_values_match_numpy_on_every_face(name, tf_fn, keras_fn, torch_fn, numpy_fn, x,
                                          fd_points):
    want = reference(numpy_fn, x)
    assert_same(tf_fn(x).numpy(), want)
    assert_same(np.asarray(keras_fn(x)), want)
    assert_same(torch_fn(torch.tensor(x)).numpy(), want)
    assert_same(getattr(torch.tensor(x), name)().numpy(), want)  # the Tensor method
    # Integers are computed in float32, as TF's float kernels and torch's promotion give.
    ints = np.array([0, 1, -1, 2], np.int32)
    assert_same(tf_fn(ints).numpy(), reference(numpy_fn, ints.astype(np.float32)))


def test_large_arguments_are_reduced_exactly():
    """The composition this replaces (x - 2π round(x / 2π), then a series) was off by ~|x|·1e-7;
    the kernel is within float32's rounding of the exact sine at any |x|."""
    x = np.array(LARGE + [2.0 ** 60, 8.0e37], np.float32)
    exact = np.sin(x.astype(np.float64))
    np.testing.assert_allclose(tf.math.sin(x).numpy(), exact, rtol=0, atol=1.2e-7)
    np.testing.assert_allclose(tf.math.cos(x).numpy(), np.cos(x.astype(np.float64)), rtol=0,
                               atol=1.2e-7)


def _gradient(function, x):
    """d sum(function(x)) / dx with the TF face's GradientTape."""
    v = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(function(v))
    return tape.gradient(loss, v).numpy()


@pytest.mark.parametrize("name, tf_fn, keras_fn, torch_fn, numpy_fn, x, fd_points", UNARY,
                         ids=IDS)
def test_gradients_match_finite_differences(name, tf_fn, keras_fn, torch_fn, numpy_fn, x,
                                            fd_points):
    points = fd_points.astype(np.float64)
    h = 1e-6 * np.maximum(1.0, np.abs(points))
    with np.errstate(all="ignore"):
        derivative = (numpy_fn(points + h) - numpy_fn(points - h)) / (2 * h)
    ours = _gradient(tf_fn, fd_points)
    np.testing.assert_allclose(ours, derivative, rtol=2e-5, atol=1e-6)


def test_gradients_at_the_domain_edges_are_infinite_as_in_tf():
    edges = np.array([-1.0, 1.0], np.float32)
    for name in ("asin", "acos", "atanh"):
        assert np.isinf(_gradient(getattr(tf.math, name), edges)).all(), name
    assert np.isinf(_gradient(tf.math.acosh, np.array([1.0], np.float32))).all()
    # asinh's gradient 1 / sqrt(x² + 1) stays right where x² overflows float32.
    huge = np.array([1e30], np.float32)
    # (1 / cosh(asinh(x)): asinh's float32 rounding costs ~70 ulp of the exponent's argument.)
    np.testing.assert_allclose(_gradient(tf.math.asinh, huge), 1.0 / huge.astype(np.float64),
                               rtol=1e-5)


def test_atan2_values_and_gradients():
    want = np.arctan2(Y.astype(np.float64), X.astype(np.float64)).astype(np.float32)
    assert_same(tf.math.atan2(Y, X).numpy(), want)
    assert_same(np.asarray(keras.ops.arctan2(Y, X)), want)
    assert_same(torch.atan2(torch.tensor(Y), torch.tensor(X)).numpy(), want)
    # Broadcast, integers promoted to float32.
    assert_same(tf.math.atan2(np.array([[1], [-2]], np.int32), np.array([3, -4], np.int32)).numpy(),
                np.arctan2([[1.0], [-2.0]], [3.0, -4.0]).astype(np.float32))
    # Gradients: d/dy = x / (x² + y²), d/dx = -y / (x² + y²), summed over a broadcast x.
    y = tf.Variable(np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], np.float32))
    x = tf.Variable(np.array([2.0, -1.0, -0.5], np.float32))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.atan2(y, x))
    dy, dx = tape.gradient(loss, [y, x])
    yv, xv = y.numpy().astype(np.float64), x.numpy().astype(np.float64)
    r2 = xv * xv + yv * yv
    np.testing.assert_allclose(dy.numpy(), xv / r2, rtol=1e-6)
    np.testing.assert_allclose(dx.numpy(), (-yv / r2).sum(0), rtol=1e-6)


# The same expression with TensorFlow's and Keras's modules and with gpuaccel's faces.
TF_EXPRESSIONS = [
    ("math.sin(x)", "ops.sin(x)", ANY), ("math.cos(x)", "ops.cos(x)", ANY),
    ("math.tan(x)", "ops.tan(x)", NEAR_POLES), ("math.asin(x)", "ops.arcsin(x)", UNIT),
    ("math.acos(x)", "ops.arccos(x)", UNIT), ("math.atan(x)", "ops.arctan(x)", ANY),
    ("math.sinh(x)", "ops.sinh(x)", MODERATE), ("math.cosh(x)", "ops.cosh(x)", MODERATE),
    ("math.asinh(x)", "ops.arcsinh(x)", ANY), ("math.acosh(x)", "ops.arccosh(x)", ABOVE_ONE),
    ("math.atanh(x)", "ops.arctanh(x)", UNIT), ("math.erf(x)", "ops.erf(x)", ANY),
    ("math.atan2(x, w)", "ops.arctan2(x, w)", Y),
]


@pytest.mark.parametrize("tf_expression, keras_expression, x", TF_EXPRESSIONS,
                         ids=[e[0] for e in TF_EXPRESSIONS])
def test_tensorflow_and_keras_agree(tf_expression, keras_expression, x):
    real_tf = pytest.importorskip("tensorflow")
    real_keras = pytest.importorskip("keras")
    inputs = {"x": x, "w": X}
    assert_same(eval(tf_expression, {"math": tf.math}, inputs).numpy(),
                eval(tf_expression, {"math": real_tf.math}, inputs).numpy(), rtol=4e-6)
    assert_same(np.asarray(eval(keras_expression, {"ops": keras.ops}, inputs)),
                np.asarray(eval(keras_expression, {"ops": real_keras.ops}, inputs)), rtol=4e-6)
    # Gradients with respect to x, NaN and inf where TF gives them.
    ours = _gradient(lambda v: eval(tf_expression, {"math": tf.math}, {**inputs, "x": v}), x)
    v = real_tf.Variable(x)
    with real_tf.GradientTape() as tape:
        loss = real_tf.reduce_sum(eval(tf_expression, {"math": real_tf.math}, {**inputs, "x": v}))
    assert_same(ours, tape.gradient(loss, v).numpy(), rtol=2e-5)


TORCH_INPUTS = {"x": ANY[:11], "big": np.array(LARGE, np.float32), "unit": UNIT[3:8],
                "above": ABOVE_ONE[4:], "edge": UNIT, "y": Y[:9], "w": X[:9]}
TORCH = [(f"torch.{name}(x)", "x") for name in ("sin", "cos", "atan", "asinh", "erf")] + [
    ("torch.sin(big)", ""), ("big.cos()", ""), ("torch.tan(x)", "x"),
    ("unit.asin()", "unit"), ("torch.arcsin(edge)", ""), ("unit.acos()", "unit"),
    ("torch.arccos(edge)", ""), ("x.arctan()", "x"), ("(x / 10).sinh()", "x"),
    ("torch.cosh(x / 10)", "x"), ("x.arcsinh()", "x"), ("above.acosh()", "above"),
    ("torch.atanh(unit)", "unit"), ("torch.arctanh(edge)", ""), ("x.erf()", "x"),
    ("torch.atan2(y, w)", "y,w"), ("y.arctan2(w)", "y,w"), ("x.clone().sin_()", ""),
]
CASES = torch_reference.cases("trig", TORCH, TORCH_INPUTS, rtol=4e-6, atol=1e-6)
torch_results, test_matches_pytorch = torch_reference.comparison_tests(CASES)
