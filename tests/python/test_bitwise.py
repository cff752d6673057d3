"""The bitwise ops against the real frameworks: tf.bitwise (TensorFlow), keras.ops.bitwise_*
(Keras on its TensorFlow backend) and PyTorch's torch.bitwise_* and & | ^ ~ << >> operators
(torch_reference): values, result dtypes, the shift-count rules and the errors."""
import re

import numpy as np
import pytest
import tensorflow as tf_real
import keras

import gpuaccel as tf
import gpuaccel.torch as torch
from gpuaccel import errors
from gpuaccel.keras import ops as gops
import torch_reference
from torch_reference import Case

I32 = np.array([5, -5, 1, -1, 7, 12, 0, 2147483647], np.int32)
COUNTS32 = np.array([-1, 32, 31, 33, 40, 3, 0, 1], np.int32)
U8 = np.array([5, 200, 1, 255, 0, 128], np.uint8)
COUNTS8 = np.array([9, 8, 7, 1, 3, 200], np.uint8)
I64 = np.array([3, -3, 1 << 40, -(1 << 62), 9], np.int64)
COUNTS64 = np.array([63, 64, 2, 1, -2], np.int64)


@pytest.mark.parametrize("x, y", [(I32, COUNTS32), (U8, COUNTS8), (I64, COUNTS64)],
                         ids=["int32", "uint8", "int64"])
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift",
                                  "right_shift"])
def test_tf_bitwise_matches_tensorflow_with_its_count_clamp(name, x, y):
    want = getattr(tf_real.bitwise, name)(x, y).numpy()
    got = getattr(tf.bitwise, name)(tf.constant(x), tf.constant(y))
    assert got._dtype_name == want.dtype.name
    np.testing.assert_array_equal(got.numpy(), want)


def test_tf_invert_and_python_number_operands():
    for x in (I32, U8, I64):
        np.testing.assert_array_equal(tf.bitwise.invert(tf.constant(x)).numpy(),
                                      tf_real.bitwise.invert(x).numpy())
    np.testing.assert_array_equal(tf.bitwise.left_shift(tf.constant(U8), 3).numpy(),
                                  tf_real.bitwise.left_shift(U8, np.uint8(3)).numpy())


_MISMATCH = ("cannot compute BitwiseAnd as input #1(zero-based) was expected to be a int32 "
             "tensor but is a int64 tensor")


# TensorFlow calls float32 "float" in this text; ours names gpuaccel's dtype.
@pytest.mark.parametrize("x, y, theirs, ours", [
    (np.array([1], np.int32), np.array([1], np.int64), _MISMATCH, _MISMATCH),
    (np.array([1.0], np.float32), np.array([1.0], np.float32),
     "Value for attr 'T' of float is not in the list of allowed values",
     "Value for attr 'T' of float32 is not in the list of allowed values"),
    (np.array([True]), np.array([True]), "Value for attr 'T' of bool is not in the list",
     "Value for attr 'T' of bool is not in the list"),
])
def test_tf_bitwise_refuses_what_tensorflow_refuses(x, y, theirs, ours):
    with pytest.raises(tf_real.errors.InvalidArgumentError, match=re.escape(theirs)):
        tf_real.bitwise.bitwise_and(tf_real.constant(x), tf_real.constant(y))
    with pytest.raises(errors.InvalidArgumentError, match=re.escape(ours)):
        tf.bitwise.bitwise_and(tf.constant(x), tf.constant(y))


KERAS_PAIRS = {
    "bitwise_and": (keras.ops.bitwise_and, gops.bitwise_and),
    "bitwise_or": (keras.ops.bitwise_or, gops.bitwise_or),
    "bitwise_xor": (keras.ops.bitwise_xor, gops.bitwise_xor),
    "bitwise_left_shift": (keras.ops.bitwise_left_shift, gops.bitwise_left_shift),
    "bitwise_right_shift": (keras.ops.bitwise_right_shift, gops.bitwise_right_shift),
    "left_shift": (keras.ops.left_shift, gops.left_shift),
    "right_shift": (keras.ops.right_shift, gops.right_shift),
}


@pytest.mark.parametrize("name", sorted(KERAS_PAIRS))
@pytest.mark.parametrize("x, y", [(I32, COUNTS32), (U8, COUNTS8), (I64, COUNTS64),
                                  (I32, COUNTS32.astype(np.int64)), (U8, COUNTS32[:6])],
                         ids=["int32", "uint8", "int64", "int32-int64", "uint8-int32"])
def test_keras_ops_match_keras(name, x, y):
    theirs, ours = KERAS_PAIRS[name]
    want = keras.ops.convert_to_numpy(theirs(x, y))
    got = ours(x, y)
    assert got._dtype_name == want.dtype.name
    np.testing.assert_array_equal(got.numpy(), want)


def test_keras_invert_python_int_counts_and_float_refusal():
    for theirs, ours in ((keras.ops.bitwise_invert, gops.bitwise_invert),
                         (keras.ops.bitwise_not, gops.bitwise_not)):
        np.testing.assert_array_equal(ours(I32).numpy(), keras.ops.convert_to_numpy(theirs(I32)))
    np.testing.assert_array_equal(gops.left_shift(U8, 2).numpy(),
                                  keras.ops.convert_to_numpy(keras.ops.left_shift(U8, 2)))
    with pytest.raises(errors.InvalidArgumentError, match="unsupported dtype float32"):
        gops.bitwise_and(np.array([1.5], np.float32), I32[:1])


B = np.array([True, False, True, False])
I32B = np.array([3, 6, -1, 0], np.int32)
I64B = np.array([1, 2, 3, 4], np.int64)
U8B = np.array([250, 6, 1, 0], np.uint8)
SMALL_COUNTS = np.array([0, 1, 5, 31], np.int32)
F32 = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
CASES = [
    Case("and_i32_i64", None, "a & b", {"a": I32B, "b": I64B}),
    Case("or_bool_u8", None, "a | b", {"a": B, "b": U8B}),
    Case("xor_bool_bool", None, "a ^ b", {"a": B, "b": B[::-1].copy()}),
    Case("and_u8_scalar", None, "a & 7", {"a": U8B}),
    Case("rand_scalar", None, "12 & a", {"a": I32B}),
    Case("or_bool_scalar", None, "a | 2", {"a": B}),
    Case("invert_i32", None, "~a", {"a": I32B}),
    Case("invert_u8", None, "~a", {"a": U8B}),
    Case("invert_bool", None, "~a", {"a": B}),
    Case("not_fn", None, "torch.bitwise_not(a)", {"a": U8B}),
    Case("and_fn", None, "torch.bitwise_and(a, b)", {"a": I32B, "b": I64B}),
    Case("xor_method", None, "a.bitwise_xor(b)", {"a": I32B, "b": I32B[::-1].copy()}),
    # counts in [0, bits): PyTorch 1.13 leaves counts outside to the CPU (see test_kernel_...)
    Case("lshift_i32", None, "a << b", {"a": I32B, "b": SMALL_COUNTS}),
    Case("rshift_i32", None, "a >> b", {"a": I32B, "b": SMALL_COUNTS}),
    Case("lshift_u8_i64", None, "a << b", {"a": U8B, "b": np.array([1, 2, 3, 0], np.int64)}),
    Case("rshift_scalar", None, "a >> 1", {"a": I64B}),
    Case("lshift_fn", None, "torch.bitwise_left_shift(a, 2)", {"a": I32B}),
    Case("rshift_fn", None, "torch.bitwise_right_shift(a, b)", {"a": I32B, "b": SMALL_COUNTS}),
    Case("or_fn", None, "torch.bitwise_or(a, b)", {"a": B, "b": I32B}),
    Case("or_fn_scalar", None, "torch.bitwise_or(a, 8)", {"a": U8B}),
    Case("xor_fn", None, "torch.bitwise_xor(a, b)", {"a": I64B, "b": I32B}),
    Case("xor_fn_scalar", None, "torch.bitwise_xor(a, True)", {"a": B}),
    Case("not_fn_bool", None, "torch.bitwise_not(a)", {"a": B}),
    Case("lshift_fn_tensor", None, "torch.bitwise_left_shift(a, b)", {"a": I64B, "b": I64B}),
    Case("rshift_fn_scalar", None, "torch.bitwise_right_shift(a, 1)", {"a": U8B}),
    Case("and_method_scalar", None, "torch.bitwise_and(a, 5)", {"a": I32B}),
    Case("and_in_place", None, "a.clone().bitwise_and_(b)", {"a": I64B, "b": I64B[::-1].copy()}),
    Case("or_in_place", None, "a.clone().bitwise_or_(b)", {"a": I32B, "b": I32B[::-1].copy()}),
    Case("xor_in_place", None, "a.clone().bitwise_xor_(b)", {"a": U8B, "b": U8B[::-1].copy()}),
    Case("not_in_place", None, "a.clone().bitwise_not_()", {"a": I32B}),
    Case("lshift_in_place", None, "a.clone().bitwise_left_shift_(b)",
         {"a": I32B, "b": SMALL_COUNTS}),
    Case("rshift_in_place", None, "a.clone().bitwise_right_shift_(b)",
         {"a": I32B, "b": SMALL_COUNTS}),
    Case("and_in_place_again", None, "a.clone().bitwise_and_(3)", {"a": I32B}),
    Case("or_in_place_again", None, "a.clone().bitwise_or_(3)", {"a": I32B}),
    Case("xor_in_place_again", None, "a.clone().bitwise_xor_(3)", {"a": I32B}),
    Case("not_in_place_again", None, "a.clone().bitwise_not_()", {"a": U8B}),
    Case("lshift_in_place_again", None, "a.clone().bitwise_left_shift_(1)", {"a": I32B}),
    Case("rshift_in_place_again", None, "a.clone().bitwise_right_shift_(1)", {"a": I32B}),
    Case("and_float", None, "a & b", {"a": F32, "b": I32B}, raises=RuntimeError),
    Case("invert_float", None, "~a", {"a": F32}, raises=TypeError),
    Case("lshift_float", None, "a << 1", {"a": F32}, raises=RuntimeError),
    Case("lshift_bool", None, "a << b", {"a": B, "b": B}, raises=RuntimeError),
]


@pytest.fixture(scope="module")
def torch_results():
    return torch_reference.run_cases(CASES)


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_torch_face_matches_pytorch(case, torch_results):
    torch_reference.check_case(case, torch_results[case.id])


def test_torch_errors_are_worded_as_pytorchs():
    got = torch_reference.run(
        "for k, f in [('and', lambda: torch.ones(1) & torch.ones(1, dtype=torch.int32)),\n"
        "             ('lshift', lambda: torch.tensor([True]) << torch.tensor([True])),\n"
        "             ('invert', lambda: ~torch.ones(1))]:\n"
        "    try: f()\n"
        "    except Exception as e: out[k] = str(e)\n")
    calls = {"and": lambda: torch.ones(1) & torch.ones(1, dtype=torch.int32),
             "lshift": lambda: torch.tensor([True]) << torch.tensor([True]),
             "invert": lambda: ~torch.ones(1)}
    for key, call in calls.items():
        with pytest.raises((RuntimeError, TypeError)) as caught:
            call()
        assert str(caught.value) == got[key]


def test_in_place_forms_and_out_of_range_counts_shift_everything_out():
    t = torch.tensor(I32B.copy())
    t.bitwise_and_(6)
    np.testing.assert_array_equal(t.numpy(), I32B & 6)
    # PyTorch 2's definition (1.13 masks the count on x86): negative or >= bits -> all out.
    x = torch.tensor(np.array([5, -5, 1, -1], np.int32))
    counts = torch.tensor(np.array([-1, 32, 40, 33], np.int32))
    np.testing.assert_array_equal((x << counts).numpy(), [0, 0, 0, 0])
    np.testing.assert_array_equal((x >> counts).numpy(), [0, -1, 0, -1])
