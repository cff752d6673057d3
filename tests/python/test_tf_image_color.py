"""``tf.image``'s colour spaces (HSV, YIQ, YUV), hue, saturation and gamma adjustments, and the
random_* / stateless_random_* names, against real TensorFlow on the same seeded images:
values, dtypes, gradients and error types. Random names are checked by rule on our draws and
TF's (the output is the adjustment of an allowed parameter, and seeded draws vary); the
stateless ones cannot give TF's numbers (gpuaccel's Philox stream is keyed differently,
see _random_samplers), so they are checked for the rule and for depending on the seed pair
alone."""
import numpy as np
import pytest

import gpuaccel as ga

tf = pytest.importorskip("tensorflow")
from test_tf_image_ops import assert_same_gradient  # noqa: E402 -- after TF's importorskip

RNG = np.random.default_rng(11)
IMAGES = RNG.uniform(0, 1, (2, 5, 7, 3)).astype(np.float32)
IMAGES[0, 0, :4] = [[0.5, 0.5, 0.5], [0, 0, 0], [1, 0.2, 1], [0.3, 0.9, 0.9]]  # gray, ties
ONE_IMAGE = IMAGES[1]
UINT8_IMAGES = RNG.integers(0, 256, (2, 5, 7, 3)).astype(np.uint8)


def assert_same(ours, theirs, atol=1e-5):
    theirs = np.asarray(theirs)
    assert ours.dtype.name == theirs.dtype.name, (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(ours.numpy().astype(np.float64), theirs.astype(np.float64),
                               rtol=1e-5, atol=atol)


def test_colour_space_conversions_match_tensorflow():
    for ours, theirs in ((ga.image.rgb_to_hsv, tf.image.rgb_to_hsv),
                         (ga.image.rgb_to_yiq, tf.image.rgb_to_yiq),
                         (ga.image.yiq_to_rgb, tf.image.yiq_to_rgb),
                         (ga.image.rgb_to_yuv, tf.image.rgb_to_yuv),
                         (ga.image.yuv_to_rgb, tf.image.yuv_to_rgb)):
        for image in (IMAGES, ONE_IMAGE):
            assert_same(ours(image), theirs(image))
    hsv = tf.image.rgb_to_hsv(IMAGES).numpy()
    assert_same(ga.image.hsv_to_rgb(hsv), tf.image.hsv_to_rgb(hsv))
    hsv[..., 0] = RNG.uniform(-0.5, 1.5, hsv.shape[:-1])  # hues outside [0, 1): TF's fallback
    assert_same(ga.image.hsv_to_rgb(hsv), tf.image.hsv_to_rgb(hsv))
    # uint8 values are taken as float32 numbers by the HSV kernels
    assert_same(ga.image.rgb_to_hsv(UINT8_IMAGES), tf.image.rgb_to_hsv(UINT8_IMAGES), atol=1e-3)
    # TF's two matrices are inverses to about 1e-4
    np.testing.assert_allclose(ga.image.yiq_to_rgb(ga.image.rgb_to_yiq(IMAGES)).numpy(), IMAGES,
                               atol=2e-4)


def test_colour_space_gradients_match_tensorflow():
    colourful = np.clip(IMAGES[1:], 0.05, 0.95)  # away from the hue's seams
    assert_same_gradient(ga.image.rgb_to_hsv, tf.image.rgb_to_hsv, colourful)
    assert_same_gradient(ga.image.rgb_to_yiq, tf.image.rgb_to_yiq, IMAGES, seed=1)
    assert_same_gradient(ga.image.yuv_to_rgb, tf.image.yuv_to_rgb, IMAGES, seed=2)
    assert_same_gradient(lambda t: ga.image.adjust_gamma(t, 2.2, 0.8),
                         lambda t: tf.image.adjust_gamma(t, 2.2, 0.8), IMAGES + 0.1, seed=3)


def test_hue_saturation_and_gamma_match_tensorflow():
    for image in (IMAGES, ONE_IMAGE, UINT8_IMAGES):
        tolerance = 1e-5 if image.dtype == np.float32 else 1.0  # uint8: rounding of x.5
        for delta in (0.3, -0.7, 1.0):
            assert_same(ga.image.adjust_hue(image, delta), tf.image.adjust_hue(image, delta),
                        atol=tolerance)
        for factor in (0.3, 2.5):
            assert_same(ga.image.adjust_saturation(image, factor),
                        tf.image.adjust_saturation(image, factor), atol=tolerance)
        for gamma, gain in ((0.5, 1.0), (2.2, 1.5)):
            assert_same(ga.image.adjust_gamma(image, gamma, gain),
                        tf.image.adjust_gamma(image, gamma, gain), atol=tolerance)


@pytest.mark.parametrize("call", [
    lambda image: image.adjust_hue(IMAGES, 1.5),
    lambda image: image.adjust_gamma(IMAGES, -1.0),
    lambda image: image.random_hue(IMAGES, 0.6),
    lambda image: image.random_hue(IMAGES, -0.1),
    lambda image: image.random_saturation(IMAGES, 0.5, 0.5),
    lambda image: image.random_saturation(IMAGES, -0.5, 0.5),
    lambda image: image.stateless_random_brightness(IMAGES, -0.1, seed=(1, 2)),
])
def test_bad_arguments_raise_tensorflows_error_type(call):
    with pytest.raises(ValueError):
        call(tf.image)
    with pytest.raises(ValueError, match="must|should"):
        call(ga.image)


def test_bad_channels_and_seeds_are_refused():
    four_channels = np.zeros((2, 2, 4), np.float32)
    for name in ("rgb_to_hsv", "rgb_to_yuv"):
        with pytest.raises((tf.errors.FailedPreconditionError, tf.errors.InvalidArgumentError)):
            getattr(tf.image, name)(four_channels)
        with pytest.raises(ga.errors.InvalidArgumentError, match="last dimension of 3"):
            getattr(ga.image, name)(four_channels)
    with pytest.raises(ga.errors.InvalidArgumentError, match="float images"):
        ga.image.rgb_to_yiq(UINT8_IMAGES)
    for image in (tf.image, ga.image):
        with pytest.raises((tf.errors.InvalidArgumentError, ga.errors.InvalidArgumentError),
                           match="shape"):
            image.stateless_random_hue(IMAGES, 0.2, seed=(1, 2, 3))


def hue_turn(before, after):
    """The one hue turn (mod 1) that ``after`` shows over ``before``, from colourful pixels."""
    before_hsv, after_hsv = (tf.image.rgb_to_hsv(np.asarray(x)).numpy() for x in (before, after))
    colourful = before_hsv[..., 1] > 0.2
    turns = np.mod(after_hsv[..., 0] - before_hsv[..., 0], 1.0)[colourful]
    turns = np.where(turns > 0.5, turns - 1.0, turns)
    assert np.ptp(turns) < 1e-4, "one delta per call"
    return float(turns.mean())


def test_random_hue_and_saturation_follow_their_rules():
    ga.random.set_seed(6)
    tf.random.set_seed(6)
    for random_hue, random_saturation in ((ga.image.random_hue, ga.image.random_saturation),
                                          (tf.image.random_hue, tf.image.random_saturation)):
        turns = set()
        for _ in range(4):
            turn = hue_turn(IMAGES, random_hue(IMAGES, 0.2))
            assert abs(turn) <= 0.2 + 1e-5
            np.testing.assert_allclose(np.asarray(random_hue(IMAGES, 0.0)), IMAGES, atol=1e-5)
            turns.add(round(turn, 4))
        assert len(turns) > 1
        factors = set()
        for _ in range(4):
            out = np.asarray(random_saturation(IMAGES, 0.2, 0.8))
            before = tf.image.rgb_to_hsv(IMAGES).numpy()[..., 1]
            saturated = before > 0.1
            ratio = tf.image.rgb_to_hsv(out).numpy()[..., 1][saturated] / before[saturated]
            assert np.ptp(ratio) < 1e-3 and 0.2 - 1e-4 <= ratio[0] < 0.8 + 1e-4
            factors.add(round(float(ratio[0]), 4))
        assert len(factors) > 1


def test_stateless_random_names_follow_the_rules_and_depend_on_the_seed_alone():
    seeds = [(1, 2), (1, 3), (7, 2), (123, 456)]
    for ours, theirs, args in (
            (ga.image.stateless_random_hue, tf.image.stateless_random_hue, (0.3,)),
            (ga.image.stateless_random_saturation, tf.image.stateless_random_saturation,
             (0.2, 0.9)),
            (ga.image.stateless_random_brightness, tf.image.stateless_random_brightness,
             (0.2,)),
            (ga.image.stateless_random_contrast, tf.image.stateless_random_contrast,
             (0.4, 1.6)),
            (ga.image.stateless_random_flip_left_right,
             tf.image.stateless_random_flip_left_right, ()),
            (ga.image.stateless_random_flip_up_down, tf.image.stateless_random_flip_up_down,
             ())):
        outputs = [ours(IMAGES, *args, seed=seed).numpy() for seed in seeds]
        ga.random.set_seed(0)
        again = ours(IMAGES, *args, seed=seeds[0]).numpy()
        ga.image.random_brightness(IMAGES, 0.3)  # the global stream moves; the pair's does not
        np.testing.assert_array_equal(ours(IMAGES, *args, seed=seeds[0]).numpy(), again)
        np.testing.assert_array_equal(outputs[0], again)
        assert len({o.tobytes() for o in outputs}) > 1, ours.__name__
        reference = np.asarray(theirs(IMAGES, *args, seed=seeds[0]))
        assert reference.shape == outputs[0].shape and reference.dtype == outputs[0].dtype
    for seed in seeds:
        turn = hue_turn(IMAGES, ga.image.stateless_random_hue(IMAGES, 0.3, seed=seed))
        np.testing.assert_allclose(ga.image.stateless_random_hue(IMAGES, 0.3, seed=seed).numpy(),
                                   ga.image.adjust_hue(IMAGES, turn).numpy(), atol=2e-4)
        flipped = ga.image.stateless_random_flip_left_right(IMAGES, seed=seed).numpy()
        for before, after in zip(IMAGES, flipped):
            assert np.array_equal(after, before) or np.array_equal(after, before[:, ::-1])
        delta = ga.image.stateless_random_brightness(IMAGES, 0.2, seed=seed).numpy() - IMAGES
        assert np.ptp(delta) < 1e-6 and abs(delta.flat[0]) <= 0.2
    windows = set()
    for seed in seeds:
        for crop in (ga.image.stateless_random_crop, tf.image.stateless_random_crop):
            out = np.asarray(crop(IMAGES, [1, 3, 4, 3], seed=seed))
            found = [(b, y, x) for b in range(2) for y in range(3) for x in range(4)
                     if np.array_equal(IMAGES[b:b + 1, y:y + 3, x:x + 4], out)]
            assert len(found) == 1
            if crop is ga.image.stateless_random_crop:
                windows.add(found[0])
    assert len(windows) > 1
