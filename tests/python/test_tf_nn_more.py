"""More of ``gpuaccel.nn`` against real ``tf.nn`` on the same seeded inputs: grayscale
morphology, max pooling with its argmax, the transposed atrous convolution, the global
normalization form of batch norm, approximate top-k (exact here) and the CTC label helpers:
values, shapes, dtypes and gradients."""
import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import as_array, assert_case_matches, assert_gradient_matches, case_ids

tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(77)
IMAGES = RNG.normal(size=(2, 5, 6, 3)).astype(np.float32)
MORPH = RNG.normal(size=(2, 3, 3)).astype(np.float32)
SMALL = RNG.normal(size=(2, 4, 4, 3)).astype(np.float32)
KERNEL_T = RNG.normal(size=(3, 3, 2, 3)).astype(np.float32)  # (h, w, out, in)
STATS = [RNG.normal(size=(3,)).astype(np.float32) for _ in range(4)]
STATS[1] = np.abs(STATS[1]) + 0.5  # a variance
SCORES = RNG.normal(size=(3, 7)).astype(np.float32)

CASES = [
    (tf.nn.dilation2d, gt.nn.dilation2d,
     (IMAGES, MORPH, [1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1]), {}, True),
    (tf.nn.dilation2d, gt.nn.dilation2d,
     (IMAGES, MORPH[:2], [1, 2, 1, 1], "VALID", "NHWC", [1, 1, 2, 1]), {}, True),
    (tf.nn.erosion2d, gt.nn.erosion2d,
     (IMAGES, MORPH, [1, 1, 2, 1], "SAME", "NHWC", [1, 1, 1, 1]), {}, True),
    (tf.nn.erosion2d, gt.nn.erosion2d,
     (IMAGES, MORPH[:, :2], [1, 1, 1, 1], "VALID", "NHWC", [1, 2, 1, 1]), {}, True),
    (tf.nn.atrous_conv2d_transpose, gt.nn.atrous_conv2d_transpose,
     (SMALL, KERNEL_T, [2, 4, 4, 2], 2, "SAME"), {}, True),
    (tf.nn.batch_norm_with_global_normalization, gt.nn.batch_norm_with_global_normalization,
     (IMAGES, *STATS, 1e-3, True), {}, True),
    (tf.nn.batch_norm_with_global_normalization, gt.nn.batch_norm_with_global_normalization,
     (IMAGES, *STATS, 1e-3, False), {}, True),
]


@pytest.mark.parametrize("case", CASES, ids=case_ids(CASES))
def test_matches_tensorflow(case):
    assert_case_matches(case, atol=1e-5, rtol=1e-4)


def test_morphology_gradient_reaches_the_filters():
    args = ([1, 1, 1, 1], "SAME", "NHWC", [1, 1, 1, 1])
    for theirs, ours in ((tf.nn.dilation2d, gt.nn.dilation2d),
                         (tf.nn.erosion2d, gt.nn.erosion2d)):
        assert_gradient_matches(lambda f, x: theirs(x, f, *args),
                                lambda f, x: ours(x, f, *args), (MORPH, IMAGES), {},
                                rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("padding, include_batch", [("VALID", False), ("SAME", True)])
def test_max_pool_with_argmax(padding, include_batch):
    values, indices = tf.nn.max_pool_with_argmax(IMAGES, 2, 2, padding,
                                                 include_batch_in_index=include_batch)
    ours, our_indices = gt.nn.max_pool_with_argmax(IMAGES, 2, 2, padding,
                                                   include_batch_in_index=include_batch)
    np.testing.assert_array_equal(as_array(ours), values.numpy())
    assert our_indices.dtype.name == indices.dtype.name == "int64"
    np.testing.assert_array_equal(our_indices.numpy(), indices.numpy())
    assert_gradient_matches(lambda x: tf.nn.max_pool_with_argmax(x, 2, 2, padding)[0],
                            lambda x: gt.nn.max_pool_with_argmax(x, 2, 2, padding)[0],
                            (IMAGES,), {}, rtol=1e-5, atol=1e-6)
    _, int32_indices = gt.nn.max_pool_with_argmax(IMAGES, 2, 2, padding, output_dtype="int32")
    assert int32_indices.dtype.name == "int32"


def test_approx_top_k_is_exact_top_k():
    values, indices = tf.nn.approx_max_k(SCORES, 3)
    ours, our_indices = gt.nn.approx_max_k(SCORES, 3)
    np.testing.assert_array_equal(as_array(ours), values.numpy())
    assert our_indices.dtype.name == indices.dtype.name
    np.testing.assert_array_equal(our_indices.numpy(), indices.numpy())
    # TF's CPU kernel has approx_min_k only through XLA: compare with the max of -x instead.
    negated, negated_indices = tf.nn.approx_max_k(-SCORES.T, 2)
    smallest, smallest_indices = gt.nn.approx_min_k(SCORES, 2, reduction_dimension=0)
    np.testing.assert_array_equal(as_array(smallest), -negated.numpy().T)
    np.testing.assert_array_equal(smallest_indices.numpy(), negated_indices.numpy().T)
    lowest, lowest_indices = gt.nn.approx_min_k(SCORES, 2)
    np.testing.assert_array_equal(as_array(lowest), -tf.nn.approx_max_k(-SCORES, 2)[0].numpy())
    np.testing.assert_array_equal(lowest_indices.numpy(),
                                  tf.nn.approx_max_k(-SCORES, 2)[1].numpy())
    assert_gradient_matches(lambda x: tf.nn.approx_max_k(x, 3)[0],
                            lambda x: gt.nn.approx_max_k(x, 3)[0], (SCORES,), {}, rtol=1e-6,
                            atol=1e-6)


def test_ctc_label_helpers():
    labels = np.array([[1, 1, 2, 2, 3], [4, 4, 4, 5, 0], [7, 7, 7, 7, 7]], np.int64)
    lengths = np.int32([5, 3, 0])
    for ours, theirs in zip(gt.nn.collapse_repeated(labels, lengths),
                            tf.nn.collapse_repeated(labels, lengths)):
        assert ours.dtype.name == theirs.dtype.name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    dense = np.array([[3, 1, 3, 0], [2, 2, 5, 0]], np.int32)
    for ours, theirs in zip(gt.nn.ctc_unique_labels(dense), tf.nn.ctc_unique_labels(dense)):
        assert ours.dtype.name == theirs.dtype.name
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
