"""More of ``gpuaccel.nn`` against real ``tf.nn`` on the same seeded inputs: grayscale
morphology, max pooling with its argmax, the transposed atrous convolution, the global
normalization form of batch norm, approximate top-k (exact here) and the CTC label helpers:
values, shapes, dtypes and gradients."""
import numpy as np
import pytest

import gpuaccel as gt
from tf_comparison import (as_array, assert_case_matches, assert_forward_matches,
                           assert_gradient_matches, case_ids)

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


# ---- candidate sampling and the sampled losses ----

TRUE_CLASSES = np.array([[1, 2], [3, 4], [0, 7]], np.int64)
SAMPLED = (np.int64([2, 5, 9, 3]), np.float32([[0.3, 0.6], [0.2, 0.5], [0.9, 0.4]]),
           np.float32([0.25, 0.5, 0.75, 0.3]))  # as a sampler would give them


def test_candidate_samplers_follow_tensorflows_rules():
    tf.random.set_seed(11)
    gt.random.set_seed(11)
    for uniform, log_uniform, fixed_unigram, every, module in (
            (tf.random.uniform_candidate_sampler, tf.random.log_uniform_candidate_sampler,
             tf.nn.fixed_unigram_candidate_sampler, tf.nn.all_candidate_sampler, tf),
            (gt.random.uniform_candidate_sampler, gt.random.log_uniform_candidate_sampler,
             gt.nn.fixed_unigram_candidate_sampler, gt.nn.all_candidate_sampler, gt)):
        ids, true_count, sampled_count = uniform(TRUE_CLASSES, 2, 6, True, 10)
        assert ids.dtype.name == "int64" and len(set(ids.numpy().tolist())) == 6
        assert ids.numpy().min() >= 0 and ids.numpy().max() < 10
        # unique: every count is p * 6 when no draw was rejected, else 1 - (1 - p) ** tries
        # for one number of tries > 6 (TF's formula)
        count = true_count.numpy()
        tries = np.log1p(-count) / np.log1p(-0.1)
        assert np.allclose(count, 0.6) or (
            np.allclose(tries, np.round(tries[0, 0]), rtol=1e-4) and np.round(tries[0, 0]) > 6)
        np.testing.assert_allclose(sampled_count.numpy(), count[0, 0], rtol=1e-6)
        ids, true_count, sampled_count = log_uniform(TRUE_CLASSES, 2, N_DRAWS, False, 10)
        p = np.log((np.arange(10) + 2.0) / (np.arange(10) + 1.0)) / np.log(11.0)
        np.testing.assert_allclose(true_count.numpy(), p[TRUE_CLASSES] * N_DRAWS, rtol=1e-5)
        np.testing.assert_allclose(sampled_count.numpy(), p[ids.numpy()] * N_DRAWS, rtol=1e-5)
        np.testing.assert_allclose(np.bincount(ids.numpy(), minlength=10) / N_DRAWS, p,
                                   atol=0.015)
        ids, true_count, _ = fixed_unigram(TRUE_CLASSES, 2, N_DRAWS, False, 8,
                                           unigrams=[1.0, 2, 3, 4, 5, 6], distortion=0.5,
                                           num_reserved_ids=2)
        weights = np.r_[0, 0, np.sqrt([1.0, 2, 3, 4, 5, 6])]
        np.testing.assert_allclose(true_count.numpy(),
                                   weights[TRUE_CLASSES] / weights.sum() * N_DRAWS, rtol=1e-5)
        np.testing.assert_allclose(np.bincount(ids.numpy(), minlength=8) / N_DRAWS,
                                   weights / weights.sum(), atol=0.015)
        everything = every(TRUE_CLASSES, 2, 8, True)
        np.testing.assert_array_equal(everything[0].numpy(), np.arange(8))
        assert everything[1].numpy().tolist() == [[1.0, 1.0]] * 3
        with pytest.raises(module.errors.InvalidArgumentError, match="out of range"):
            every(TRUE_CLASSES, 2, 5, True)
        with pytest.raises(module.errors.InvalidArgumentError, match="range is too small"):
            uniform(TRUE_CLASSES, 2, 30, True, 10)
        with pytest.raises(module.errors.InvalidArgumentError, match="must be a matrix"):
            log_uniform(np.int64([1, 2]), 2, 3, True, 10)
    # the tf.random spellings of the same samplers: the deterministic parts agree exactly
    for ours, theirs in ((gt.random.all_candidate_sampler(TRUE_CLASSES, 2, 9, False),
                          tf.random.all_candidate_sampler(TRUE_CLASSES, 2, 9, False)),
                         (gt.random.fixed_unigram_candidate_sampler(
                             TRUE_CLASSES, 2, 4, False, 8, unigrams=[3.0, 1, 4, 1, 5, 9, 2, 6]),
                          tf.random.fixed_unigram_candidate_sampler(
                             TRUE_CLASSES, 2, 4, False, 8, unigrams=[3.0, 1, 4, 1, 5, 9, 2, 6]))):
        assert [t.dtype.name for t in ours] == [t.dtype.name for t in theirs]
        np.testing.assert_allclose(ours[1].numpy(), theirs[1].numpy(), rtol=1e-6)
    theirs = tf.nn.compute_accidental_hits(TRUE_CLASSES, SAMPLED[0], 2)
    ours = gt.nn.compute_accidental_hits(TRUE_CLASSES, SAMPLED[0], 2)
    for a, b in zip(ours, theirs):
        assert a.dtype.name == b.dtype.name
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert gt.nn.fixed_unigram_candidate_sampler is gt.random.fixed_unigram_candidate_sampler
    assert gt.nn.all_candidate_sampler is gt.random.all_candidate_sampler


N_DRAWS = 20000
CLASS_WEIGHTS = RNG.normal(size=(10, 4)).astype(np.float32)
CLASS_BIASES = RNG.normal(size=(10,)).astype(np.float32)
EMBEDDED = RNG.normal(size=(3, 4)).astype(np.float32)


@pytest.mark.parametrize("theirs, ours, kwargs", [
    (tf.nn.nce_loss, gt.nn.nce_loss, {}),
    (tf.nn.nce_loss, gt.nn.nce_loss, {"remove_accidental_hits": True}),
    (tf.nn.sampled_softmax_loss, gt.nn.sampled_softmax_loss, {}),
    (tf.nn.sampled_softmax_loss, gt.nn.sampled_softmax_loss, {"remove_accidental_hits": False}),
], ids=["nce", "nce-accidental-hits", "sampled-softmax", "sampled-softmax-keep-hits"])
def test_sampled_losses_match_tensorflow(theirs, ours, kwargs):
    def loss(fn):
        # w * 1.0: TF's gradient of a gather is IndexedSlices; the product makes it dense
        return lambda w, x: fn(w * 1.0, CLASS_BIASES, TRUE_CLASSES, x, 4, 10, num_true=2,
                               sampled_values=SAMPLED, **kwargs)
    assert_forward_matches(loss(theirs), loss(ours), (CLASS_WEIGHTS, EMBEDDED), {}, atol=1e-5)
    assert_gradient_matches(loss(theirs), loss(ours), (CLASS_WEIGHTS, EMBEDDED), {},
                            rtol=1e-4, atol=1e-5)
    assert_gradient_matches(lambda x: loss(theirs)(CLASS_WEIGHTS, x),
                            lambda x: loss(ours)(CLASS_WEIGHTS, x), (EMBEDDED,), {}, rtol=1e-4,
                            atol=1e-5)


def test_sampled_losses_draw_their_own_classes():
    gt.random.set_seed(4)
    for fn in (gt.nn.nce_loss, gt.nn.sampled_softmax_loss):
        out = fn(CLASS_WEIGHTS, CLASS_BIASES, TRUE_CLASSES, EMBEDDED, 5, 10, num_true=2)
        theirs = getattr(tf.nn, fn.__name__)(CLASS_WEIGHTS, CLASS_BIASES, TRUE_CLASSES,
                                             EMBEDDED, 5, 10, num_true=2)
        assert tuple(out.shape) == tuple(theirs.shape) == (3,)
        assert np.isfinite(out.numpy()).all() and (out.numpy() > 0).all()


@pytest.mark.parametrize("kwargs", [{}, {"decreasing": False}, {"axis": 0}])
def test_isotonic_regression(kwargs):
    x = RNG.normal(size=(4, 7)).astype(np.float32)
    theirs, their_segments = tf.nn.isotonic_regression(x, **kwargs)
    ours, our_segments = gt.nn.isotonic_regression(x, **kwargs)
    np.testing.assert_allclose(as_array(ours), theirs.numpy(), rtol=1e-5, atol=1e-6)
    assert our_segments.dtype.name == their_segments.dtype.name == "int32"
    np.testing.assert_array_equal(our_segments.numpy(), their_segments.numpy())
    assert_gradient_matches(lambda v: tf.nn.isotonic_regression(v, **kwargs)[0],
                            lambda v: gt.nn.isotonic_regression(v, **kwargs)[0], (x,), {},
                            rtol=1e-4, atol=1e-5)
