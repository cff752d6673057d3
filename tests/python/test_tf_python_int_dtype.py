"""TensorFlow's dtype for Python integers on the TensorFlow face: int32 when every value fits,
int64 when one does not (tf.constant, convert_to_tensor, range, Variable, fill, the ops that
take lists, Datasets built from lists), compared with TF 2.21 itself; the PyTorch face keeps
PyTorch's int64 (torch.tensor, torch.arange)."""
import numpy as np
import pytest
import tensorflow as tf_real

import gpuaccel as tf
import gpuaccel.torch as torch

BIG = 2 ** 40
# Each expression runs with TensorFlow and with the TensorFlow face as ``tf``.
EXPRESSIONS = [
    "tf.constant([1, 2])", "tf.constant(3)", "tf.constant([[1], [2]])", "tf.constant(BIG)",
    "tf.constant([1, BIG])", "tf.constant([1, 2.5])", "tf.constant(True)",
    "tf.constant([True, False])", "tf.constant(np.array([1, 2]))", "tf.constant(np.int32(3))",
    "tf.constant([1, 2], dtype=tf.int64)", "tf.constant(-2 ** 31)", "tf.constant(2 ** 31)",
    "tf.convert_to_tensor([1, 2])", "tf.convert_to_tensor(3)", "tf.convert_to_tensor(BIG)",
    "tf.range(5)", "tf.range(2, 9, 3)", "tf.range(1.0, 3)", "tf.range(2 ** 31, 2 ** 31 + 2)",
    "tf.range(5, dtype=tf.int64)", "tf.Variable([1, 2])", "tf.Variable(0)", "tf.fill([2], 1)",
    "tf.fill([2], BIG)", "tf.fill([2], 1.5)", "tf.reshape([1, 2], [2, 1])", "tf.stack([1, 2])",
    "tf.add(1, 2)", "tf.zeros_like([1, 2])", "tf.ones_like([3])", "tf.constant([1, 2]) + [3, 4]",
    "tf.gather([10, 20, 30], [2, 0])", "tf.reduce_sum([1, 2, 3])", "tf.abs([-1, 2])",
    "tf.concat([[1], [2]], 0)", "tf.maximum([1, 5], [3, 2])",
]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_python_integers_take_tensorflows_dtype(expression):
    scope = {"np": np, "BIG": BIG}
    ours = eval(expression, dict(scope, tf=tf))
    theirs = eval(expression, dict(scope, tf=tf_real))
    assert ours.dtype.name == theirs.dtype.name, (expression, ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(np.asarray(ours), theirs.numpy())


def test_datasets_from_python_lists_take_tensorflows_dtype():
    for build in ("tf.data.Dataset.from_tensor_slices([1, 2, 3])",
                  "tf.data.Dataset.from_tensor_slices(([1, 2], [0.5, 1.5]))",
                  "tf.data.Dataset.from_tensor_slices([1, BIG])",
                  "tf.data.Dataset.from_tensors(1)", "tf.data.Dataset.from_tensors([1, 2])",
                  "tf.data.Dataset.range(3)"):
        ours = eval(build, {"tf": tf, "BIG": BIG})
        theirs = eval(build, {"tf": tf_real, "BIG": BIG})
        ours_first = tf.nest.flatten(next(iter(ours)))
        theirs_first = tf_real.nest.flatten(next(iter(theirs)))
        assert [t.dtype.name for t in ours_first] == [t.dtype.name for t in theirs_first], build
        for o, t in zip(ours_first, theirs_first):
            np.testing.assert_array_equal(o.numpy(), t.numpy())


def test_the_pytorch_face_keeps_int64():
    assert torch.tensor([1, 2]).dtype == torch.int64
    assert torch.tensor(3).dtype == torch.int64
    assert torch.arange(5).dtype == torch.int64
    assert torch.as_tensor([1, 2]).dtype == torch.int64
    assert torch.full((2,), 1).dtype == torch.int64


def test_int32_arithmetic_wraps_as_tensorflows():
    # a consequence TF users see too: int32 products of large Python integers wrap
    ours = tf.constant([2 ** 30]) * 4
    theirs = tf_real.constant([2 ** 30]) * 4
    assert ours.dtype.name == theirs.dtype.name == "int32"
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
