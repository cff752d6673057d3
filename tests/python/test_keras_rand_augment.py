"""``keras.layers.RandAugment`` against real Keras: Keras's own transformation (its eleven
layers' draws) with each layer chosen in turn handed to both ``transform_images``, the rules of
our draws (the choices cover the eleven layers), and its config."""
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

RNG = np.random.default_rng(8)
IMAGES = (RNG.uniform(size=(3, 7, 9, 3)) * 255).astype(np.float32)


def as_numpy(value):
    if isinstance(value, dict):
        return {k: as_numpy(v) for k, v in value.items()}
    return value if value is None or isinstance(value, (tuple, int, float)) else np.array(value)


def as_tf(value):
    if isinstance(value, dict):
        return {k: as_tf(v) for k, v in value.items()}
    return tf.constant(value) if isinstance(value, np.ndarray) else value


@pytest.mark.parametrize("choices", [[0, 5], [1, 2], [3, 4], [6, 7], [8, 9], [10, 3]])
def test_each_choice_of_keras_draws_matches_keras(choices):
    theirs = K.RandAugment(factor=0.6)
    tf.random.set_seed(sum(choices))
    transformation = as_numpy(theirs.get_random_transformation(tf.constant(IMAGES)))
    transformation["layer_idxes"] = np.array(choices, np.int32)
    expected = np.asarray(theirs.transform_images(tf.constant(IMAGES), as_tf(transformation)))
    ours = L.RandAugment(factor=0.6).transform_images(IMAGES, transformation).numpy()
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-2)


def test_rand_augment_rules_draws_and_config():
    check_augmentation_rules(lambda layers: layers.RandAugment())
    ga.random.set_seed(2)
    layer = L.RandAugment(num_ops=3)
    chosen = np.concatenate([layer.get_random_transformation(IMAGES)["layer_idxes"].numpy()
                             for _ in range(30)])
    assert set(chosen.tolist()) == set(range(11))  # 90 draws among 11: all occur
    ours = {k: v for k, v in L.RandAugment(num_ops=3, factor=0.3).get_config().items()
            if k not in ("name", "dtype")}
    theirs = {k: v for k, v in K.RandAugment(num_ops=3, factor=0.3).get_config().items()
              if k not in ("name", "dtype")}
    assert {k: list(v) if isinstance(v, tuple) else v for k, v in ours.items()} == \
        {k: list(v) if isinstance(v, tuple) else v for k, v in theirs.items()}
