"""``tf.image``'s image_gradients, sobel_edges, total_variation, psnr, ssim and
ssim_multiscale against real TensorFlow on the same seeded images: values, shapes, dtypes,
integer images, batch broadcasting, gradients and errors."""
import numpy as np
import pytest

import gpuaccel as ga

tf = pytest.importorskip("tensorflow")
from test_tf_image_ops import assert_same_gradient  # noqa: E402 -- after TF's importorskip

RNG = np.random.default_rng(5)
A = RNG.uniform(0, 1, (2, 13, 15, 3)).astype(np.float32)
B = np.clip(A + RNG.normal(0, 0.1, A.shape), 0, 1).astype(np.float32)
UINT8_A, UINT8_B = (A * 255).astype(np.uint8), (B * 255).astype(np.uint8)


def close(ours, theirs, atol=1e-5):
    theirs = np.asarray(theirs)
    assert tuple(ours.shape) == theirs.shape and ours.dtype.name == theirs.dtype.name
    np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=atol)


def test_differences_and_total_variation_match_tensorflow():
    for ours, theirs in zip(ga.image.image_gradients(A), tf.image.image_gradients(
            tf.constant(A))):
        close(ours, theirs)
    close(ga.image.sobel_edges(A), tf.image.sobel_edges(tf.constant(A)))
    close(ga.image.total_variation(A), tf.image.total_variation(tf.constant(A)), atol=1e-3)
    close(ga.image.total_variation(A[0]), tf.image.total_variation(tf.constant(A[0])),
          atol=1e-3)
    assert_same_gradient(lambda t: ga.image.sobel_edges(t), lambda t: tf.image.sobel_edges(t), A)
    assert_same_gradient(lambda t: ga.image.image_gradients(t)[1],
                         lambda t: tf.image.image_gradients(t)[1], A, seed=1)
    with pytest.raises(ValueError):
        tf.image.image_gradients(tf.constant(A[0]))
    with pytest.raises(ValueError, match="4D"):
        ga.image.image_gradients(A[0])
    with pytest.raises(ValueError, match="3 or 4"):
        ga.image.total_variation(A[0, 0])


def test_psnr_and_ssim_match_tensorflow():
    close(ga.image.psnr(A, B, 1.0), tf.image.psnr(A, B, 1.0))
    close(ga.image.psnr(UINT8_A, UINT8_B, 255), tf.image.psnr(UINT8_A, UINT8_B, 255), atol=1e-4)
    close(ga.image.ssim(A, B, 1.0), tf.image.ssim(A, B, 1.0))
    close(ga.image.ssim(A, B[:1], 1.0), tf.image.ssim(A, B[:1], 1.0))  # batches broadcast
    close(ga.image.ssim(UINT8_A, UINT8_B, 255, filter_size=5),
          tf.image.ssim(UINT8_A, UINT8_B, 255, filter_size=5))
    close(ga.image.ssim(A, B, 1.0, filter_size=7, return_index_map=True),
          tf.image.ssim(A, B, 1.0, filter_size=7, return_index_map=True))
    factors = (0.5, 0.3, 0.2)  # three scales: 13x15 -> 7x8 -> 4x4 (odd sizes padded)
    close(ga.image.ssim_multiscale(A, B, 1.0, power_factors=factors, filter_size=3),
          tf.image.ssim_multiscale(A, B, 1.0, power_factors=factors, filter_size=3))
    assert_same_gradient(lambda t: ga.image.ssim(t, B, 1.0, filter_size=5),
                         lambda t: tf.image.ssim(t, B, 1.0, filter_size=5), A)
    assert_same_gradient(lambda t: ga.image.psnr(t, B, 1.0), lambda t: tf.image.psnr(t, B, 1.0),
                         A, seed=2)


def test_image_comparisons_refuse_what_tensorflow_refuses():
    for call in (lambda image: image.ssim(A, B[:, :5], 1.0),
                 lambda image: image.ssim(A[0, 0], B[0, 0], 1.0)):
        with pytest.raises(ValueError):
            call(tf.image)
        with pytest.raises(ValueError):
            call(ga.image)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.psnr(A, B[:, :5], 1.0)
    with pytest.raises(ga.errors.InvalidArgumentError, match="Incompatible shapes"):
        ga.image.psnr(A, B[:, :5], 1.0)  # TF's words: its eager arithmetic meets them first
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.image.ssim(A, B, 1.0, filter_size=14)
    with pytest.raises(ga.errors.InvalidArgumentError, match="filter_size"):
        ga.image.ssim(A, B, 1.0, filter_size=14)
