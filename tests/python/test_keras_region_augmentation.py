"""Keras 3's RandomErasing, MixUp and CutMix against real Keras: Keras's own draws handed to
both ``transform_images`` (and ``transform_labels``), the dict form {"images", "labels"}, the
rules of our draws with a seeded generator (the Beta quantiles against closed forms, MixUp's
weights by their moments, permutations by being ones), errors, configs and gradients."""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel.keras import layers as L
from gpuaccel.keras._random_draws import symmetric_beta_quantiles

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers
from test_keras_preprocessing_layers import (  # noqa: E402 -- after the importorskips
    test_augmentations_are_identity_at_inference_and_reproducible_and_fresh_per_replay as
    check_augmentation_rules)

RNG = np.random.default_rng(4)
IMAGES = (RNG.uniform(size=(4, 7, 9, 3)) * 255).astype(np.float32)
LABELS = np.eye(4, dtype=np.float32)[[2, 0, 3, 1]]


def npy(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


def keras_draws(layer):
    tf.random.set_seed(1)
    return {k: npy(v) for k, v in layer.get_random_transformation(
        tf.constant(IMAGES)).items()}


@pytest.mark.parametrize("make", [
    lambda layers: layers.RandomErasing(),
    lambda layers: layers.RandomErasing(0.7, scale=(0.1, 0.5), fill_value=(10, 200, 300)),
    lambda layers: layers.RandomErasing(fill_value=42.0, value_range=(0, 100)),
    lambda layers: layers.MixUp(0.4),
    lambda layers: layers.CutMix(0.8),
])
def test_transforms_of_keras_draws_match_keras(make):
    transformation = keras_draws(make(K))
    theirs = make(K).transform_images(tf.constant(IMAGES), {
        k: tf.constant(v) for k, v in transformation.items()})
    ours = make(L).transform_images(IMAGES, transformation)
    np.testing.assert_allclose(npy(ours), npy(theirs), rtol=1e-5, atol=1e-3)
    if isinstance(make(L), (L.MixUp, L.CutMix)):
        theirs = make(K).transform_labels(tf.constant(LABELS), {
            k: tf.constant(v) for k, v in transformation.items()})
        np.testing.assert_allclose(npy(make(L).transform_labels(LABELS, transformation)),
                                   npy(theirs), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make", [lambda layers: layers.RandomErasing(),
                                  lambda layers: layers.MixUp(),
                                  lambda layers: layers.CutMix()])
def test_augmentation_rules(make):
    check_augmentation_rules(make)


def test_beta_quantiles_match_closed_forms():
    uniforms = np.linspace(0.0005, 0.9995, 1000).astype(np.float32)
    for alpha, quantile in ((1.0, lambda u: u),                          # uniform
                            (0.5, lambda u: np.sin(np.pi * u / 2) ** 2),  # arcsine
                            (2.0, None)):                                 # F = 3x^2 - 2x^3
        ours = symmetric_beta_quantiles(ga.tensor(uniforms), ga.tensor(np.float32(alpha)))
        ours = npy(ours).astype(np.float64)
        if quantile is None:
            np.testing.assert_allclose(3 * ours ** 2 - 2 * ours ** 3, uniforms, atol=2e-4)
        else:
            np.testing.assert_allclose(ours, quantile(uniforms.astype(np.float64)), atol=2e-4)
    tiny = npy(symmetric_beta_quantiles(ga.tensor(uniforms), ga.tensor(np.float32(1e-6))))
    assert np.all(np.isfinite(tiny)) and np.mean((tiny < 1e-3) | (tiny > 1 - 1e-3)) > 0.99


def test_erasing_boxes_and_mixup_draws_follow_keras_distributions():
    ga.random.set_seed(12)
    many = np.zeros((300, 10, 20, 1), np.float32)
    drawn = L.RandomErasing((0.2, 0.6), scale=(0.04, 0.25), fill_value=1.0) \
        .get_random_transformation(many)
    masks = npy(drawn["batch_masks"])[..., 0] > 0.5
    rows, columns = masks.any(axis=2).sum(axis=1), masks.any(axis=1).sum(axis=1)
    assert np.all(masks.sum(axis=(1, 2)) == rows * columns)  # one box each
    assert np.all((columns >= np.floor(0.2 * 20)) & (columns <= np.ceil(0.5 * 20) + 1))
    assert np.all((rows >= np.floor(0.2 * 10)) & (rows <= np.ceil(0.5 * 10) + 1))
    assert 0.3 < npy(drawn["apply_erasing"]).mean() < 0.5  # probability 0.4 on average
    np.testing.assert_array_equal(npy(drawn["fill_value"]), 1.0)
    for alpha in (0.2, 1.5):
        mixup = L.MixUp(alpha)
        weights = np.concatenate([npy(mixup.get_random_transformation(many)["mix_weight"])
                                  for _ in range(4)])
        assert np.all((weights >= 0) & (weights <= 1))
        assert abs(weights.mean() - 0.5) < 0.04
        assert abs(weights.var() - 1 / (4 * (2 * alpha + 1))) < 0.02  # Beta(a, a)'s variance
        for _ in range(3):
            order = npy(mixup.get_random_transformation(IMAGES)["permutation_order"])
            assert sorted(order.tolist()) == [0, 1, 2, 3]
    orders = {tuple(npy(L.MixUp().get_random_transformation(IMAGES)["permutation_order"]))
              for _ in range(12)}
    assert len(orders) > 3
    cut = L.CutMix().get_random_transformation(many)
    masks = npy(cut["batch_masks"])[..., 0] > 0.5
    kept = 1 - masks.mean(axis=(1, 2))
    # the label weight is the area kept by the (continuous) box: within a pixel row/column
    assert np.all(np.abs(npy(cut["mix_weight"]) - kept) <= 1 / 10 + 1 / 20 + 1e-6)
    assert L.CutMix().get_random_transformation(IMAGES[0]) is None  # single images: no mix


def test_mixup_takes_keras_dict_form_and_mixes_labels_with_the_same_draw():
    ga.random.set_seed(3)
    out = L.MixUp(1.0)({"images": IMAGES, "labels": LABELS})
    assert set(out) == {"images", "labels"}
    images, labels = npy(out["images"]), npy(out["labels"])
    np.testing.assert_allclose(labels.sum(axis=1), 1.0, rtol=1e-5)
    for i in range(4):  # image i = w x_i + (1 - w) x_j, label i = w y_i + (1 - w) y_j
        weight = labels[i, np.argmax(LABELS[i])] if labels[i].max() < 1 else 1.0
        partner = [j for j in range(4) if labels[i, np.argmax(LABELS[j])] > 0 and j != i]
        expected = IMAGES[i] if not partner else \
            weight * IMAGES[i] + (1 - weight) * IMAGES[partner[0]]
        np.testing.assert_allclose(images[i], expected, rtol=1e-4, atol=1e-2)
    batches = ga.data.Dataset.from_tensor_slices((IMAGES, LABELS)).batch(2).map(
        lambda x, y: L.MixUp()({"images": x, "labels": y}))
    assert [npy(b["labels"]).shape for b in batches] == [(2, 4), (2, 4)]
    theirs = K.MixUp()({"images": IMAGES, "labels": LABELS})
    assert set(theirs) == set(out)
    cut = L.CutMix()({"images": IMAGES, "labels": LABELS})
    images, labels = npy(cut["images"]), npy(cut["labels"])
    np.testing.assert_allclose(labels.sum(axis=1), 1.0, rtol=1e-5)
    for i in range(4):  # every pixel comes from image i or from the one its label names
        sources = [j for j in range(4) if labels[i, np.argmax(LABELS[j])] > 0]
        assert i in sources or labels[i].max() < 1
        from_any = np.zeros(images.shape[1:3], bool)
        for j in sources + [i]:
            from_any |= np.all(images[i] == IMAGES[j], axis=-1)
        assert from_any.all()


def test_errors_configs_and_gradients_match_keras():
    for make in (lambda layers: layers.RandomErasing(scale=(1.5, 2.0)),
                 lambda layers: layers.RandomErasing(factor=1.5)):
        with pytest.raises(ValueError) as theirs:
            make(K)
        with pytest.raises(ValueError) as ours:
            make(L)
        assert str(ours.value) == str(theirs.value)
    with pytest.raises(ValueError, match="fill_value"):
        L.RandomErasing(fill_value="red")(IMAGES)
    for make in (lambda layers: layers.RandomErasing(0.5, scale=(0.1, 0.2), fill_value=3.0),
                 lambda layers: layers.MixUp(0.7, seed=2), lambda layers: layers.CutMix(0.4)):
        ours = {k: v for k, v in make(L).get_config().items() if k not in ("name", "dtype")}
        theirs = {k: v for k, v in make(K).get_config().items() if k not in ("name", "dtype")}
        assert {k: list(v) if isinstance(v, tuple) else v for k, v in ours.items()} == \
            {k: list(v) if isinstance(v, tuple) else v for k, v in theirs.items()}
        assert type(make(K)).from_config(make(L).get_config()).get_config()["seed"] == \
            theirs["seed"]
    transformation = keras_draws(K.MixUp())
    weights = RNG.normal(size=IMAGES.shape).astype(np.float32)
    x_tf = tf.Variable(IMAGES)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(K.MixUp().transform_images(x_tf, {
            k: tf.constant(v) for k, v in transformation.items()}) * weights)
    x = ga.tensor(IMAGES, requires_grad=True)
    with ga.GradientTape() as g:
        g.watch(x)
        total = ga.reduce_sum(L.MixUp().transform_images(x, transformation) * ga.tensor(weights))
    np.testing.assert_allclose(npy(g.gradient(total, x)), tape.gradient(loss, x_tf).numpy(),
                               rtol=1e-5, atol=1e-5)


def test_max_num_bounding_boxes_and_the_dict_form_match_keras():
    boxes = np.arange(2 * 5 * 4, dtype=np.float32).reshape(2, 5, 4)
    labels = np.arange(10, dtype=np.int32).reshape(2, 5)
    images = IMAGES[:2]
    for max_number, fill_value in ((3, -1), (7, -2), (5, 0)):
        def make(layers):
            return layers.MaxNumBoundingBoxes(max_number, fill_value=fill_value,
                                              bounding_box_format="xyxy")
        inputs = {"images": images, "bounding_boxes": {"boxes": boxes, "labels": labels}}
        ours, theirs = make(L)(inputs), make(K)(inputs)
        for key in ("boxes", "labels"):
            got, expected = npy(ours["bounding_boxes"][key]), npy(theirs["bounding_boxes"][key])
            assert got.dtype == expected.dtype
            np.testing.assert_array_equal(got, expected)
        np.testing.assert_array_equal(npy(ours["images"]), images)
        assert {k: v for k, v in make(L).get_config().items() if k not in ("name", "dtype")} \
            == {k: v for k, v in make(K).get_config().items() if k not in ("name", "dtype")}
    np.testing.assert_array_equal(npy(L.MaxNumBoundingBoxes(3)(images)), images)
    for layers in (K, L):  # boxes without a format: Keras's error
        with pytest.raises(ValueError, match="bounding box format"):
            layers.MaxNumBoundingBoxes(3)({"images": images, "bounding_boxes": {
                "boxes": boxes, "labels": labels}})
    # any augmentation layer takes the dict form; only the label-mixing ones change labels
    ga.random.set_seed(2)
    out = L.RandomFlip("horizontal")({"images": images, "labels": LABELS[:2]})
    np.testing.assert_array_equal(npy(out["labels"]), LABELS[:2])
    for image, flipped in zip(images, npy(out["images"])):
        assert np.array_equal(flipped, image) or np.array_equal(flipped, image[:, ::-1])
