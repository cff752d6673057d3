"""The unique family against the real frameworks: torch.unique / unique_consecutive (sorted
output, inverse, counts, dim) through torch_reference, tf.unique / unique_with_counts
(first-appearance order) and keras.ops.unique (its TensorFlow backend: sorted or not,
return_index/inverse/counts, axis, size padding)."""
import numpy as np
import pytest
import tensorflow as tf_real
import keras

import gpuaccel as tf
from gpuaccel import errors
from gpuaccel.keras import ops as gops
import torch_reference
from torch_reference import Case

INTS = np.array([3, 1, 2, 3, 1, 7, -4, 2, 2], np.int64)
FLOATS = np.array([[0.5, -1.0, 2.0], [0.5, -0.0, 0.0], [2.0, 2.0, -1.0]], np.float32)
ROWS = np.array([[1, 2, 0], [0, 5, 1], [1, 2, 0], [0, 5, 0], [1, 1, 9]], np.int32)
RUNS = np.array([1, 1, 2, 2, 3, 1, 1, 2], np.int32)
U8 = np.array([9, 0, 255, 9, 0], np.uint8)
FLAGS = np.array([True, False, True, True])

CASES = [
    Case("ints_all", None, "torch.unique(x, return_inverse=True, return_counts=True)",
         {"x": INTS}),
    Case("floats_2d", None, "torch.unique(x, return_inverse=True)", {"x": FLOATS}),
    # sorted=False: PyTorch's CPU order is its hash table's; the set of values is compared.
    Case("unsorted_flag", None, "torch.unique(x, sorted=False).sort().values", {"x": INTS}),
    Case("uint8", None, "torch.unique(x, return_counts=True)", {"x": U8}),
    Case("bool", None, "torch.unique(x, return_inverse=True)", {"x": FLAGS}),
    Case("rows_dim0", None, "torch.unique(x, dim=0, return_inverse=True, return_counts=True)",
         {"x": ROWS}),
    Case("columns_dim1", None,
         "torch.unique(x, dim=1, return_inverse=True, return_counts=True)", {"x": ROWS}),
    Case("method", None, "x.unique(return_counts=True)", {"x": INTS}),
    Case("consecutive", None,
         "torch.unique_consecutive(x, return_inverse=True, return_counts=True)", {"x": RUNS}),
    Case("consecutive_rows", None, "torch.unique_consecutive(x, dim=0, return_counts=True)",
         {"x": ROWS[[0, 0, 1, 3, 3]]}),
    Case("consecutive_method", None, "x.unique_consecutive()", {"x": RUNS}),
]


@pytest.fixture(scope="module")
def torch_results():
    return torch_reference.run_cases(CASES)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_torch_unique_matches_pytorch(case, torch_results):
    torch_reference.check_case(case, torch_results[case.id])


@pytest.mark.parametrize("x", [INTS.astype(np.int32), np.array([2.5, -1.0, 2.5, 0.0, -0.0],
                                                                 np.float32),
                               np.array([4], np.int64), np.array([], np.int32)],
                         ids=["int32", "float32", "one", "empty"])
def test_tf_unique_keeps_first_appearance_order(x):
    want = tf_real.unique_with_counts(x)
    got = tf.unique_with_counts(tf.constant(x))
    for ours, theirs in zip(got, want):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
        assert ours._dtype_name == theirs.dtype.name
    y, idx = tf.unique(tf.constant(x), out_idx=tf.int64)
    assert idx._dtype_name == "int64"
    np.testing.assert_array_equal(y.numpy(), want.y.numpy())


def test_tf_unique_refuses_a_matrix():
    with pytest.raises(tf_real.errors.InvalidArgumentError, match="unique expects a 1D vector"):
        tf_real.unique(ROWS)
    with pytest.raises(errors.InvalidArgumentError, match="unique expects a 1D vector"):
        tf.unique(tf.constant(ROWS))


@pytest.mark.parametrize("kwargs", [
    {}, {"sorted": False}, {"return_index": True, "return_inverse": True, "return_counts": True},
    {"sorted": False, "return_index": True, "return_inverse": True, "return_counts": True},
    {"size": 8, "return_index": True, "return_counts": True},
    {"size": 3, "fill_value": -1, "return_inverse": True},
    {"axis": 0, "return_inverse": True, "return_counts": True},
    {"axis": 1, "sorted": True, "return_index": True},
], ids=lambda k: ",".join(f"{a}={b}" for a, b in k.items()) or "plain")
def test_keras_unique_matches_keras(kwargs):
    x = ROWS if "axis" in kwargs else INTS.reshape(3, 3).astype(np.int32)
    want = keras.ops.unique(x, **kwargs)
    got = gops.unique(x, **kwargs)
    want, got = (r if isinstance(r, tuple) else (r,) for r in (want, got))
    assert len(got) == len(want)
    for ours, theirs in zip(got, want):
        theirs = keras.ops.convert_to_numpy(theirs)
        assert ours._dtype_name == theirs.dtype.name
        np.testing.assert_array_equal(ours.numpy(), theirs)
