"""Segment max/min (tf.math.unsorted_segment_max/min, segment_max/min, keras.ops.segment_max)
on the row scatter kernel (backend op scatter_rows, max/min), and the bincounts on the row
scatter-add, against TensorFlow, Keras, PyTorch 1.13 (torch_reference) and NumPy: values for
every dtype TF takes, empty segments (the dtype's lowest/highest, or 0 for the sorted ops),
dropped negative ids, infinities, the gradient's even split between ties, and a size the
one-hot formulation it replaced could not hold (rows x segments x width)."""
import numpy as np
import pytest
import tensorflow as tf_real

import gpuaccel as tf
import gpuaccel.torch as torch
import torch_reference

RNG = np.random.default_rng(5)
IDS = np.array([3, 0, 3, 1, -1, 0, 3, 5], np.int32)  # segment 2 and 4 empty, -1 dropped
DATA = RNG.standard_normal((8, 3, 2)).astype(np.float32)


@pytest.mark.parametrize("op", ["unsorted_segment_max", "unsorted_segment_min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32",
                                   "int64", "uint8", "int8", "int16"])
def test_unsorted_segment_extremes_match_tensorflow(op, dtype):
    data = (DATA * 40).astype(np.float32)
    if dtype == "uint8":
        data = np.abs(data)
    ours = getattr(tf.math, op)(tf.cast(tf.constant(data), dtype), IDS, 7)
    theirs = getattr(tf_real.math, op)(tf_real.cast(tf_real.constant(data), dtype), IDS, 7)
    assert ours.dtype.name == theirs.dtype.name
    assert tuple(ours.shape) == tuple(theirs.shape) == (7, 3, 2)
    np.testing.assert_array_equal(np.asarray(ours.numpy(), np.float64),
                                  np.asarray(theirs.numpy(), np.float64))


@pytest.mark.parametrize("op", ["segment_max", "segment_min"])
def test_sorted_segment_extremes_give_empty_segments_zero_as_tensorflow(op):
    ids = np.array([0, 0, 2, 2, 2, 5], np.int64)
    data = RNG.standard_normal((6, 4)).astype(np.float32)
    ours = getattr(tf.math, op)(data, ids)
    theirs = getattr(tf_real.math, op)(data, ids)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_two_dimensional_ids_and_infinities_match_tensorflow():
    data = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    data[0, 1, 2], data[1, 0, 0], data[1, 2, 3] = np.inf, -np.inf, np.inf
    ids = np.array([[0, 2, 2], [1, 0, 2]], np.int32)
    for op in ("unsorted_segment_max", "unsorted_segment_min"):
        ours = getattr(tf.math, op)(data, ids, 4)
        theirs = getattr(tf_real.math, op)(data, ids, 4)
        # an infinity in one segment leaves the others finite (the one-hot form gave inf * 0)
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_a_nan_makes_its_segment_nan():
    data = np.array([[1.0], [np.nan], [3.0], [2.0]], np.float32)
    out = tf.math.unsorted_segment_max(data, [0, 0, 1, 1], 2).numpy()
    assert np.isnan(out[0, 0]) and out[1, 0] == 3.0


def test_gradient_splits_evenly_between_ties_as_tensorflow():
    data = np.array([[1.0, 5.0], [3.0, 5.0], [3.0, 2.0], [0.5, -1.0], [7.0, 7.0]], np.float32)
    ids = np.array([0, 0, 0, 1, -1], np.int32)
    upstream = np.array([[2.0, 3.0], [5.0, 7.0], [11.0, 13.0]], np.float32)
    for op in ("unsorted_segment_max", "unsorted_segment_min"):
        x = tf.Variable(data)
        with tf.GradientTape() as tape:
            total = tf.reduce_sum(getattr(tf.math, op)(x, ids, 3) * upstream)
        ours = tape.gradient(total, x)
        xr = tf_real.Variable(data)
        with tf_real.GradientTape() as tape:
            total = tf_real.reduce_sum(getattr(tf_real.math, op)(xr, ids, 3) * upstream)
        theirs = tape.gradient(total, xr)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_keras_ops_segment_max_matches_keras():
    real_keras = pytest.importorskip("keras")
    import gpuaccel.keras as keras
    data = RNG.standard_normal((8, 3)).astype(np.float32)
    ids = np.array([0, 0, 1, 1, 1, 2, 3, 3], np.int32)
    for kwargs in ({"num_segments": 5}, {"sorted": True}, {}):
        ours = keras.ops.segment_max(data, ids, **kwargs)
        theirs = real_keras.ops.segment_max(data, ids, **kwargs)
        np.testing.assert_array_equal(np.asarray(ours), np.asarray(theirs))


def test_many_segments_run_in_memory_of_rows_times_width():
    # 50,000 rows into 20,000 segments of 64 features: the one-hot spread this replaced would
    # have held rows x segments x width = 6.4e10 floats (256 GB)
    rows, segments, width = 50_000, 20_000, 64
    ids = RNG.integers(0, segments, rows)
    data = RNG.standard_normal((rows, width)).astype(np.float32)
    want = np.full((segments, width), np.finfo(np.float32).min, np.float32)
    np.maximum.at(want, ids, data)
    np.testing.assert_array_equal(tf.math.unsorted_segment_max(data, ids, segments).numpy(), want)


def test_bincounts_match_tensorflow_and_pytorch():
    values = RNG.integers(0, 9, 200).astype(np.int64)
    weights = RNG.standard_normal(200).astype(np.float32)
    for kwargs in ({}, {"minlength": 12}, {"weights": weights}, {"maxlength": 5}):
        ours = tf.math.bincount(values.astype(np.int32), **kwargs)
        theirs = tf_real.math.bincount(values.astype(np.int32), **kwargs)
        assert ours.dtype.name == theirs.dtype.name
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
    ref = torch_reference.run("out['c'] = torch.bincount(torch.from_numpy(v))\n"
                              "out['m'] = torch.bincount(torch.from_numpy(v), minlength=15)\n"
                              "out['c'] = out['c'].numpy(); out['m'] = out['m'].numpy()", v=values)
    for name, kwargs in (("c", {}), ("m", {"minlength": 15})):
        ours = torch.bincount(torch.tensor(values), **kwargs)
        assert ours.dtype == torch.int64
        np.testing.assert_array_equal(ours.numpy(), ref[name])
