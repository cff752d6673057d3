"""``keras.layers.RandAugment`` and ``AugMix`` against real Keras: Keras's own transformations
(its layers' draws; for RandAugment each layer chosen in turn) handed to both
``transform_images``, our AugMix transformation (every candidate computed, the drawn one kept)
against Keras's applying just the drawn layers, the rules of our draws (choices, Dirichlet and
Gamma weights), and configs."""
import random

import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk
from gpuaccel.keras import layers as L
from gpuaccel.keras._random_draws import gamma as gamma_draws

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
    if isinstance(value, list):
        return [as_numpy(v) for v in value]
    if value is None or isinstance(value, (tuple, int, float, str)):
        return value
    return np.array(value.detach().numpy() if hasattr(value, "detach") else value)


def as_tf(value):
    if isinstance(value, dict):
        return {k: as_tf(v) for k, v in value.items()}
    if isinstance(value, list):
        return [as_tf(v) for v in value]
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


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aug_mix_of_keras_draws_matches_keras(seed):
    random.seed(seed)  # Keras's AugMix picks its chains' layers with Python's random
    tf.random.set_seed(seed)
    theirs = K.AugMix(factor=0.4, alpha=0.8)
    transformation = as_numpy(theirs.get_random_transformation(tf.constant(IMAGES)))
    expected = np.asarray(theirs.transform_images(tf.constant(IMAGES), as_tf(transformation)))
    ours = L.AugMix(factor=0.4, alpha=0.8).transform_images(IMAGES, transformation).numpy()
    np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-2)


def keras_step(name, transformation):
    """One of Keras's AugMix steps; its posterization shifts bits of uint8 shift factors."""
    if name == "random_posterization":
        transformation = {"shift_factor": transformation["shift_factor"].astype(np.uint8)}
    return {"layer_name": name, "transformation": transformation}


def test_our_aug_mix_draws_keep_the_drawn_layers_as_keras_applies_them():
    ga.random.set_seed(5)
    for all_ops in (True, False):
        ours = L.AugMix(all_ops=all_ops, chain_depth=2)
        drawn = as_numpy(ours.get_random_transformation(IMAGES))
        names = ours._names
        # the same draws in Keras's form: only the drawn layers, no-op steps left out
        keras_form = dict(drawn)
        keras_form.pop("layer_choices")
        keras_form["chain_transforms"] = [
            [keras_step(names[int(choice)], steps[depth][names[int(choice)]])
             for depth, choice in enumerate(choices) if int(choice) < len(names)]
            for steps, choices in zip(drawn["chain_transforms"], drawn["layer_choices"])]
        theirs = K.AugMix(all_ops=all_ops, chain_depth=2)
        expected = np.asarray(theirs.transform_images(tf.constant(IMAGES), as_tf(keras_form)))
        np.testing.assert_allclose(ours.transform_images(IMAGES, drawn).numpy(), expected,
                                   rtol=1e-5, atol=1e-2)


def test_aug_mix_rules_draws_and_config():
    check_augmentation_rules(lambda layers: layers.AugMix(chain_depth=2))
    ga.random.set_seed(6)
    layer = L.AugMix(num_chains=4, chain_depth=1, alpha=0.5)
    weights = np.stack([layer.get_random_transformation(IMAGES)["chain_mixing_weights"].numpy()
                        for _ in range(100)])
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, rtol=1e-5)
    assert abs(weights.mean() - 0.25) < 0.03  # Dirichlet(0.5 x 4): mean 1/4, var 3/48
    assert abs(weights.var() - 3 / 48) < 0.02
    choices = np.concatenate([layer.get_random_transformation(IMAGES)["layer_choices"].numpy()
                              .reshape(-1) for _ in range(20)])
    assert set(choices.tolist()) == set(range(12))  # 11 layers and "none"
    for alpha in (0.3, 2.5):  # Gamma(alpha)'s mean and variance are alpha
        draws = gamma_draws([4000], ga.tensor(IMAGES), alpha).numpy()
        assert abs(draws.mean() - alpha) < 0.1 * alpha and abs(draws.var() - alpha) < 0.2 * alpha
    ours = {k: v for k, v in L.AugMix(num_chains=2, alpha=0.5).get_config().items()
            if k not in ("name", "dtype")}
    theirs = {k: v for k, v in K.AugMix(num_chains=2, alpha=0.5).get_config().items()
              if k not in ("name", "dtype")}
    assert {k: list(v) if isinstance(v, tuple) else v for k, v in ours.items()} == \
        {k: list(v) if isinstance(v, tuple) else v for k, v in theirs.items()}


def test_a_model_of_the_new_layers_trains_saves_and_loads_here_and_in_keras(tmp_path):
    """(Keras itself cannot reload a RandomShear given one number, nor an Equalization in a
    Sequential model, so those two stay out of the file.)"""
    ga.random.set_seed(0)
    labels = np.array([0, 1, 1], np.int32)
    model = gk.Sequential([
        gk.Input((7, 9, 3)), L.RandomHue(0.2), L.RandomShear((0.0, 0.2)), L.RandAugment(),
        L.AugMix(chain_depth=1), L.RandomGaussianBlur(), L.CutMix(), L.MixUp(),
        L.RandomPerspective(), L.RandomErasing(), L.Rescaling(1 / 255.0), L.Conv2D(2, 3),
        L.Flatten(), L.Dense(2)])
    model.compile(optimizer="adam",
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(IMAGES, labels, epochs=2, batch_size=3, verbose=0).history["loss"]
    assert np.all(np.isfinite(history))
    expected = model.predict(IMAGES, verbose=0)  # the augmentations are off here
    path = str(tmp_path / "augmented.keras")
    model.save(path)
    np.testing.assert_allclose(keras.models.load_model(path).predict(IMAGES, verbose=0),
                               expected, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gk.models.load_model(path).predict(IMAGES, verbose=0), expected,
                               rtol=1e-5, atol=1e-5)
