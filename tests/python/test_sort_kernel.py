"""The sort kernel (``_C.sort``: stable, NaN last ascending and first descending, -0 tied with
+0) through every face: tf.sort/argsort/math.top_k against TensorFlow and NumPy, keras.ops
sort/argsort/top_k/median/quantile/percentile against Keras and NumPy, torch.sort/argsort/topk/
msort/kthvalue/median/quantile against PyTorch 1.13 (torch_reference), ties (stability), NaN
placement, descending, and the sorted values' gradient."""
import warnings

import numpy as np
import pytest

import gpuaccel as tf
import gpuaccel.keras as keras
import gpuaccel.torch as torch
import torch_reference

NAN, INF = np.nan, np.inf
RNG = np.random.default_rng(7)
TIES = RNG.integers(0, 4, (5, 9)).astype(np.float32)  # many equal entries per row
WITH_NAN = np.array([[3.0, NAN, 1.0, -INF, 2.0, NAN, -0.0, 0.0, 1.0],
                     [NAN, 5.0, 5.0, INF, -1.0, 0.0, -0.0, NAN, 2.0]], np.float32)


def stable_argsort(x, axis, descending=False):
    """NumPy's stable order; descending keeps equal entries in order and puts NaN first."""
    if not descending:
        return np.argsort(x, axis=axis, kind="stable")
    # Descending with ties in order: sort the negated values (NaN stays NaN, which NumPy puts
    # last), then move the NaNs' positions to the front, in order.
    order = np.argsort(-x, axis=axis, kind="stable")
    nan_first = np.argsort(~np.isnan(np.take_along_axis(x, order, axis)), axis=axis,
                           kind="stable")
    return np.take_along_axis(order, nan_first, axis)


@pytest.mark.parametrize("descending", [False, True])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_tf_sort_and_argsort_match_numpy_with_ties_and_nan(axis, descending):
    direction = "DESCENDING" if descending else "ASCENDING"
    for x in (TIES, WITH_NAN):
        order = stable_argsort(x, axis, descending)
        ours = tf.argsort(x, axis=axis, direction=direction)
        assert ours.dtype.name == "int32"
        np.testing.assert_array_equal(ours.numpy(), order)
        np.testing.assert_array_equal(tf.sort(x, axis=axis, direction=direction).numpy(),
                                      np.take_along_axis(x, order, axis))


def test_tf_faces_match_tensorflow_without_nan():
    """TF's own order with NaN is not a total order (its sort negates and takes top_k), so the
    comparison with TF is on NaN-free inputs; ties must come out in the same (stable) order."""
    real_tf = pytest.importorskip("tensorflow")
    for direction in ("ASCENDING", "DESCENDING"):
        for axis in (0, 1):
            np.testing.assert_array_equal(
                tf.argsort(TIES, axis=axis, direction=direction).numpy(),
                real_tf.argsort(TIES, axis=axis, direction=direction, stable=True).numpy())
            np.testing.assert_array_equal(tf.sort(TIES, axis, direction).numpy(),
                                          real_tf.sort(TIES, axis, direction).numpy())
    ours, theirs = tf.math.top_k(TIES, 4), real_tf.math.top_k(TIES, 4)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())
    ints = RNG.integers(-5, 5, (3, 20)).astype(np.int64)
    np.testing.assert_array_equal(tf.sort(ints).numpy(), real_tf.sort(ints).numpy())


def test_every_dtype_and_a_long_row():
    for dtype in ("float16", "bfloat16", "int32", "int64", "uint8", "bool"):
        x = tf.cast(TIES - 1.0 if dtype in ("int32", "int64") else TIES, dtype)
        values = tf.sort(x, axis=1)
        assert values.dtype.name == dtype
        np.testing.assert_array_equal(tf.cast(values, "float32").numpy(), np.sort(
            tf.cast(x, "float32").numpy(), axis=1, kind="stable"))
    # 9000 entries in one row: the all-pairs ranking this replaced refused it (81 M pairs).
    row = RNG.standard_normal((1, 9000)).astype(np.float32)
    np.testing.assert_array_equal(torch.tensor(row).argsort().numpy(), np.argsort(row, kind="stable"))


def test_sorted_values_gradient_goes_back_to_each_position():
    x = tf.Variable(TIES)
    weights = np.arange(TIES.size, dtype=np.float32).reshape(TIES.shape)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.sort(x, axis=0, direction="DESCENDING") * weights)
    order = stable_argsort(TIES, 0, True)
    want = np.zeros_like(TIES)
    np.put_along_axis(want, order, weights, 0)
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), want)


# Each expression runs with keras.ops as ``ops`` and with gpuaccel's face as ``ops``.
KERAS = ["ops.sort(x)", "ops.sort(x, axis=0)", "ops.sort(x, axis=None)", "ops.argsort(x)",
         "ops.argsort(x, axis=0)", "ops.top_k(x, 3)", "ops.top_k(x, 1, sorted=True)",
         "ops.median(x)", "ops.median(x, axis=1)", "ops.median(x, axis=0, keepdims=True)",
         "ops.quantile(x, 0.3, axis=1)", "ops.quantile(x, [0.1, 0.5, 1.0], axis=0)",
         "ops.quantile(x, 0.3, axis=1, method='lower')",
         "ops.quantile(x, 0.3, axis=1, method='higher')",
         "ops.quantile(x, 0.3, axis=1, method='midpoint')",
         "ops.quantile(x, 0.625, axis=1, method='nearest')",
         "ops.percentile(x, 75, axis=1, keepdims=True)", "ops.percentile(x, [10, 90])",
         "ops.nanmedian(x)", "ops.nanmedian(x, axis=1)", "ops.nanmedian(x, axis=0, keepdims=True)",
         "ops.nanquantile(x, 0.3, axis=1)", "ops.nanquantile(x, [0.1, 0.5, 1.0], axis=0)",
         "ops.nanquantile(x, 0.3, axis=1, method='lower')",
         "ops.nanquantile(x, 0.3, axis=1, method='higher')",
         "ops.nanquantile(x, 0.3, axis=1, method='midpoint')",
         "ops.nanquantile(x, 0.625, axis=1, method='nearest')",
         "ops.nanpercentile(x, 75, axis=1, keepdims=True)", "ops.nanpercentile(x, [10, 90])",
         "ops.sinc(x)", "ops.sinc(x * 0)"]


@pytest.mark.parametrize("expression", KERAS)
def test_keras_ops_match_keras(expression):
    real_keras = pytest.importorskip("keras")
    inputs = [TIES, RNG.standard_normal((4, 6)).astype(np.float32)]
    if not any(name in expression for name in ("sort", "top_k")):
        inputs.append(WITH_NAN)  # TF's sort with NaN is not an order (above)
    for x in inputs:
        ours = eval(expression, {"ops": keras.ops}, {"x": x})
        theirs = eval(expression, {"ops": real_keras.ops}, {"x": x})
        for o, t in zip(ours if isinstance(ours, tuple) else [ours],
                        theirs if isinstance(theirs, tuple) else [theirs]):
            o, t = np.asarray(o), np.asarray(t)
            assert o.shape == t.shape and o.dtype == t.dtype, (o, t)
            # Keras interpolates in float32 by its own formula: the two agree to a few float32
            # roundings of the operands, which near zero (the mean of -a and a + tiny) is an
            # absolute, not a relative, bound
            scale = np.nanmax(np.abs(np.where(np.isfinite(x), x, 0)))
            np.testing.assert_allclose(o, t, rtol=1e-5,
                                       atol=4 * np.finfo(np.float32).eps * scale)


TORCH_INPUTS = {"x": RNG.standard_normal((3, 5)).astype(np.float32), "t": TIES, "n": WITH_NAN,
                "i": RNG.integers(-3, 3, (4, 6)).astype(np.int64)}
TORCH = [
    ("t.sort(stable=True)", ""), ("torch.sort(t, dim=0, stable=True)", ""),
    ("t.sort(dim=1, descending=True, stable=True)", ""), ("n.sort(stable=True)", ""),
    ("torch.sort(n, descending=True, stable=True)", ""), ("x.sort(0)", "x"),
    ("torch.sort(x, descending=True)", "x"), ("torch.sort(i, stable=True)", ""),
    ("x.argsort(descending=True)", ""), ("n.sort(stable=True).indices", ""), ("t.msort()", ""),
    ("x.topk(2)", "x"), ("torch.topk(x, 2, dim=0)", "x"),
    ("x.topk(1, largest=False)", "x"), ("x.kthvalue(2)", "x"),
    ("n.topk(3).values", ""),  # torch orders the tied NaNs of topk arbitrarily: values only
    ("torch.kthvalue(x, 1, 0, True)", "x"), ("x.median()", "x"), ("x.median(1)", "x"),
    ("n.median(1).values", ""), ("n.median()", ""), ("torch.median(x, 0, keepdim=True)", "x"),
    ("i.median()", ""), ("x.quantile(0.3)", "x"), ("torch.quantile(x, 0.75, dim=1)", "x"),
    ("torch.quantile(n, 0.5, dim=1)", ""),
]
CASES = torch_reference.cases("sort", TORCH, TORCH_INPUTS)
torch_results, test_matches_pytorch = torch_reference.comparison_tests(CASES)


def test_a_layer_sorting_and_selecting_is_traced_and_replays_on_new_inputs():
    """_C.sort records both outputs for a traced Layer.call, _C.where its three inputs: the
    replays on new batches give NumPy's values, and no eager-call warning is raised."""
    class SortSelect(keras.layers.Layer):
        def call(self, x):
            largest_first = tf.sort(x, axis=-1, direction="DESCENDING")
            order = tf.cast(tf.argsort(x, axis=-1), "float32")
            return tf.where(x > 0, largest_first, tf.math.sin(x)) + order

    model = keras.Sequential([keras.Input((5,)), SortSelect()])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for seed in range(3):
            x = np.random.default_rng(seed).normal(size=(4, 5)).astype(np.float32)
            want = np.where(x > 0, -np.sort(-x, axis=-1), np.sin(x)) + np.argsort(
                x, axis=-1, kind="stable")
            np.testing.assert_allclose(model.predict(x, verbose=0), want, rtol=1e-6, atol=1e-6)
    assert not [w for w in caught if "runs its Python call()" in str(w.message)]
