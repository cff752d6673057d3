"""Keras 3's colour and filter augmentation layers (RandomHue, RandomSaturation,
RandomColorDegeneration, RandomColorJitter, RandomPosterization, RandomSharpness,
RandomGaussianBlur, Equalization) against real Keras:
the same transformation handed to both ``transform_images``, whole calls where the draws are
fixed (Equalization; RandomColorJitter with one-point factor ranges), the rules of our draws
with a seeded generator, errors, configs and gradients."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers
from test_keras_preprocessing_layers import (  # noqa: E402 -- after the importorskips
    test_augmentations_are_identity_at_inference_and_reproducible_and_fresh_per_replay as
    check_augmentation_rules)

RNG = np.random.default_rng(3)
IMAGES = (RNG.uniform(size=(4, 7, 9, 3)) * 255).astype(np.float32)


def npy(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def assert_same_transform(make, transformation, images=IMAGES, atol=1e-3):
    keras_transformation = None if transformation is None else {
        k: tf.constant(v) for k, v in transformation.items()}
    theirs = npy(make(K).transform_images(tf.constant(images), keras_transformation,
                                          training=True))
    ours = npy(make(L).transform_images(images, transformation, training=True))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=atol)


FACTORS = np.array([-0.3, 0.1, 0.25, 0.45], np.float32)
FIXED = [
    (lambda layers: layers.RandomHue(0.9), {"factor": FACTORS}, IMAGES),
    (lambda layers: layers.RandomHue(0.9, value_range=(0, 1)), {"factor": FACTORS},
     IMAGES / 255),
    (lambda layers: layers.RandomSaturation(0.5), {"factor": np.array([0, 0.5, 1, 3],
                                                                       np.float32)}, IMAGES),
    (lambda layers: layers.RandomColorDegeneration(0.5),
     {"factor": FACTORS.reshape(4, 1, 1, 1) * 2}, IMAGES),
    (lambda layers: layers.RandomSharpness(0.5, value_range=(0, 1)),
     {"factor": np.array([0.0, 0.2, 0.5, 0.9], np.float32)}, IMAGES / 255),
    (lambda layers: layers.RandomPosterization(8), {"shift_factor": np.array(
        [0, 3, 5, 7], np.uint8)}, IMAGES),
    (lambda layers: layers.RandomPosterization(8, value_range=(0, 1)),
     {"shift_factor": np.array([1, 2, 4, 6], np.uint8)}, IMAGES / 255),
    (lambda layers: layers.RandomGaussianBlur(), {"should_apply_blur": np.array(
        [True, False, True, True]), "blur_factor": np.array([0.7, 1.3], np.float32)}, IMAGES),
    (lambda layers: layers.RandomGaussianBlur(0.5, kernel_size=5, sigma=(0.2, 0.9),
                                              value_range=(0, 1)),
     {"should_apply_blur": np.array([True, True, False, True]),
      "blur_factor": np.array([0.9, 0.4], np.float32)}, IMAGES / 255),
    (lambda layers: layers.Equalization(), None,
     np.concatenate([IMAGES[..., :2], np.full_like(IMAGES[..., :1], 7.0)], -1)),  # one bin
    (lambda layers: layers.Equalization(value_range=(0, 1), bins=16), None, IMAGES / 255),
    (lambda layers: layers.Equalization(), None, np.round(IMAGES)),
]


@pytest.mark.parametrize("make,transformation,images", FIXED, ids=[
    "hue", "hue_unit", "saturation", "degeneration", "sharpness", "posterization",
    "posterization_unit", "blur", "blur_5x5", "equalization_one_bin", "equalization_16_bins",
    "equalization_integers"])
def test_colour_transforms_match_keras(make, transformation, images):
    atol = 1e-3 if images.max() > 1 else 1e-5
    assert_same_transform(make, transformation, images, atol=atol)


def test_color_jitter_with_fixed_draws_and_equalization_calls_match_keras():
    def jitter(layers):  # one-point ranges: Keras's draws are known
        return layers.RandomColorJitter(brightness_factor=(0.1, 0.1),
                                        contrast_factor=(-0.3, 0.3),
                                        saturation_factor=(0.6, 0.6), hue_factor=(0, 0))
    np.testing.assert_allclose(npy(jitter(L)(IMAGES)), npy(jitter(K)(IMAGES)), atol=1e-3)
    np.testing.assert_allclose(npy(L.Equalization()(IMAGES)), npy(K.Equalization()(IMAGES)),
                               atol=1e-3)
    # our jitter's transformation, the dict of its parts', replayed through Keras's parts
    ours = L.RandomColorJitter(brightness_factor=0.2, hue_factor=0.3)
    drawn = ours.get_random_transformation(IMAGES)
    expected = K.RandomBrightness(0.2).transform_images(
        tf.constant(IMAGES), {"rgb_delta": tf.constant(npy(drawn["brightness"]["rgb_delta"]))})
    expected = K.RandomHue(0.3).transform_images(
        expected, {"factor": tf.constant(npy(drawn["hue"]["factor"]))})
    np.testing.assert_allclose(npy(ours.transform_images(IMAGES, drawn)), npy(expected),
                               atol=1e-3)


RANDOM = [
    lambda layers: layers.RandomHue(0.5), lambda layers: layers.RandomSaturation(0.5),
    lambda layers: layers.RandomColorDegeneration(0.5),
    lambda layers: layers.RandomSharpness(0.5), lambda layers: layers.RandomPosterization(6),
    lambda layers: layers.RandomColorJitter(brightness_factor=0.2, hue_factor=0.2),
    lambda layers: layers.RandomGaussianBlur(),
]


@pytest.mark.parametrize("make", RANDOM)
def test_colour_augmentations_are_identity_at_inference_reproducible_and_fresh(make):
    # the rules the older augmentation layers are held to, on these layers
    check_augmentation_rules(make)


def test_draws_follow_keras_distributions():
    ga.random.set_seed(9)
    many = np.zeros((400, 2, 2, 3), np.float32)
    turns = npy(L.RandomHue((0.2, 0.6)).get_random_transformation(many)["factor"])
    assert np.all((np.abs(turns) >= 0.1 - 1e-6) & (np.abs(turns) <= 0.3 + 1e-6))
    assert 0.35 < np.mean(turns > 0) < 0.65  # either direction, half the time
    drawn = npy(L.RandomSaturation((0.2, 0.6)).get_random_transformation(many)["factor"])
    fractions = drawn / (1 + drawn)  # f / (1 - f) inverted
    assert fractions.min() >= 0.2 - 1e-5 and fractions.max() <= 0.6 + 1e-5
    assert abs(fractions.mean() - 0.4) < 0.03
    shifts = npy(L.RandomPosterization((2, 6)).get_random_transformation(many)["shift_factor"])
    assert set(np.unique(shifts).tolist()) == {3.0, 4.0, 5.0, 6.0}  # 8 - bits, bits in [2, 6)
    fixed = npy(L.RandomPosterization((4, 4)).get_random_transformation(many)["shift_factor"])
    assert set(fixed.tolist()) == {4.0}
    blur = L.RandomGaussianBlur((0.2, 0.4), sigma=(0.5, 0.8)).get_random_transformation(many)
    assert 0.2 < np.mean(npy(blur["should_apply_blur"])) < 0.4  # probability 0.3 on average
    sigmas = npy(blur["blur_factor"])
    assert sigmas.shape == (2,) and np.all((sigmas >= 0.5) & (sigmas <= 0.8 + 1e-5))
    sharpness = npy(L.RandomSharpness((0.1, 0.3)).get_random_transformation(many)["factor"])
    assert sharpness.min() >= 0.1 and sharpness.max() <= 0.3
    assert abs(sharpness.mean() - 0.2) < 0.01
    # zero factors and one-point ranges that keep the images
    for layer in (L.RandomHue(0.0), L.RandomColorDegeneration(0.0),
                  L.RandomSharpness((0.5, 0.5)), L.RandomPosterization((8, 8))):
        np.testing.assert_allclose(npy(layer(np.round(IMAGES))), np.round(IMAGES), atol=2e-3)


def same_error(make):
    with pytest.raises(ValueError) as theirs:
        make(K)
    with pytest.raises(ValueError) as ours:
        make(L)
    assert str(ours.value) == str(theirs.value)


def test_errors_match_keras():
    same_error(lambda layers: layers.RandomHue(1.5))
    same_error(lambda layers: layers.RandomHue((0.1, 0.2, 0.3)))
    same_error(lambda layers: layers.RandomSaturation(-2.0))
    same_error(lambda layers: layers.RandomPosterization(9))
    same_error(lambda layers: layers.RandomSharpness("a"))
    same_error(lambda layers: layers.RandomColorDegeneration(0.5, value_range=(0, 1, 2)))
    same_error(lambda layers: layers.RandomGaussianBlur(kernel_size=4))
    same_error(lambda layers: layers.RandomGaussianBlur(kernel_size=(3, 5, 7)))
    same_error(lambda layers: layers.RandomGaussianBlur(sigma=2.0))
    with pytest.raises(ValueError, match="value_range"):  # (Keras's own message is missing)
        L.Equalization(value_range=3)


CONFIGURED = [
    lambda layers: layers.RandomHue((0.1, 0.4), value_range=(0, 1), seed=3),
    lambda layers: layers.RandomSaturation(0.3), lambda layers: layers.RandomSharpness(0.2),
    lambda layers: layers.RandomColorDegeneration((0.1, 0.2)),
    lambda layers: layers.RandomPosterization(5, value_range=(1, 0)),
    lambda layers: layers.Equalization(bins=64),
    lambda layers: layers.RandomGaussianBlur(0.3, kernel_size=(3, 5), sigma=(0.1, 0.2)),
    lambda layers: layers.RandomColorJitter(brightness_factor=0.1, saturation_factor=0.3),
]


def unnamed(config):
    return {k: v for k, v in config.items() if k not in ("name", "dtype")}


def plain(value):
    return list(value) if isinstance(value, tuple) else value


def test_configs_match_keras_and_load_both_ways():
    for make in CONFIGURED:
        ours, theirs = unnamed(make(L).get_config()), unnamed(make(K).get_config())
        assert {k: plain(v) for k, v in ours.items()} == \
            {k: plain(v) for k, v in theirs.items()}, type(make(L)).__name__
        assert unnamed(type(make(L)).from_config(make(K).get_config()).get_config()) == ours
        assert unnamed(type(make(K)).from_config(make(L).get_config()).get_config()) == theirs


def test_gradients_match_tensorflow():
    x = IMAGES / 255.0
    weights = RNG.normal(size=x.shape).astype(np.float32)
    for make, transformation in (
            (lambda layers: layers.RandomColorDegeneration(0.5, value_range=(0, 1)),
             {"factor": FACTORS.reshape(4, 1, 1, 1)}),
            (lambda layers: layers.RandomSharpness(0.5, value_range=(-1, 2)),
             {"factor": np.array([0.0, 0.2, 0.5, 0.9], np.float32)}),
            (lambda layers: layers.RandomGaussianBlur(value_range=(-1, 2)),
             {"should_apply_blur": np.array([True, False, True, True]),
              "blur_factor": np.array([0.7, 1.3], np.float32)})):
        x_tf = tf.Variable(x)
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(make(K).transform_images(
                x_tf, {k: tf.constant(v) for k, v in transformation.items()}) * weights)
        images = ga.tensor(x, requires_grad=True)
        with ga.GradientTape() as g:
            g.watch(images)
            total = ga.reduce_sum(make(L).transform_images(images, transformation) *
                                  ga.tensor(weights))
        np.testing.assert_allclose(npy(g.gradient(total, images)),
                                   tape.gradient(loss, x_tf).numpy(), rtol=1e-4, atol=1e-5)
