"""Keras 3's RandomShear and RandomPerspective against real Keras: the same shear factors, or
Keras's own corner draws, handed to both ``transform_images`` (every fill mode and both
interpolations for the shear; the perspective's homography comes from closed forms here, a
linear solve in Keras), the rules of our draws with a seeded generator, errors and configs."""
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

RNG = np.random.default_rng(6)
IMAGES = (RNG.uniform(size=(4, 7, 9, 3)) * 255).astype(np.float32)
SHEARS = {"shear_factor": np.array([[0.3, -0.2], [-0.5, 0.1], [0.0, 0.0], [0.2, 0.3]],
                                   np.float32), "input_shape": IMAGES.shape}


def npy(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def both(make, transformation):
    keras_form = {k: tf.constant(v) if isinstance(v, np.ndarray) else v
                  for k, v in transformation.items()}
    return (npy(make(L).transform_images(IMAGES, transformation)),
            npy(make(K).transform_images(tf.constant(IMAGES), keras_form)))


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "constant", "nearest"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_shear_matches_keras(fill_mode, interpolation):
    ours, theirs = both(lambda layers: layers.RandomShear(
        0.5, 0.3, fill_mode=fill_mode, interpolation=interpolation, fill_value=9.0), SHEARS)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-2)


@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_perspective_of_keras_corners_matches_keras(interpolation):
    tf.random.set_seed(2)
    drawn = K.RandomPerspective(scale=0.6).get_random_transformation(tf.constant(IMAGES))
    transformation = {k: np.array(v) if not isinstance(v, tuple) else v
                      for k, v in drawn.items()}
    transformation["apply_perspective"] = np.array([True, True, False, True])
    ours, theirs = both(lambda layers: layers.RandomPerspective(
        scale=0.6, interpolation=interpolation, fill_value=5.0), transformation)
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=2e-2)


@pytest.mark.parametrize("make", [lambda layers: layers.RandomShear(0.3, 0.2),
                                  lambda layers: layers.RandomPerspective(scale=0.5)])
def test_augmentation_rules(make):
    check_augmentation_rules(make)


def test_draws_follow_keras_distributions():
    ga.random.set_seed(4)
    many = np.zeros((400, 5, 6, 1), np.float32)
    shears = npy(L.RandomShear((0.2, 0.4), 0.1).get_random_transformation(many)["shear_factor"])
    assert np.all((np.abs(shears[:, 0]) >= 0.2) & (np.abs(shears[:, 0]) <= 0.4))
    assert np.all(np.abs(shears[:, 1]) <= 0.1)
    assert 0.4 < np.mean(shears[:, 0] > 0) < 0.6  # negated for about half
    drawn = L.RandomPerspective((0.3, 0.5), scale=0.4).get_random_transformation(many)
    start, end = npy(drawn["start_points"]), npy(drawn["end_points"])
    np.testing.assert_array_equal(start[0], [[0, 0], [5, 0], [0, 4], [5, 4]])
    moves = (end - start)[start != 0] / start[start != 0]
    assert np.all(np.abs(moves) <= 0.2 + 1e-6) and moves.std() > 0.05
    np.testing.assert_array_equal(end[start == 0], 0.0)
    assert 0.3 < npy(drawn["apply_perspective"]).mean() < 0.5
    np.testing.assert_allclose(npy(L.RandomPerspective(scale=0.0)(IMAGES)), IMAGES, atol=1e-2)


def test_errors_and_configs_match_keras():
    for make, error in ((lambda layers: layers.RandomShear(1.5), ValueError),
                        (lambda layers: layers.RandomShear(0.1, (0.1, 0.2, 0.3)), ValueError),
                        (lambda layers: layers.RandomShear(0.1, fill_mode="mirror"),
                         NotImplementedError),
                        (lambda layers: layers.RandomPerspective(scale=2.0), ValueError),
                        (lambda layers: layers.RandomPerspective(interpolation="cubic"),
                         NotImplementedError)):
        with pytest.raises(error) as theirs:
            make(K)
        with pytest.raises(error) as ours:
            make(L)
        assert str(ours.value) == str(theirs.value)
    # (a number factor is stored as (-f, f), which neither Keras's from_config nor ours takes)
    for make in (lambda layers: layers.RandomShear((0.1, 0.3), (0.0, 0.2), fill_mode="wrap",
                                                   seed=4),
                 lambda layers: layers.RandomPerspective(0.4, 0.3, "nearest", 2.0)):
        ours = {k: v for k, v in make(L).get_config().items() if k not in ("name", "dtype")}
        theirs = {k: v for k, v in make(K).get_config().items() if k not in ("name", "dtype")}
        assert {k: list(v) if isinstance(v, tuple) else v for k, v in ours.items()} == \
            {k: list(v) if isinstance(v, tuple) else v for k, v in theirs.items()}
        rebuilt = type(make(L)).from_config(make(K).get_config()).get_config()
        assert {k: v for k, v in rebuilt.items() if k not in ("name", "dtype")} == ours
