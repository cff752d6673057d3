"""The tf.nn activations, losses, normalizations and 1-D convolution, and the tf.math / array
names TensorFlow also exports at its top level, against real TensorFlow (issue 30): each case
runs on the same seeded inputs in both and gives the same shape, dtype and values; where the op
is differentiable, GradientTape gives the same gradient of sum(output * cotangent).
Tolerances, never bit-for-bit: the composites round differently from TensorFlow's kernels."""
import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import as_array, assert_forward_matches, assert_gradient_matches, dtype_name

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(3030)
A = RNG.normal(scale=2.0, size=(3, 5)).astype(np.float32)
ROW = RNG.normal(size=(5,)).astype(np.float32)
PROBABILITIES = RNG.random((3, 5)).astype(np.float32)
AT_LEAST_ONE = (RNG.random((3, 5)) * 3 + 1.05).astype(np.float32)
UNIT = (RNG.random((3, 5)) * 1.6 - 0.8).astype(np.float32)
HALVES = np.array([[-2.5, -1.5, -0.5, 0.5, 7.0], [1.5, 2.5, -1.2, 3.7, -0.0]], np.float32)
WITH_ZEROS = np.where(RNG.random((3, 5)) < 0.4, 0.0, RNG.normal(size=(3, 5))).astype(np.float32)
IMAGES = RNG.normal(size=(2, 6, 6, 3)).astype(np.float32)
SIGNAL = RNG.normal(size=(2, 9, 3)).astype(np.float32)
KERNEL_1D = RNG.normal(size=(3, 3, 4)).astype(np.float32)
DEPTHWISE = RNG.normal(size=(3, 3, 3, 2)).astype(np.float32)
POINTWISE = RNG.normal(size=(1, 1, 6, 4)).astype(np.float32)
COUNTS = (RNG.random((3, 5)) * 4).round().astype(np.float32)
DEPTH = RNG.normal(size=(2, 2, 3, 8)).astype(np.float32)
B_QUERIES = RNG.normal(scale=2.0, size=(3, 4)).astype(np.float32)
KERNEL_1D_T = RNG.normal(size=(3, 4, 3)).astype(np.float32)
TARGETS = np.array([4, 0, 2], np.int32)
INTS = np.array([[3, -1, 0, 8], [2, 2, -5, 1]], np.int32)


# Pairs (tf's op, gpuaccel's) for ops whose result is a tuple or list, or whose differentiated
# argument is not the first: each name is spelled out for both frameworks.
def sigmoid_cross_entropy():
    return (lambda logits, labels: tf.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                           logits=logits),
            lambda logits, labels: gt.nn.sigmoid_cross_entropy_with_logits(labels=labels,
                                                                           logits=logits))


def weighted_cross_entropy():
    return (lambda logits, labels, q: tf.nn.weighted_cross_entropy_with_logits(labels, logits, q),
            lambda logits, labels, q: gt.nn.weighted_cross_entropy_with_logits(labels, logits, q))


def log_poisson():
    return (lambda log_input, targets, **kw: tf.nn.log_poisson_loss(targets, log_input, **kw),
            lambda log_input, targets, **kw: gt.nn.log_poisson_loss(targets, log_input, **kw))


def moments_from_statistics(which, shift):
    def theirs(x, axes):
        counts, mean_ss, variance_ss, _ = tf.nn.sufficient_statistics(x, axes, shift)
        return tf.nn.normalize_moments(counts, mean_ss, variance_ss, shift)[which]

    def ours(x, axes):
        counts, mean_ss, variance_ss, _ = gt.nn.sufficient_statistics(x, axes, shift)
        return gt.nn.normalize_moments(counts, mean_ss, variance_ss, shift)[which]
    return theirs, ours


def statistic(which):
    return (lambda x, axes, **kw: tf.nn.sufficient_statistics(x, axes, **kw)[which],
            lambda x, axes, **kw: gt.nn.sufficient_statistics(x, axes, **kw)[which])


def weighted_moment(which):
    return (lambda x, axes, weights, **kw: tf.nn.weighted_moments(x, axes, weights, **kw)[which],
            lambda x, axes, weights, **kw: gt.nn.weighted_moments(x, axes, weights, **kw)[which])


def normalized_by(which):
    """tf.nn.batch_normalization differentiated with respect to its ``which``-th argument."""
    def reorder(op):
        def call(*args):
            ordered = list(args[1:which + 1]) + [args[0]] + list(args[which + 1:])
            return op(*ordered)
        return call
    return (reorder(lambda *a: tf.nn.batch_normalization(*a)),
            reorder(lambda *a: gt.nn.batch_normalization(*a)))


def top_k_part(which):
    return (lambda x, **kw: tf.math.top_k(x, **kw)[which],
            lambda x, **kw: gt.math.top_k(x, **kw)[which])


def nn_top_k_part(which):
    return (lambda x, k: tf.nn.top_k(x, k)[which], lambda x, k: gt.nn.top_k(x, k)[which])


def moment(which):
    return (lambda x, axes, keepdims=False: tf.nn.moments(x, axes, keepdims=keepdims)[which],
            lambda x, axes, keepdims=False: gt.nn.moments(x, axes, keepdims=keepdims)[which])


def meshgrid_stacked():
    return (lambda x, y, indexing: tf.stack(tf.meshgrid(x, y, indexing=indexing), 0),
            lambda x, y, indexing: gt.stack(gt.meshgrid(x, y, indexing=indexing), 0))


def clipped_by_global_norm(which):
    def pick(clipped_and_norm):
        clipped, norm = clipped_and_norm
        return norm if which == "norm" else clipped[which]
    return (lambda a, b, clip_norm: pick(tf.clip_by_global_norm([a, None, b], clip_norm)),
            lambda a, b, clip_norm: pick(gt.clip_by_global_norm([a, None, b], clip_norm)))


def identity_n_stacked():
    return (lambda *tensors: tf.stack(tf.identity_n(list(tensors)), 0),
            lambda *tensors: gt.stack(gt.identity_n(list(tensors)), 0))


def shape_n_stacked():
    return (lambda *tensors: tf.stack(tf.shape_n(list(tensors)), 0),
            lambda *tensors: gt.stack(gt.shape_n(list(tensors)), 0))


# tf's op, gpuaccel's, positional arguments (the first float32 array is differentiated),
# keyword arguments, whether the op has a gradient.
NN_CASES = [
    (tf.nn.relu6, gt.nn.relu6, (A * 3,), {}, True),
    (tf.nn.elu, gt.nn.elu, (A,), {}, True),
    (tf.nn.selu, gt.nn.selu, (A,), {}, True),
    (tf.nn.gelu, gt.nn.gelu, (A,), {}, True),
    (tf.nn.silu, gt.nn.silu, (A,), {}, True),
    (tf.nn.silu, gt.nn.silu, (A,), {"beta": 1.7}, True),
    (tf.nn.swish, gt.nn.swish, (A,), {}, True),
    (tf.nn.leaky_relu, gt.nn.leaky_relu, (A,), {}, True),
    (tf.nn.leaky_relu, gt.nn.leaky_relu, (A,), {"alpha": 0.05}, True),
    (tf.nn.softplus, gt.nn.softplus, (A * 20,), {}, True),
    (tf.nn.softsign, gt.nn.softsign, (A,), {}, True),
    (tf.nn.sigmoid, gt.nn.sigmoid, (A,), {}, True),
    (tf.nn.tanh, gt.nn.tanh, (A,), {}, True),
    (tf.nn.crelu, gt.nn.crelu, (A,), {}, True),
    (tf.nn.crelu, gt.nn.crelu, (A,), {"axis": 0}, True),
    (tf.nn.log_softmax, gt.nn.log_softmax, (A,), {"axis": 0}, True),
    (tf.nn.l2_normalize, gt.nn.l2_normalize, (A,), {"axis": 1}, True),
    (tf.nn.l2_normalize, gt.nn.l2_normalize, (A,), {}, True),
    (*sigmoid_cross_entropy(), (A, PROBABILITIES), {}, True),
    (tf.nn.l2_loss, gt.nn.l2_loss, (A,), {}, True),
    (*moment(0), (A, [0]), {}, True),
    (*moment(1), (A, [1]), {"keepdims": True}, True),
    (tf.nn.bias_add, gt.nn.bias_add, (A, ROW), {}, True),
    (tf.nn.local_response_normalization, gt.nn.local_response_normalization, (IMAGES,), {},
     True),
    (tf.nn.lrn, gt.nn.lrn, (DEPTH, 2, 0.5, 0.3, 0.75), {}, True),
    (tf.nn.lrn, gt.nn.lrn, (IMAGES,), {"depth_radius": 0, "bias": 2.0}, True),
    (tf.nn.batch_normalization, gt.nn.batch_normalization,
     (IMAGES, IMAGES[0, 0, 0], AT_LEAST_ONE[0, :3], UNIT[0, :3], PROBABILITIES[0, :3], 1e-3), {},
     True),
    (tf.nn.batch_normalization, gt.nn.batch_normalization,
     (A, ROW, AT_LEAST_ONE[0], None, None, 0.1), {}, True),
    (*normalized_by(1), (ROW, A, AT_LEAST_ONE[0], UNIT[0], PROBABILITIES[0], 1e-3), {}, True),
    (*normalized_by(2), (AT_LEAST_ONE[0], A, ROW, UNIT[0], PROBABILITIES[0], 1e-3), {}, True),
    (*normalized_by(4), (PROBABILITIES[0], A, ROW, AT_LEAST_ONE[0], UNIT[0], 1e-3), {}, True),
    (tf.nn.max_pool, gt.nn.max_pool, (IMAGES, 2, 2, "VALID"), {}, True),
    (tf.nn.avg_pool, gt.nn.avg_pool, (IMAGES, 3, 2, "SAME"), {}, True),
    (tf.nn.conv1d, gt.nn.conv1d, (SIGNAL, KERNEL_1D, 1, "VALID"), {}, True),
    (tf.nn.conv1d, gt.nn.conv1d, (SIGNAL, KERNEL_1D, 2, "SAME"), {}, True),
    (tf.nn.conv1d, gt.nn.conv1d, (SIGNAL, KERNEL_1D, [1, 1, 1], "SAME"), {"dilations": 2},
     True),
    (tf.nn.max_pool1d, gt.nn.max_pool1d, (SIGNAL, 2, 2, "VALID"), {}, True),
    (tf.nn.avg_pool1d, gt.nn.avg_pool1d, (SIGNAL, [3], [1, 2, 1], "SAME"), {}, True),
    (tf.nn.pool, gt.nn.pool, (IMAGES, [2, 3], "MAX"), {"strides": [2, 1]}, True),
    (tf.nn.pool, gt.nn.pool, (IMAGES, [3, 3], "AVG"), {"padding": "SAME"}, True),
    (tf.nn.pool, gt.nn.pool, (SIGNAL, [3], "AVG"), {"strides": [2], "padding": "SAME"}, True),
    (tf.nn.convolution, gt.nn.convolution, (SIGNAL, KERNEL_1D), {"padding": "SAME"}, True),
    (tf.nn.convolution, gt.nn.convolution, (IMAGES, DEPTHWISE[..., :1]),
     {"strides": 2, "padding": "VALID"}, True),
    (tf.nn.atrous_conv2d, gt.nn.atrous_conv2d, (IMAGES, DEPTHWISE, 2, "SAME"), {}, True),
    (*weighted_moment(0), (A, [0], PROBABILITIES), {}, True),
    (*weighted_moment(1), (A, [1], PROBABILITIES[:1]), {"keepdims": True}, True),
    (*weighted_moment(1), (A, [0, 1], PROBABILITIES), {}, True),
    (tf.nn.depthwise_conv2d, gt.nn.depthwise_conv2d, (IMAGES, DEPTHWISE, [1, 1, 1, 1], "SAME"),
     {}, True),
    (tf.nn.depthwise_conv2d, gt.nn.depthwise_conv2d, (IMAGES, DEPTHWISE, [1, 2, 2, 1], "VALID"),
     {}, True),
    (tf.nn.depthwise_conv2d, gt.nn.depthwise_conv2d, (IMAGES, DEPTHWISE, [1, 1, 1, 1], "VALID"),
     {"dilations": [2, 2]}, True),
    (tf.nn.separable_conv2d, gt.nn.separable_conv2d,
     (IMAGES, DEPTHWISE, POINTWISE, [1, 1, 1, 1], "SAME"), {}, True),
    (tf.nn.space_to_depth, gt.nn.space_to_depth, (IMAGES, 2), {}, True),
    (tf.nn.space_to_depth, gt.nn.space_to_depth, (IMAGES, 3), {}, True),
    (tf.nn.depth_to_space, gt.nn.depth_to_space, (DEPTH, 2), {}, True),
    (*weighted_cross_entropy(), (A, PROBABILITIES, 3.0), {}, True),
    (*log_poisson(), (A, COUNTS), {}, True),
    (*log_poisson(), (A, COUNTS), {"compute_full_loss": True}, True),
    (*statistic(0), (A, [0, 1]), {}, False),
    (*statistic(1), (A, [1]), {"keepdims": True}, True),
    (*statistic(2), (A, [0]), {"shift": 0.5}, True),
    (*moments_from_statistics(0, None), (A, [0]), {}, True),
    (*moments_from_statistics(1, 0.25), (A, [1]), {}, True),
    (tf.nn.compute_average_loss, gt.nn.compute_average_loss, (ROW,), {}, True),
    (tf.nn.compute_average_loss, gt.nn.compute_average_loss, (ROW,),
     {"sample_weight": PROBABILITIES[0], "global_batch_size": 8}, True),
    (tf.nn.scale_regularization_loss, gt.nn.scale_regularization_loss, (A,), {}, True),
    (tf.nn.conv1d_transpose, gt.nn.conv1d_transpose, (SIGNAL, KERNEL_1D_T, [2, 18, 4], 2), {},
     True),
    (tf.nn.conv1d_transpose, gt.nn.conv1d_transpose,
     (SIGNAL, KERNEL_1D_T, [2, 11, 4], [1, 1, 1], "VALID"), {}, True),
    (tf.nn.conv_transpose, gt.nn.conv_transpose, (SIGNAL, KERNEL_1D_T, [2, 9, 4], 1), {}, True),
    (tf.nn.conv_transpose, gt.nn.conv_transpose,
     (IMAGES, DEPTHWISE.transpose(0, 1, 3, 2).copy(), [2, 12, 12, 2], 2), {}, True),
    (tf.nn.zero_fraction, gt.nn.zero_fraction, (WITH_ZEROS,), {}, False),
    (tf.nn.in_top_k, gt.nn.in_top_k, (TARGETS, A[:, :5], 2), {}, False),
]

TOP_LEVEL_CASES = [
    (tf.acosh, gt.acosh, (AT_LEAST_ONE,), {}, True),
    (tf.asinh, gt.asinh, (A,), {}, True),
    (tf.atanh, gt.atanh, (UNIT,), {}, True),
    (tf.cosh, gt.cosh, (UNIT,), {}, True),
    (tf.sinh, gt.sinh, (UNIT,), {}, True),
    (tf.floor, gt.floor, (HALVES,), {}, False),
    (tf.round, gt.round, (HALVES,), {}, False),
    (tf.cumsum, gt.cumsum, (A,), {"axis": 1}, True),
    (tf.cumsum, gt.cumsum, (A,), {"axis": -1, "exclusive": True, "reverse": True}, True),
    (tf.cumsum, gt.cumsum, (INTS,), {"axis": 0}, False),
    (tf.scalar_mul, gt.scalar_mul, (2.5, A), {}, True),
    (tf.roll, gt.roll, (A, 2, 1), {}, True),
    (tf.roll, gt.roll, (A, [1, -2], [0, 1]), {}, True),
    (tf.reverse, gt.reverse, (A, [0, -1]), {}, True),
    (tf.reverse, gt.reverse, (INTS, [1]), {}, False),
    (tf.repeat, gt.repeat, (A, 2), {"axis": 0}, True),
    (tf.repeat, gt.repeat, (A, [1, 0, 3]), {"axis": 0}, True),
    (tf.repeat, gt.repeat, (INTS, 2), {}, False),
    (*meshgrid_stacked(), (ROW, A[0, :3]), {"indexing": "xy"}, True),
    (*meshgrid_stacked(), (ROW, A[0, :3]), {"indexing": "ij"}, True),
    (tf.rank, gt.rank, (IMAGES,), {}, False),
    (tf.searchsorted, gt.searchsorted, (np.sort(A, axis=1), B_QUERIES), {}, False),
    (tf.searchsorted, gt.searchsorted, (np.sort(A, axis=1), B_QUERIES), {"side": "right"},
     False),
    (tf.searchsorted, gt.searchsorted, (np.array([1, 3, 3, 7], np.int32),
                                        np.array([0, 3, 4, 9], np.int32)), {"side": "right"},
     False),
    (tf.histogram_fixed_width, gt.histogram_fixed_width, (A, [-2.0, 2.5]), {"nbins": 7}, False),
    (tf.histogram_fixed_width, gt.histogram_fixed_width, (IMAGES, [-1.0, 1.0]), {}, False),
    (tf.histogram_fixed_width_bins, gt.histogram_fixed_width_bins, (A, [-2.0, 2.5]),
     {"nbins": 7}, False),
    (tf.reverse_sequence, gt.reverse_sequence, (A, np.array([2, 5, 0], np.int64)),
     {"seq_axis": 1}, True),
    (tf.reverse_sequence, gt.reverse_sequence, (IMAGES, np.array([3, 6], np.int32)),
     {"seq_axis": 2, "batch_axis": 0}, True),
    (tf.reverse_sequence, gt.reverse_sequence, (SIGNAL, np.array([4, 0, 9], np.int32)),
     {"seq_axis": 1, "batch_axis": 2}, True),
    (tf.sin, gt.sin, (A * 3,), {}, True),
    (tf.cos, gt.cos, (A * 3,), {}, True),
    (tf.tan, gt.tan, (UNIT,), {}, True),
    (tf.asin, gt.asin, (UNIT,), {}, True),
    (tf.acos, gt.acos, (UNIT,), {}, True),
    (tf.atan, gt.atan, (A * 3,), {}, True),
    (tf.atan2, gt.atan2, (A, ROW), {}, True),
    (tf.atan2, gt.atan2, (A, np.array([0.0, -1.0, 2.0, -0.5, 0.0], np.float32)), {}, True),
    (tf.math.sin, gt.math.sin, (ROW,), {}, True),
    (tf.math.cos, gt.math.cos, (ROW,), {}, True),
    (tf.math.tan, gt.math.tan, (UNIT,), {}, True),
    (tf.math.asin, gt.math.asin, (UNIT,), {}, True),
    (tf.math.acos, gt.math.acos, (UNIT,), {}, True),
    (tf.math.atan, gt.math.atan, (ROW,), {}, True),
    (tf.math.atan2, gt.math.atan2, (ROW, A), {}, True),
    (tf.sort, gt.sort, (A,), {}, True),
    (tf.sort, gt.sort, (A,), {"axis": 0, "direction": "DESCENDING"}, True),
    (tf.sort, gt.sort, (INTS,), {}, False),
    (tf.argsort, gt.argsort, (A,), {}, False),
    (tf.argsort, gt.argsort, (A,), {"axis": 0, "direction": "DESCENDING"}, False),
    (*top_k_part(0), (A,), {"k": 3}, True),
    (*top_k_part(1), (A,), {"k": 3}, False),
    (*top_k_part(0), (IMAGES,), {}, True),
    (*top_k_part(1), (INTS,), {"k": 4}, False),
    (*nn_top_k_part(0), (A, 2), {}, True),
    (*nn_top_k_part(1), (A, 5), {}, False),
    (tf.space_to_batch_nd, gt.space_to_batch_nd, (IMAGES, [2, 3], [[1, 1], [0, 3]]), {}, True),
    (tf.space_to_batch_nd, gt.space_to_batch_nd, (SIGNAL, [3], [[0, 0]]), {}, True),
    (tf.space_to_batch, gt.space_to_batch, (IMAGES, [2, 2], [[0, 0], [2, 0]]), {}, True),
    (tf.nn.space_to_batch, gt.nn.space_to_batch, (IMAGES, [3, 1], [[0, 0], [0, 0]]), {}, True),
    (tf.batch_to_space, gt.batch_to_space, (DEPTH, [2, 1], [[1, 0], [0, 1]]), {}, True),
    (tf.batch_to_space, gt.batch_to_space, (SIGNAL, [2], [[0, 1]]), {}, True),
    (tf.truncatediv, gt.truncatediv, (INTS, np.array([2, -3, 4, -1], np.int32)), {}, False),
    (tf.truncatediv, gt.truncatediv, (A * 5, UNIT + 2.0), {}, False),
    (tf.truncatemod, gt.truncatemod, (INTS, np.array([2, -3, 4, -3], np.int32)), {}, False),
    (tf.truncatemod, gt.truncatemod, (A * 5, UNIT + 2.0), {}, False),
    (tf.gather_nd, gt.gather_nd, (IMAGES, np.array([[1, 2], [0, 5], [1, 2]], np.int32)), {}, True),
    (tf.gather_nd, gt.gather_nd, (A, np.array([[[2, 4]], [[0, 1]]], np.int64)), {}, True),
    # whole rows: TF's gradient is IndexedSlices, which the comparison does not read
    (tf.gather_nd, gt.gather_nd, (A, np.array([[2], [0]], np.int32)), {}, False),
    (tf.slice, gt.slice, (A, [1, 2], [2, -1]), {}, True),
    (tf.slice, gt.slice, (INTS, [0, 1], [1, 2]), {}, False),
    (tf.unravel_index, gt.unravel_index, (np.array([0, 5, 11], np.int32), [3, 4]), {}, False),
    (tf.unravel_index, gt.unravel_index, (np.int32(7), [2, 4]), {}, False),
    (tf.sequence_mask, gt.sequence_mask, (np.array([1, 3, 0], np.int32),), {}, False),
    (tf.sequence_mask, gt.sequence_mask, (np.array([[1, 4]], np.int64), 5), {}, False),
    (tf.sequence_mask, gt.sequence_mask, (np.array([2, 1], np.int32), 3, "float32"), {}, False),
    (*identity_n_stacked(), (A, PROBABILITIES), {}, True),
    (*shape_n_stacked(), (A, PROBABILITIES), {}, False),
    (tf.realdiv, gt.realdiv, (A, AT_LEAST_ONE), {}, True),
    (tf.norm, gt.norm, (A,), {}, True),
    (tf.norm, gt.norm, (A,), {"axis": 1, "keepdims": True}, True),
    (tf.clip_by_value, gt.clip_by_value, (A, -1.0, 0.5), {}, True),
    (tf.clip_by_norm, gt.clip_by_norm, (A, 2.0), {}, True),
    (tf.clip_by_norm, gt.clip_by_norm, (A, 1.5), {"axes": [1]}, True),
    (tf.clip_by_norm, gt.clip_by_norm, (A * 0.01, 100.0), {}, True),
    (tf.clip_by_norm, gt.clip_by_norm, (np.zeros((2, 3), np.float32), 1.0), {}, True),
    (*clipped_by_global_norm(0), (A, ROW, 2.0), {}, True),
    (*clipped_by_global_norm(2), (A, ROW, 2.0), {}, True),
    (*clipped_by_global_norm("norm"), (A, ROW, 2.0), {}, True),
    (*clipped_by_global_norm(0), (A * 0.01, ROW * 0.01, 50.0), {}, True),
]
CASES = NN_CASES + TOP_LEVEL_CASES


def case_id(case):
    theirs, _, args, kwargs, _ = case
    return getattr(theirs, "__name__", "op") + "".join(f"-{k}" for k in kwargs) + \
        f"-{len(args)}args"


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_forward_matches_tensorflow(case):
    theirs_op, ours_op, args, kwargs, _ = case
    assert_forward_matches(theirs_op, ours_op, args, kwargs, atol=2e-6)


@pytest.mark.parametrize("case", [c for c in CASES if c[4]], ids=case_id)
def test_gradient_matches_tensorflow(case):
    theirs_op, ours_op, args, kwargs, _ = case
    assert_gradient_matches(theirs_op, ours_op, args, kwargs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["float32", "float16", "bfloat16", "int32", "int64", "uint8",
                                  "bool"])
def test_dtype_names_match_tensorflows(name):
    ours, theirs = gt.as_dtype(name), tf.as_dtype(name)
    assert isinstance(ours, gt.DType) and isinstance(theirs, tf.DType)
    assert (ours.name, ours.is_floating_point, ours.size) == \
        (theirs.name, theirs.is_floating, theirs.size)
    assert gt.as_dtype(getattr(gt, name)).name == getattr(tf, name).name


def test_constant_initializers_match_tensorflows():
    for ours, theirs in ((gt.ones_initializer(), tf.ones_initializer()),
                         (gt.zeros_initializer(), tf.zeros_initializer()),
                         (gt.constant_initializer(2.5), tf.constant_initializer(2.5))):
        made, expected = ours((2, 3)), theirs((2, 3))
        assert dtype_name(made) == dtype_name(expected) and tuple(made.shape) == (2, 3)
        np.testing.assert_array_equal(as_array(made), expected.numpy())


@pytest.mark.parametrize("ours, theirs, mean, std", [
    (gt.random_normal_initializer(1.0, 2.0, seed=5), tf.random_normal_initializer(1.0, 2.0, 5),
     1.0, 2.0),
    (gt.random_uniform_initializer(-1.0, 3.0, seed=5),
     tf.random_uniform_initializer(-1.0, 3.0, 5), 1.0, 4.0 / np.sqrt(12.0)),
])
def test_random_initializers_draw_tensorflows_distribution(ours, theirs, mean, std):
    # the draws are not TensorFlow's (another generator): the shape, dtype and moments are
    made, expected = ours((40000,)), theirs((40000,))
    assert dtype_name(made) == dtype_name(expected) and tuple(made.shape) == (40000,)
    values = as_array(made)
    assert abs(values.mean() - mean) < 0.05 and abs(values.std() - std) < 0.05
    np.testing.assert_array_equal(as_array(ours((40000,))), values)  # seeded: repeatable


def test_eager_mode_and_newaxis_match_tensorflows():
    assert gt.executing_eagerly() is tf.executing_eagerly() is True
    assert tuple(gt.constant(A)[gt.newaxis, :, gt.newaxis].shape) == \
        tuple(tf.constant(A)[tf.newaxis, :, tf.newaxis].shape)
    assert gt.uint8.name == tf.uint8.name and gt.bool.name == tf.bool.name


def test_function_dtypes_and_linalg_submodules_match_tensorflows():
    def affine(x):
        return x * 2.0 + 1.0

    np.testing.assert_allclose(as_array(gt.function(affine)(gt.constant(A))),
                               tf.function(affine)(tf.constant(A)).numpy(), rtol=1e-6)
    np.testing.assert_allclose(as_array(gt.linalg.matmul(A, A.T)), tf.linalg.matmul(A, A.T).numpy(),
                               rtol=1e-5, atol=1e-5)
    assert gt.dtypes.int32.name == tf.dtypes.int32.name
    assert gt.dtypes.as_dtype("bool").name == tf.dtypes.as_dtype("bool").name
    gt.debugging.set_log_device_placement(False)
    tf.debugging.set_log_device_placement(False)
    assert gt.debugging.get_log_device_placement() is False


def test_selu_and_elu_stay_finite_for_large_negative_and_positive_inputs():
    extreme = np.array([-100.0, -30.0, 0.0, 30.0, 80.0], np.float32)
    for name in ("elu", "selu"):
        ours = as_array(getattr(gt.nn, name)(extreme))
        assert np.isfinite(ours).all(), name
        np.testing.assert_allclose(ours, getattr(tf.nn, name)(extreme).numpy(), rtol=1e-6)


@pytest.mark.parametrize("call, error, words", [
    (lambda: gt.roll(A, 1, None), ValueError, "tf.roll needs axis"),
    (lambda: gt.reverse(A, 1), TypeError, "axis as a list of ints"),
    (lambda: gt.nn.conv1d(IMAGES, KERNEL_1D, 1, "VALID"), ValueError, "input (batch, width"),
    (lambda: gt.nn.conv1d(SIGNAL, KERNEL_1D, [2, 1, 1], "VALID"), ValueError,
     "stride over the batch or channel axis must be 1"),
    (lambda: gt.nn.conv1d(SIGNAL, KERNEL_1D, 1, "VALID", data_format="NCW"), ValueError,
     "data_format='NWC'"),
    (lambda: gt.nn.pool(IMAGES, [2, 2], "MIN"), ValueError, "'MAX' or 'AVG'"),
    (lambda: gt.nn.pool(IMAGES, [2, 2, 2], "MAX"), ValueError, "1-D and 2-D windows"),
    (lambda: gt.nn.max_pool1d(IMAGES, 2, 2, "VALID"), ValueError, "input (batch, width"),
    (lambda: gt.nn.convolution(A, KERNEL_1D), ValueError, "got rank 2"),
    (lambda: gt.gather_nd(A, [[0, 5]]), gt.errors.InvalidArgumentError, "out of range"),
    (lambda: gt.gather_nd(A, [[0.5, 1.0]]), TypeError, "integer indices"),
    (lambda: gt.gather_nd(A, [[0, 1, 2]]), TypeError, "index vectors of 1 to 2 entries"),
    (lambda: gt.space_to_batch_nd(IMAGES, [4, 2], [[0, 0], [0, 0]]), ValueError,
     "divisible by block_shape"),
    (lambda: gt.space_to_batch_nd(IMAGES, [2, 0], [[0, 0], [0, 0]]), ValueError,
     "list of positive ints"),
    (lambda: gt.batch_to_space(SIGNAL, [4], [[0, 0]]), ValueError, "block count 4"),
    (lambda: gt.batch_to_space(DEPTH, [2], [[0, 5]]), ValueError, "remove more than"),
    (lambda: gt.sort(A, direction="UP"), ValueError, "'ASCENDING' or 'DESCENDING'"),
    (lambda: gt.math.top_k(A, 6), gt.errors.InvalidArgumentError, "k <= the last dimension"),
    (lambda: gt.searchsorted(A, ROW), ValueError, "share every axis but the last"),
    (lambda: gt.searchsorted(A, A, side="middle"), ValueError, "'left' or 'right'"),
    (lambda: gt.histogram_fixed_width(A, [1.0, 1.0]), ValueError, "high > low"),
    (lambda: gt.reverse_sequence(A, [1, 2, 6], seq_axis=1), gt.errors.InvalidArgumentError,
     "one length in .0, 5. per batch entry"),
    (lambda: gt.nn.conv_transpose(IMAGES, DEPTHWISE, [2, 3, 4, 5, 6, 7], 1), ValueError,
     "rank 3, 4 or 5"),
    (lambda: gt.slice(A, [0], [1]), ValueError, "one begin and one size per axis"),
    (lambda: gt.sequence_mask(ROW), TypeError, "integer lengths"),
    (lambda: gt.clip_by_norm(A, -1.0), ValueError, "non-negative number"),
    (lambda: gt.clip_by_global_norm(A, 1.0), TypeError, "a list of tensors"),
    (lambda: gt.nn.depthwise_conv2d(IMAGES, DEPTHWISE[:, :, :2], 1, "SAME"), ValueError,
     "the same C"),
    (lambda: gt.nn.space_to_depth(IMAGES, 4), ValueError, "divisible by block_size 4"),
    (lambda: gt.nn.depth_to_space(IMAGES, 2), ValueError, "divisible by block_size² = 4"),
])
def test_bad_arguments_are_rejected_by_name(call, error, words):
    with pytest.raises(error, match=words.replace("(", r"\(")):
        call()
