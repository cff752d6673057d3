"""``gpuaccel.math`` against real ``tf.math``: each name in the table runs on the same seeded
inputs in both and gives the same values, shape and dtype; where the op has a gradient,
GradientTape gives the same gradient of sum(output * cotangent). Values compare with
tolerances (the composites, cumsum's doubling scan and erf's polynomial round differently from
TensorFlow's kernels), never bit for bit."""
import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import as_array, assert_forward_matches, assert_gradient_matches

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(30)
A = RNG.normal(size=(3, 4)).astype(np.float32)
B = RNG.normal(size=(3, 4)).astype(np.float32)
POSITIVE = (RNG.random((3, 4)) + 0.5).astype(np.float32)
UNIT = (RNG.random((3, 4)) * 1.6 - 0.8).astype(np.float32)
ROW = RNG.normal(size=(4,)).astype(np.float32)
INTS = np.array([[-7, 4, 0, 9], [3, -2, 5, 1]], np.int32)
HALVES = np.array([[-2.5, -1.5, -0.5, 0.5], [1.5, 2.5, -1.2, 3.7]], np.float32)
WITH_ZEROS = np.where(RNG.random((3, 4)) < 0.3, 0.0, RNG.normal(size=(3, 4))).astype(np.float32)
SPECIAL = np.array([1.0, np.nan, np.inf, -np.inf, 0.0, -2.5], np.float32)
LABELS = np.array([2, 0, 1, 2, 1], np.int32)
GUESSES = np.array([2, 1, 1, 0, 1], np.int32)
AROUND_ZERO = np.array([0.0, -0.0, 1e-3, -2.0, 3.0], np.float32)
SEGMENTS = np.array([0, 0, 2], np.int32)
INFINITE_ROWS = np.array([[-np.inf] * 4, [1.0, 2.0, -np.inf, 0.0], [np.inf, 1.0, 2.0, 3.0]],
                         np.float32)

# tf's op, gpuaccel's, positional arguments (the first float32 array is differentiated),
# keyword arguments, whether the op has a gradient.
CASES = [
    # element-wise
    (tf.math.abs, gt.math.abs, (A,), {}, True),
    (tf.math.exp, gt.math.exp, (A,), {}, True),
    (tf.math.log, gt.math.log, (POSITIVE,), {}, True),
    (tf.math.sqrt, gt.math.sqrt, (POSITIVE,), {}, True),
    (tf.math.rsqrt, gt.math.rsqrt, (POSITIVE,), {}, True),
    (tf.math.square, gt.math.square, (A,), {}, True),
    (tf.math.reciprocal, gt.math.reciprocal, (POSITIVE,), {}, True),
    (tf.math.negative, gt.math.negative, (A,), {}, True),
    (tf.math.sigmoid, gt.math.sigmoid, (A,), {}, True),
    (tf.math.tanh, gt.math.tanh, (A,), {}, True),
    (tf.math.log1p, gt.math.log1p, (POSITIVE,), {}, True),
    (tf.math.expm1, gt.math.expm1, (A,), {}, True),
    (tf.math.softplus, gt.math.softplus, (A * 10,), {}, True),
    (tf.math.softsign, gt.math.softsign, (A,), {}, True),
    (tf.math.log_sigmoid, gt.math.log_sigmoid, (A * 10,), {}, True),
    (tf.math.sign, gt.math.sign, (A,), {}, False),
    (tf.math.sign, gt.math.sign, (INTS,), {}, False),
    (tf.math.sign, gt.math.sign, (SPECIAL,), {}, False),
    (tf.math.sinh, gt.math.sinh, (A,), {}, True),
    (tf.math.cosh, gt.math.cosh, (A,), {}, True),
    (tf.math.asinh, gt.math.asinh, (A * 100,), {}, True),
    (tf.math.acosh, gt.math.acosh, (POSITIVE + 1.0,), {}, True),
    (tf.math.atanh, gt.math.atanh, (UNIT,), {}, True),
    (tf.math.erf, gt.math.erf, (A,), {}, True),
    (tf.math.erf, gt.math.erf, (AROUND_ZERO,), {}, True),
    (tf.math.asinh, gt.math.asinh, (AROUND_ZERO,), {}, True),
    (tf.math.erfc, gt.math.erfc, (A,), {}, True),
    (tf.math.erfinv, gt.math.erfinv, (UNIT,), {}, True),
    (tf.math.erfinv, gt.math.erfinv, (np.float32([-0.99999, -0.999, 0.0, 0.3, 0.9999]),), {},
     False),
    (tf.math.ndtri, gt.math.ndtri, (POSITIVE / 2.0,), {}, True),
    (tf.math.floor, gt.math.floor, (HALVES,), {}, False),
    (tf.math.ceil, gt.math.ceil, (HALVES,), {}, False),
    (tf.math.round, gt.math.round, (HALVES,), {}, False),
    (tf.math.rint, gt.math.rint, (HALVES * 3,), {}, False),
    (tf.math.floor, gt.math.floor, (SPECIAL,), {}, False),
    (tf.math.round, gt.math.round, (SPECIAL,), {}, False),
    (tf.math.is_nan, gt.math.is_nan, (SPECIAL,), {}, False),
    (tf.math.is_finite, gt.math.is_finite, (SPECIAL,), {}, False),
    (tf.math.is_inf, gt.math.is_inf, (SPECIAL,), {}, False),
    (tf.math.softmax, gt.math.softmax, (A,), {}, True),
    (tf.math.softmax, gt.math.softmax, (A,), {"axis": 0}, True),
    (tf.math.log_softmax, gt.math.log_softmax, (A,), {}, True),
    (tf.math.l2_normalize, gt.math.l2_normalize, (A,), {"axis": 1}, True),
    # two operands
    (tf.math.add, gt.math.add, (A, ROW), {}, True),
    (tf.math.subtract, gt.math.subtract, (A, B), {}, True),
    (tf.math.multiply, gt.math.multiply, (A, B), {}, True),
    (tf.math.scalar_mul, gt.math.scalar_mul, (2.5, A), {}, True),
    (tf.math.divide, gt.math.divide, (A, POSITIVE), {}, True),
    (tf.math.truediv, gt.math.truediv, (A, POSITIVE), {}, True),
    (tf.math.pow, gt.math.pow, (POSITIVE, 1.5), {}, True),
    (tf.math.maximum, gt.math.maximum, (A, B), {}, True),
    (tf.math.minimum, gt.math.minimum, (A, B), {}, True),
    (tf.math.squared_difference, gt.math.squared_difference, (A, B), {}, True),
    (tf.math.floordiv, gt.math.floordiv, (A, POSITIVE), {}, False),
    (tf.math.floordiv, gt.math.floordiv, (INTS, np.int32(3)), {}, False),
    (tf.math.floormod, gt.math.floormod, (A, POSITIVE), {}, False),
    (tf.math.floormod, gt.math.floormod, (INTS, np.int32(-3)), {}, False),
    (tf.math.mod, gt.math.mod, (INTS, np.int32(4)), {}, False),
    (tf.math.divide_no_nan, gt.math.divide_no_nan, (A, WITH_ZEROS), {}, True),
    (tf.math.reciprocal_no_nan, gt.math.reciprocal_no_nan, (WITH_ZEROS,), {}, True),
    (tf.math.xlogy, gt.math.xlogy, (WITH_ZEROS, POSITIVE), {}, True),
    (tf.math.xlog1py, gt.math.xlog1py, (WITH_ZEROS, POSITIVE), {}, True),
    (tf.math.xdivy, gt.math.xdivy, (WITH_ZEROS, POSITIVE), {}, True),
    (tf.math.equal, gt.math.equal, (A, A * (A > 0)), {}, False),
    (tf.math.not_equal, gt.math.not_equal, (A, A * (A > 0)), {}, False),
    (tf.math.greater, gt.math.greater, (A, B), {}, False),
    (tf.math.greater_equal, gt.math.greater_equal, (A, 0.0), {}, False),
    (tf.math.less, gt.math.less, (A, B), {}, False),
    (tf.math.less_equal, gt.math.less_equal, (A, 0.0), {}, False),
    (tf.math.logical_and, gt.math.logical_and, (A > 0, B > 0), {}, False),
    (tf.math.logical_or, gt.math.logical_or, (A > 0, B > 0), {}, False),
    (tf.math.logical_xor, gt.math.logical_xor, (A > 0, B > 0), {}, False),
    (tf.math.logical_not, gt.math.logical_not, (A > 0,), {}, False),
    # reductions
    (tf.math.reduce_sum, gt.math.reduce_sum, (A,), {"axis": 1}, True),
    (tf.math.reduce_mean, gt.math.reduce_mean, (A,), {}, True),
    (tf.math.reduce_max, gt.math.reduce_max, (A,), {"axis": 0, "keepdims": True}, True),
    (tf.math.reduce_min, gt.math.reduce_min, (A,), {"axis": -1}, True),
    (tf.math.reduce_prod, gt.math.reduce_prod, (A,), {"axis": 1}, False),
    (tf.math.reduce_std, gt.math.reduce_std, (A,), {"axis": 0}, True),
    (tf.math.reduce_variance, gt.math.reduce_variance, (A,), {}, True),
    (tf.math.reduce_logsumexp, gt.math.reduce_logsumexp, (A * 50,), {"axis": 1}, True),
    (tf.math.reduce_logsumexp, gt.math.reduce_logsumexp, (INFINITE_ROWS,), {"axis": 1}, False),
    (tf.math.reduce_euclidean_norm, gt.math.reduce_euclidean_norm, (A,), {"axis": 1}, True),
    (tf.math.reduce_any, gt.math.reduce_any, (A > 1,), {"axis": 1}, False),
    (tf.math.reduce_all, gt.math.reduce_all, (A > -1,), {}, False),
    (tf.math.argmax, gt.math.argmax, (A,), {}, False),
    (tf.math.argmin, gt.math.argmin, (A,), {"axis": 1, "output_type": "int32"}, False),
    (tf.math.count_nonzero, gt.math.count_nonzero, (WITH_ZEROS,), {"axis": 0}, False),
    (tf.math.zero_fraction, gt.math.zero_fraction, (WITH_ZEROS,), {}, False),
    # scans
    (tf.math.cumsum, gt.math.cumsum, (A,), {}, True),
    (tf.math.cumsum, gt.math.cumsum, (A,), {"axis": 1, "exclusive": True}, True),
    (tf.math.cumsum, gt.math.cumsum, (A,), {"axis": 1, "reverse": True}, True),
    (tf.math.cumsum, gt.math.cumsum, (INTS,), {"axis": 1, "exclusive": True, "reverse": True},
     False),
    (tf.math.cumprod, gt.math.cumprod, (A,), {"axis": 1}, True),
    (tf.math.cumprod, gt.math.cumprod, (A,), {"axis": 0, "exclusive": True, "reverse": True},
     True),
    (tf.math.cumulative_logsumexp, gt.math.cumulative_logsumexp, (A * 30,), {"axis": 1}, True),
    (tf.math.cumulative_logsumexp, gt.math.cumulative_logsumexp, (A,),
     {"reverse": True, "exclusive": True}, False),
    # segments, counts, ranks
    (tf.math.unsorted_segment_sum, gt.math.unsorted_segment_sum, (A, np.array([2, 0, 2]), 4),
     {}, True),
    (tf.math.unsorted_segment_mean, gt.math.unsorted_segment_mean,
     (A, np.array([2, 0, 2]), 4), {}, True),
    (tf.math.unsorted_segment_sqrt_n, gt.math.unsorted_segment_sqrt_n,
     (A, np.array([2, 0, 2]), 3), {}, True),
    (tf.math.segment_sum, gt.math.segment_sum, (A, SEGMENTS), {}, True),
    (tf.math.segment_mean, gt.math.segment_mean, (A, SEGMENTS), {}, True),
    (tf.math.unsorted_segment_max, gt.math.unsorted_segment_max, (A, np.array([2, 0, 2]), 4),
     {}, True),
    (tf.math.unsorted_segment_min, gt.math.unsorted_segment_min, (A, np.array([1, 0, 1]), 2),
     {}, True),
    (tf.math.segment_max, gt.math.segment_max, (A, SEGMENTS), {}, True),
    (tf.math.segment_min, gt.math.segment_min, (A, SEGMENTS), {}, True),
    (tf.math.bincount, gt.math.bincount, (LABELS,), {}, False),
    (tf.math.bincount, gt.math.bincount, (LABELS,), {"minlength": 5}, False),
    (tf.math.bincount, gt.math.bincount, (LABELS,), {"weights": ROW[[0, 1, 2, 3, 0]]}, False),
    (tf.math.confusion_matrix, gt.math.confusion_matrix, (LABELS, GUESSES), {}, False),
    (tf.math.confusion_matrix, gt.math.confusion_matrix, (LABELS, GUESSES),
     {"num_classes": 4, "weights": POSITIVE[0, :4].tolist() + [1.0], "dtype": "float32"},
     False),
    (tf.math.in_top_k, gt.math.in_top_k, (np.array([3, 0, 1]), A, 2), {}, False),
    (tf.math.invert_permutation, gt.math.invert_permutation, (np.array([2, 0, 3, 1], np.int32),),
     {}, False),
    (tf.math.is_non_decreasing, gt.math.is_non_decreasing, ([1, 2, 2, 5],), {}, False),
    (tf.math.is_non_decreasing, gt.math.is_non_decreasing, ([1, 3, 2],), {}, False),
    (tf.math.is_strictly_increasing, gt.math.is_strictly_increasing, ([1, 2, 2, 5],), {},
     False),
    (tf.math.is_strictly_increasing, gt.math.is_strictly_increasing, (ROW.cumsum(),), {},
     False),
]


def case_id(case):
    theirs, _, _, kwargs, _ = case
    return theirs.__name__ + "".join(f"-{k}" for k in kwargs)


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_forward_matches_tf_math(case):
    theirs_op, ours_op, args, kwargs, _ = case
    assert_forward_matches(theirs_op, ours_op, args, kwargs, atol=2e-6)


@pytest.mark.parametrize("case", [c for c in CASES if c[4]], ids=case_id)
def test_gradient_matches_tf_math(case):
    theirs_op, ours_op, args, kwargs, _ = case
    assert_gradient_matches(theirs_op, ours_op, args, kwargs, rtol=1e-4, atol=1e-5)


def test_list_inputs_and_polynomials_match_tf_math():
    for ours, theirs in (
            (gt.math.add_n([A, B, POSITIVE]), tf.math.add_n([A, B, POSITIVE])),
            (gt.math.accumulate_n([A, B]), tf.math.accumulate_n([A, B])),
            (gt.math.polyval([1.5, -2.0, 0.5], A), tf.math.polyval([1.5, -2.0, 0.5], A)),
            (gt.math.polyval([], A), tf.math.polyval([], A))):
        assert tuple(ours.shape) == tuple(theirs.shape)
        np.testing.assert_allclose(as_array(ours), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_rounding_keeps_integers_and_large_floats_exact():
    big = np.array([2.0 ** 24 + 2, -(2.0 ** 30), 3e38], np.float32)
    for name in ("floor", "ceil", "round"):
        np.testing.assert_array_equal(as_array(getattr(gt.math, name)(big)),
                                      getattr(tf.math, name)(big).numpy())
    assert gt.math.floor(INTS).dtype == gt.int32


def test_composites_reject_bad_arguments_by_name():
    with pytest.raises(ValueError, match=r"axis 2 is out of range for a tensor of rank 2"):
        gt.math.cumsum(A, axis=2)
    with pytest.raises(gt.errors.InvalidArgumentError, match="must be sorted"):
        gt.math.segment_sum(A, [1, 0, 0])
    with pytest.raises(gt.errors.InvalidArgumentError, match="needs a permutation"):
        gt.math.invert_permutation([0, 0, 2])
    with pytest.raises(ValueError, match=r"predictions must be a \[batch, classes\] matrix"):
        gt.math.in_top_k([0], ROW, 1)
    for op in (tf.math.floordiv, tf.math.floormod):
        with pytest.raises(tf.errors.InvalidArgumentError, match="Integer division by zero"):
            op(INTS, np.int32(0))
    for op in (gt.math.floordiv, gt.math.floormod, gt.keras.ops.fmod):
        with pytest.raises(gt.errors.InvalidArgumentError, match="Integer division by zero"):
            op(INTS, np.array([1, 0, 2, 3], np.int32))
    with pytest.raises(TypeError, match="coeffs must be a list"):
        gt.math.polyval(ROW, A)


@pytest.mark.parametrize("name", ["digamma", "igamma", "lgamma", "bessel_i0"])
def test_names_that_need_a_kernel_are_refused_with_advice(name):
    assert hasattr(tf.math, name)
    with pytest.raises(AttributeError, match=rf"tf\.math\.{name} is not supported by gpuaccel "
                                             rf"yet; use a computation on \.numpy\(\)"):
        getattr(gt.math, name)
