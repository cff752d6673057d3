"""Keras's numeric preprocessing layers (Normalization, Discretization, CategoryEncoding,
IntegerLookup, Resizing), noise layers (GaussianNoise, GaussianDropout, AlphaDropout) and image
augmentation layers (RandomFlip ... RandomZoom, AutoContrast, Pipeline) against real Keras 3.

Deterministic layers compare values (and one gradient per family). Random layers cannot be
compared draw by draw, so the tests hand the same transformation to Keras's
``transform_images`` and to ours, and check the rules of the draws: training=False is the
identity where Keras's is, a zero factor is the identity, values stay in value_range, a seeded
run is reproducible, and each replay of the traced call draws afresh (python_calls stays 1).
"""
import numpy as np
import pytest

import gpuaccel as ga
from gpuaccel import keras as gk
from gpuaccel.keras import layers as L

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")
K = keras.layers


def npy(t):
    return np.asarray(t.detach().numpy() if hasattr(t, "detach") else t)


RNG = np.random.default_rng(0)
FEATURES = RNG.normal(size=(6, 4, 3)).astype(np.float32) * 3 + 1
IMAGES = (RNG.uniform(size=(4, 7, 9, 3)) * 255).astype(np.float32)


def tf_transformation(transformation):
    if isinstance(transformation, dict):
        return {k: tf.constant(v) if isinstance(v, np.ndarray) else v
                for k, v in transformation.items()}
    return tf.constant(transformation) if isinstance(transformation, np.ndarray) else transformation


def assert_same_transform(make, transformation, images=IMAGES, atol=1e-3):
    """Keras's and our transform_images, fed the same transformation, agree."""
    theirs = npy(make(K).transform_images(tf.constant(images), tf_transformation(transformation),
                                          training=True))
    ours = npy(make(L).transform_images(images, transformation, training=True))
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=atol)
    return ours


def same_error(make, error=ValueError):
    """Both constructors raise ``error`` with the same text."""
    with pytest.raises(error) as theirs:
        make(K)
    with pytest.raises(error) as ours:
        make(L)
    assert str(ours.value) == str(theirs.value)


# ---- Normalization ----

@pytest.mark.parametrize("kwargs", [{}, {"axis": (1, 2)}, {"axis": None}, {"invert": True}])
def test_normalization_adapt_matches_keras(kwargs):
    theirs, ours = K.Normalization(**kwargs), L.Normalization(**kwargs)
    theirs.adapt(FEATURES)
    ours.adapt(FEATURES)
    np.testing.assert_allclose(npy(ours(FEATURES)), npy(theirs(FEATURES)), rtol=1e-4, atol=1e-5)
    assert [w.shape for w in ours.weights] == [tuple(w.shape) for w in theirs.weights]


def test_normalization_adapts_on_datasets_and_batches_and_takes_given_statistics():
    theirs = K.Normalization()
    theirs.adapt(FEATURES)
    from_dataset = L.Normalization()
    from_dataset.adapt(ga.data.Dataset.from_tensor_slices(FEATURES).batch(4))
    from_batches = L.Normalization()
    from_batches.adapt([FEATURES[:2], FEATURES[2:]])
    for ours in (from_dataset, from_batches):
        np.testing.assert_allclose(npy(ours(FEATURES)), npy(theirs(FEATURES)), rtol=1e-4,
                                   atol=1e-5)
    given = dict(mean=[1.0, 2.0, 3.0], variance=[4.0, 0.0, 9.0])
    np.testing.assert_allclose(npy(L.Normalization(**given)(FEATURES)),
                               npy(K.Normalization(**given)(FEATURES)), rtol=1e-5)
    scalar = dict(mean=2.0, variance=4.0, invert=True)
    np.testing.assert_allclose(npy(L.Normalization(**scalar)(FEATURES)),
                               npy(K.Normalization(**scalar)(FEATURES)), rtol=1e-5)


def test_normalization_adapt_after_a_traced_call_is_seen_by_the_replay():
    layer = L.Normalization()
    layer(FEATURES)
    layer.adapt(FEATURES)
    out = npy(layer(FEATURES))
    assert layer._cpp.python_calls == 1
    np.testing.assert_allclose(out.mean(axis=(0, 1)), 0.0, atol=1e-5)


def test_normalization_gradient_matches_tensorflow():
    weights = RNG.normal(size=FEATURES.shape).astype(np.float32)
    theirs = K.Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 2.0, 9.0])
    ours = L.Normalization(mean=[1.0, 2.0, 3.0], variance=[4.0, 2.0, 9.0])
    x_tf = tf.Variable(FEATURES)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(theirs(x_tf) * weights)
    x = ga.tensor(FEATURES, requires_grad=True)
    with ga.GradientTape() as g:
        g.watch(x)
        out = ga.reduce_sum(ours(x) * ga.tensor(weights))
    np.testing.assert_allclose(npy(g.gradient(out, x)), tape.gradient(loss, x_tf).numpy(),
                               rtol=1e-5)


def test_normalization_errors_match_keras():
    same_error(lambda layers: layers.Normalization(mean=[1.0]))
    same_error(lambda layers: layers.Normalization(mean=[1.0, 2.0], variance=[1.0]))
    same_error(lambda layers: layers.Normalization(axis=-1, mean=np.ones((2, 2)),
                                                   variance=np.ones((2, 2))))


# ---- Discretization, CategoryEncoding, IntegerLookup ----

@pytest.mark.parametrize("output_mode", ["int", "one_hot", "multi_hot", "count"])
def test_discretization_matches_keras(output_mode):
    data = RNG.uniform(size=(300,)).astype(np.float32) * 10
    theirs = K.Discretization(num_bins=4, output_mode=output_mode)
    ours = L.Discretization(num_bins=4, output_mode=output_mode)
    theirs.adapt(data)
    ours.adapt(data)
    np.testing.assert_allclose(ours.bin_boundaries, theirs.bin_boundaries, rtol=1e-6)
    queries = np.array([[0.5, 3.0, 9.9], [2.5, 7.5, -1.0]], np.float32)
    expected, got = npy(theirs(queries)), npy(ours(queries))
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)
    fixed = dict(bin_boundaries=[0.0, 1.0, 2.5], output_mode=output_mode)
    np.testing.assert_array_equal(npy(L.Discretization(**fixed)(queries)),
                                  npy(K.Discretization(**fixed)(queries)))


def test_discretization_errors_match_keras():
    same_error(lambda layers: layers.Discretization())
    same_error(lambda layers: layers.Discretization(num_bins=3, bin_boundaries=[1.0]))
    same_error(lambda layers: layers.Discretization(num_bins=-1))
    with pytest.raises(ValueError, match="Cannot adapt a Discretization layer"):
        L.Discretization(bin_boundaries=[1.0]).adapt(np.ones(3))


@pytest.mark.parametrize("output_mode", ["one_hot", "multi_hot", "count"])
def test_category_encoding_matches_keras(output_mode):
    for tokens in (np.array([0, 2, 3, 3]), np.array([[0, 1], [3, 3]]), np.array([[1], [2]])):
        expected = npy(K.CategoryEncoding(4, output_mode)(tokens))
        got = npy(L.CategoryEncoding(4, output_mode)(tokens))
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_category_encoding_count_weights_match_keras():
    tokens = np.array([[0, 1, 1, 3], [2, 2, 0, 1]])
    weights = RNG.uniform(size=tokens.shape).astype(np.float32)
    np.testing.assert_allclose(npy(L.CategoryEncoding(4, "count")(tokens, count_weights=weights)),
                               npy(K.CategoryEncoding(4, "count")(tokens, count_weights=weights)),
                               rtol=1e-6)
    with pytest.raises(ValueError) as theirs:
        K.CategoryEncoding(4, "one_hot")(tokens, count_weights=weights)
    with pytest.raises(ValueError) as ours:
        L.CategoryEncoding(4, "one_hot")(tokens, count_weights=weights)
    assert "`count_weights` is not used when `output_mode` is not `'count'`" in str(theirs.value)
    assert "`count_weights` is not used when `output_mode` is not `'count'`" in str(ours.value)


def test_category_encoding_errors_match_keras():
    same_error(lambda layers: layers.CategoryEncoding())
    same_error(lambda layers: layers.CategoryEncoding(0))
    same_error(lambda layers: layers.CategoryEncoding(3, output_mode="tf_idf"))
    past_the_end = np.array([[0, 3], [2, 2]])  # dropped from the counts, as Keras does
    for mode in ("one_hot", "multi_hot", "count"):
        np.testing.assert_array_equal(npy(L.CategoryEncoding(3, mode)(past_the_end)),
                                      npy(K.CategoryEncoding(3, mode)(past_the_end)))
    with pytest.raises(tf.errors.InvalidArgumentError):
        K.CategoryEncoding(3, "count")(np.array([[0, -1]]))
    with pytest.raises(ga.errors.InvalidArgumentError, match="non-negative"):
        L.CategoryEncoding(3, "count")(np.array([[0, -1]]))


VOCABULARY = [12, 36, 1138, 42]
TOKENS = np.array([[12, 1138, 42], [42, 1001, 36]])


@pytest.mark.parametrize("kwargs", [
    {}, {"num_oov_indices": 2}, {"mask_token": 0}, {"output_mode": "one_hot"},
    {"output_mode": "multi_hot", "mask_token": 0}, {"output_mode": "count"}])
def test_integer_lookup_matches_keras(kwargs):
    tokens = np.array([[12, 0, 42], [0, 1001, 36]]) if "mask_token" in kwargs else TOKENS
    expected = npy(K.IntegerLookup(vocabulary=VOCABULARY, **kwargs)(tokens))
    got = npy(L.IntegerLookup(vocabulary=VOCABULARY, **kwargs)(tokens))
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_integer_lookup_invert_adapt_and_errors_match_keras():
    indices = np.array([[1, 3, 4], [0, 2, 9]])
    np.testing.assert_array_equal(
        npy(L.IntegerLookup(vocabulary=VOCABULARY, invert=True)(indices)),
        npy(K.IntegerLookup(vocabulary=VOCABULARY, invert=True)(indices)))
    data = np.array([5, 5, 5, 3, 3, 7, 7, 9, 1, 1, 1, 1, 0, -1, -1, -1, -1, -1])
    for kwargs in ({}, {"max_tokens": 4, "mask_token": 0}):
        theirs, ours = K.IntegerLookup(**kwargs), L.IntegerLookup(**kwargs)
        theirs.adapt(data)
        ours.adapt(data)
        assert ours.get_vocabulary() == [int(t) if t is not None else None
                                         for t in theirs.get_vocabulary()]
        assert ours.vocabulary_size() == theirs.vocabulary_size()
        np.testing.assert_array_equal(npy(ours(data)), npy(theirs(data)))
    same_error(lambda layers: layers.IntegerLookup(vocabulary=[1, 2, 1]))
    same_error(lambda layers: layers.IntegerLookup(num_oov_indices=-1))
    same_error(lambda layers: layers.IntegerLookup(invert=True, output_mode="one_hot"))


# ---- Resizing ----

@pytest.mark.parametrize("kwargs", [
    {"height": 4, "width": 5}, {"height": 11, "width": 13},
    {"height": 3, "width": 12, "crop_to_aspect_ratio": True},
    {"height": 4, "width": 5, "interpolation": "nearest"},
    {"height": 10, "width": 4, "interpolation": "nearest"},
    {"height": 4, "width": 13, "interpolation": "bicubic"},
    {"height": 3, "width": 11, "interpolation": "area"},
    {"height": 9, "width": 5, "interpolation": "lanczos3"},
    {"height": 4, "width": 12, "interpolation": "lanczos5"},
    {"height": 3, "width": 4, "antialias": True},
    {"height": 3, "width": 12, "interpolation": "bicubic", "antialias": True},
    {"height": 2, "width": 4, "interpolation": "lanczos3", "antialias": True}])
def test_resizing_matches_keras(kwargs):
    np.testing.assert_allclose(npy(L.Resizing(**kwargs)(IMAGES)),
                               npy(K.Resizing(**kwargs)(IMAGES)), rtol=1e-5, atol=1e-3)


def test_center_crop_of_images_smaller_than_the_window_resizes_as_keras():
    for size in ((8, 6), (10, 12), (3, 11)):
        np.testing.assert_allclose(npy(L.CenterCrop(*size)(IMAGES)),
                                   npy(K.CenterCrop(*size)(IMAGES)), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(npy(L.CenterCrop(9, 9)(IMAGES[0])),
                               npy(K.CenterCrop(9, 9)(IMAGES[0])), rtol=1e-5, atol=1e-3)


def test_resizing_gives_integer_images_back_rounded_in_their_dtype():
    images = IMAGES.astype(np.uint8)
    for interpolation in ("bilinear", "bicubic"):
        expected = npy(K.Resizing(5, 4, interpolation=interpolation)(images))
        got = npy(L.Resizing(5, 4, interpolation=interpolation)(images))
        assert got.dtype == expected.dtype == np.uint8
        assert np.abs(got.astype(int) - expected.astype(int)).max() <= 1  # a tie may round apart


def test_resizing_gradient_matches_tensorflow():
    weights = RNG.normal(size=(4, 5, 3, 3)).astype(np.float32)
    x_tf = tf.Variable(IMAGES[:, :, :, :3][:, :5, :6])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(K.Resizing(5, 3)(x_tf) * weights)
    x = ga.tensor(IMAGES[:, :5, :6], requires_grad=True)
    with ga.GradientTape() as g:
        g.watch(x)
        out = ga.reduce_sum(L.Resizing(5, 3)(x) * ga.tensor(weights))
    np.testing.assert_allclose(npy(g.gradient(out, x)), tape.gradient(loss, x_tf).numpy(),
                               rtol=1e-5, atol=1e-6)


# ---- noise layers ----

def test_noise_layers_follow_keras_rules():
    x = np.full((64, 64), 2.0, np.float32)
    ga.random.set_seed(11)
    for layer in (L.GaussianNoise(0.5), L.GaussianDropout(0.3), L.AlphaDropout(0.3)):
        np.testing.assert_array_equal(npy(layer(x)), x)  # inference: the identity
        first, second = npy(layer(x, training=True)), npy(layer(x, training=True))
        # one trace per training value, replayed with fresh draws
        assert layer._cpp.python_calls == 2 and not np.array_equal(first, second)
    noisy = npy(L.GaussianNoise(0.5)(x, training=True)) - x
    assert abs(noisy.mean()) < 0.03 and abs(noisy.std() - 0.5) < 0.03
    scaled = npy(L.GaussianDropout(0.3)(x, training=True)) / x
    assert abs(scaled.mean() - 1) < 0.03 and abs(scaled.std() - np.sqrt(0.3 / 0.7)) < 0.03
    alpha = 1.6732632423543772848170429916717 * 1.0507009873554804934193349852946
    a = ((1 - 0.3) * (1 + 0.3 * alpha ** 2)) ** -0.5
    b = a * alpha * 0.3
    dropped = npy(L.AlphaDropout(0.3)(x, training=True))
    kept = np.isclose(dropped, a * 2.0 + b)
    assert np.all(kept | np.isclose(dropped, -a * alpha + b))
    assert abs(kept.mean() - 0.7) < 0.03
    same_error(lambda layers: layers.GaussianNoise(1.5))
    same_error(lambda layers: layers.GaussianDropout(-0.1))


# ---- augmentation: the deterministic transforms against Keras's ----

FLIPS = np.array([True, False, True, False]).reshape(4, 1, 1, 1)


@pytest.mark.parametrize("make,transformation,images", [
    (lambda layers: layers.RandomFlip("horizontal"), {"flips": FLIPS, "input_shape": IMAGES.shape},
     IMAGES),
    (lambda layers: layers.RandomFlip("vertical"), {"flips": FLIPS, "input_shape": IMAGES.shape}, IMAGES),
    (lambda layers: layers.RandomFlip(), {"flips": FLIPS, "input_shape": IMAGES.shape}, IMAGES),
    (lambda layers: layers.RandomContrast(0.5),
     {"contrast_factor": np.array([0.5, 1.0, 1.2, 1.5], np.float32).reshape(4, 1, 1, 1)}, IMAGES),
    (lambda layers: layers.RandomBrightness(0.5),
     {"rgb_delta": np.array([-90, 0, 30, 120], np.float32).reshape(4, 1, 1, 1)}, IMAGES),
    (lambda layers: layers.RandomInvert(), {"apply_inversion": np.array([True, False, False, True])},
     IMAGES),
    (lambda layers: layers.Solarization(0.5, 0.5, value_range=(0, 1)),
     {"additions": np.array([0, 20, 50, 100], np.float32).reshape(4, 1, 1, 1),
      "thresholds": np.array([0, 60, 128, 250], np.float32).reshape(4, 1, 1, 1)}, IMAGES / 255),
    (lambda layers: layers.RandomGrayscale(), FLIPS, IMAGES),
    (lambda layers: layers.AutoContrast(), None, np.concatenate([IMAGES[:3], np.full_like(
        IMAGES[:1], 7.0)])),
    (lambda layers: layers.RandomCrop(3, 4), (1, 2), IMAGES),
], ids=["flip_h", "flip_v", "flip_hv", "contrast", "brightness", "invert", "solarization",
        "grayscale", "auto_contrast", "crop"])
def test_image_transforms_match_keras(make, transformation, images):
    assert_same_transform(make, transformation, images)


@pytest.mark.parametrize("fill_mode", ["reflect", "wrap", "constant", "nearest"])
@pytest.mark.parametrize("interpolation", ["bilinear", "nearest"])
def test_geometric_transforms_match_keras(fill_mode, interpolation):
    options = dict(fill_mode=fill_mode, interpolation=interpolation, fill_value=3.0)
    assert_same_transform(lambda layers: layers.RandomTranslation(0.9, 0.9, **options), {
        "translations": np.array([[3.3, -2.6], [-12.2, 5.5], [0.0, 15.25], [0.5, 0.5]],
                                 np.float32), "input_shape": IMAGES.shape})
    assert_same_transform(lambda layers: layers.RandomZoom(0.5, 0.5, **options), {
        "height_zoom": np.array([[0.5], [1.3], [1.9], [1.0]], np.float32),
        "width_zoom": np.array([[1.2], [0.7], [1.0], [1.0]], np.float32),
        "input_shape": IMAGES.shape})
    # Our rotation matrix from Keras's angles (Keras's transform takes its own matrix).
    theirs = K.RandomRotation(0.5, **options)
    drawn = theirs.get_random_transformation(IMAGES)
    angles = drawn["angle"].numpy()
    expected = theirs.transform_images(tf.constant(IMAGES), drawn, training=True).numpy()
    got = L.RandomRotation(0.5, **options).transform_images(IMAGES, {"angle": angles})
    np.testing.assert_allclose(npy(got), expected, rtol=1e-4, atol=2e-2)


# ---- augmentation: the rules of the draws ----

AUGMENTATIONS = [
    lambda layers: layers.RandomFlip(), lambda layers: layers.RandomRotation(0.2),
    lambda layers: layers.RandomTranslation(0.2, 0.2), lambda layers: layers.RandomZoom(0.2),
    lambda layers: layers.RandomContrast(0.5), lambda layers: layers.RandomBrightness(0.3),
    lambda layers: layers.RandomGrayscale(0.5), lambda layers: layers.RandomInvert(0.5),
    lambda layers: layers.Solarization(0.5, 0.5), lambda layers: layers.RandomCrop(5, 6),
]


@pytest.mark.parametrize("make", AUGMENTATIONS)
def test_augmentations_are_identity_at_inference_and_reproducible_and_fresh_per_replay(make):
    layer = make(L)
    np.testing.assert_array_equal(npy(layer(IMAGES, training=False)), IMAGES)
    np.testing.assert_array_equal(npy(make(K)(IMAGES, training=False)), IMAGES)
    ga.random.set_seed(5)
    first = [npy(layer(IMAGES)) for _ in range(3)]  # a direct call augments, as Keras's
    ga.random.set_seed(5)
    again = [npy(layer(IMAGES)) for _ in range(3)]
    assert layer._cpp.python_calls == 2  # one trace for training=False, one for True
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert not all(np.array_equal(first[0], f) for f in first[1:])
    assert first[0].shape == tuple(make(K).compute_output_shape(IMAGES.shape))
    assert np.all(first[0] >= -1e-3) and np.all(first[0] <= 255 + 1e-3)  # value_range kept


def test_flips_are_exact_reversals_and_zero_factors_are_the_identity():
    ga.random.set_seed(3)
    out = npy(L.RandomFlip()(IMAGES))
    for image, result in zip(IMAGES, out):
        assert np.array_equal(result, image) or np.array_equal(result, image[::-1, ::-1])
    out = npy(L.RandomFlip("horizontal")(IMAGES[0]))  # one image
    assert np.array_equal(out, IMAGES[0]) or np.array_equal(out, IMAGES[0][:, ::-1])
    for make in (lambda layers: layers.RandomRotation(0.0), lambda layers: layers.RandomTranslation(0.0, 0.0),
                 lambda layers: layers.RandomZoom(0.0), lambda layers: layers.RandomContrast(0.0),
                 lambda layers: layers.RandomBrightness(0.0), lambda layers: layers.RandomGrayscale(0.0),
                 lambda layers: layers.RandomInvert(0.0)):
        np.testing.assert_allclose(npy(make(L)(IMAGES)), IMAGES, atol=2e-3)


def test_augmentation_errors_match_keras():
    same_error(lambda layers: layers.RandomContrast(1.5))
    same_error(lambda layers: layers.RandomBrightness((0.1, 0.2, 0.3)))
    same_error(lambda layers: layers.RandomBrightness(0.2, value_range=(0, 1, 2)))
    same_error(lambda layers: layers.RandomGrayscale(2.0))
    same_error(lambda layers: layers.RandomTranslation(1.5, 0.1))
    same_error(lambda layers: layers.RandomZoom(-1.0))
    same_error(lambda layers: layers.Solarization(addition_factor=2.0))
    same_error(lambda layers: layers.RandomRotation(0.1, fill_mode="mirror"), NotImplementedError)
    with pytest.raises(ValueError, match="rank 3 or 4"):
        L.RandomContrast(0.1)(np.ones((2, 3), np.float32))


def test_model_with_rescaling_flip_and_conv_trains_and_augments_only_in_fit():
    ga.random.set_seed(0)
    x = IMAGES[:, :6, :6]
    y = np.array([0, 1, 1, 0], np.int32)
    model = gk.Sequential([gk.Input((6, 6, 3)), L.Rescaling(1 / 255.0), L.RandomFlip(),
                           L.Conv2D(4, 3, activation="relu"), L.GlobalAveragePooling2D(),
                           L.Dense(2)])
    model.compile(optimizer=gk.optimizers.Adam(0.01),
                  loss=gk.losses.SparseCategoricalCrossentropy(from_logits=True))
    history = model.fit(x, y, epochs=8, batch_size=4, verbose=0).history["loss"]
    assert np.all(np.isfinite(history)) and history[-1] < history[0]
    np.testing.assert_array_equal(model.predict(x, verbose=0), model.predict(x, verbose=0))


def test_augmentation_and_pipeline_in_dataset_map():
    ga.random.set_seed(2)
    pipeline = L.Pipeline([L.RandomFlip("horizontal"), L.RandomContrast(0.3),
                           L.Rescaling(1 / 255.0)])
    per_image = L.RandomFlip("vertical")
    labels = np.arange(4)
    batched = ga.data.Dataset.from_tensor_slices((IMAGES, labels)).batch(2).map(
        lambda a, b: (pipeline(a), b))
    outputs = [npy(a) for a, _ in batched]
    assert [o.shape for o in outputs] == [(2, 7, 9, 3)] * 2
    assert all(np.all((o >= 0) & (o <= 1)) for o in outputs)
    assert pipeline._cpp.python_calls == 1
    single = ga.data.Dataset.from_tensor_slices(IMAGES).map(per_image)
    for image, out in zip(IMAGES, single):
        out = npy(out)
        assert np.array_equal(out, image) or np.array_equal(out, image[::-1])


def test_auto_contrast_and_a_deterministic_pipeline_match_keras_whatever_training():
    images = np.concatenate([IMAGES[:3], np.full_like(IMAGES[:1], 7.0)])

    def make(layers):
        return layers.Pipeline([layers.Resizing(5, 6), layers.AutoContrast(),
                                layers.Rescaling(1 / 255.0), layers.RandomFlip()])

    for training in (False, None):
        kwargs = {} if training is None else {"training": training}
        np.testing.assert_allclose(npy(L.AutoContrast()(images, **kwargs)),
                                   npy(K.AutoContrast()(images, **kwargs)), rtol=1e-5, atol=1e-3)
    # the flip is off at inference: the rest is deterministic
    np.testing.assert_allclose(npy(make(L)(images, training=False)),
                               npy(make(K)(images, training=False)), rtol=1e-5, atol=1e-5)
    assert make(L).compute_output_shape((None, 7, 9, 3)) == (None, 5, 6, 3)


def test_augmentation_gradients():
    """Contrast against TensorFlow's gradient; the resampling against its adjoint: a
    transform T is linear in the images, so the gradient g of <T(x), w> satisfies
    <x, g> = <T(x), w> (TensorFlow's own gradient of ImageProjectiveTransformV3 samples with
    the inverse matrix, an approximation of the adjoint, so it is not the reference here)."""
    x = IMAGES / 255.0
    w = RNG.normal(size=x.shape).astype(np.float32)
    factors = {"contrast_factor": np.array([0.5, 1.0, 1.2, 1.5], np.float32).reshape(4, 1, 1, 1)}
    x_tf = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(K.RandomContrast(0.5, value_range=(0, 1)).transform_images(
            x_tf, tf_transformation(factors)) * w)
    expected = tape.gradient(loss, x_tf).numpy()
    for layer, transformation in (
            (L.RandomContrast(0.5, value_range=(0, 1)), factors),
            (L.RandomTranslation(0.3, 0.3), {"translations": np.array(
                [[1.3, -0.6], [-2.2, 0.5], [0.0, 1.25], [0.5, 0.5]], np.float32)}),
            (L.RandomRotation(0.3, fill_mode="constant"), {"angle": np.array(
                [10.0, -45.0, 90.0, 170.0], np.float32)})):
        images = ga.tensor(x, requires_grad=True)
        with ga.GradientTape() as g:
            g.watch(images)
            out = layer.transform_images(images, transformation)
            total = ga.reduce_sum(out * ga.tensor(w))
        gradient = npy(g.gradient(total, images))
        if isinstance(layer, L.RandomContrast):
            np.testing.assert_allclose(gradient, expected, rtol=1e-5, atol=1e-5)
        else:
            np.testing.assert_allclose(np.sum(x * gradient), np.sum(npy(out) * w), rtol=1e-4)


def test_a_model_of_these_layers_saves_and_loads_here_and_in_keras(tmp_path):
    normalization = L.Normalization()
    normalization.adapt(IMAGES)
    model = gk.Sequential([gk.Input((7, 9, 3)), normalization,
                           L.Pipeline([L.RandomFlip(), L.RandomContrast(0.1)]),
                           L.RandomRotation(0.1), L.Resizing(6, 6), L.GaussianNoise(0.1),
                           L.Conv2D(2, 3), L.Flatten(), L.Dense(1)])
    path = str(tmp_path / "augmented.keras")
    model.save(path)
    expected = model.predict(IMAGES, verbose=0)
    np.testing.assert_allclose(gk.models.load_model(path).predict(IMAGES, verbose=0), expected,
                               rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(keras.models.load_model(path).predict(IMAGES, verbose=0),
                               expected, rtol=1e-4, atol=1e-4)


def test_functional_outputs_have_keras_dtypes_and_a_lookup_model_trains():
    tokens = gk.Input((3,), dtype="int64")
    for make, inputs in ((lambda layers: layers.IntegerLookup(vocabulary=VOCABULARY), "int64"),
                         (lambda layers: layers.IntegerLookup(vocabulary=VOCABULARY,
                                                              output_mode="count"), "int64"),
                         (lambda layers: layers.Discretization(bin_boundaries=[0.0]), "float32"),
                         (lambda layers: layers.Discretization(bin_boundaries=[0.0],
                                                               output_mode="count"), "float32"),
                         (lambda layers: layers.CategoryEncoding(4), "int32"),
                         (lambda layers: layers.Resizing(2, 2), "uint8")):
        shape = (4, 4, 3) if inputs == "uint8" else (3,)
        ours = make(L)(gk.Input(shape, dtype=inputs))
        theirs = make(K)(keras.Input(shape, dtype=inputs))
        assert str(ours.dtype) == str(theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
    lookup = L.IntegerLookup(vocabulary=VOCABULARY)(tokens)
    outputs = L.Dense(1)(L.Flatten()(L.Embedding(6, 4)(lookup)))
    model = gk.Model(tokens, outputs)
    model.compile(optimizer="adam", loss="mse")
    history = model.fit(np.tile(TOKENS, (4, 1)), np.ones((8, 1), np.float32), epochs=2,
                        verbose=0).history["loss"]
    assert np.all(np.isfinite(history))


class _AugmentingBlock(gk.layers.Layer):
    """A Python layer whose call() calls its sublayers without `training`, as Keras's guides
    write them: they inherit the call's training (Keras's call-context rule)."""

    def __init__(self):
        super().__init__()
        self.flip = L.RandomFlip("horizontal")
        self.dropout = L.Dropout(0.5)

    def call(self, inputs):
        return self.dropout(self.flip(inputs) * 1.0)


def test_layers_called_without_training_inherit_the_enclosing_call():
    ga.random.set_seed(4)
    block = _AugmentingBlock()
    x = IMAGES[:, :4, :5]
    inference = [npy(block(x, training=False)) for _ in range(3)]
    for out in inference:  # no flip, no dropout
        np.testing.assert_array_equal(out, x)
    training = npy(block(x, training=True))
    assert np.any(training == 0)  # dropout active
    for result, image in zip(training, x):
        kept = result != 0
        assert np.allclose(result[kept], 2 * image[kept]) or \
            np.allclose(result[kept], 2 * image[:, ::-1][kept])


CONFIGURED = [
    lambda layers: layers.Normalization(mean=[1.0], variance=[2.0]),
    lambda layers: layers.Discretization(bin_boundaries=[0.0, 1.0], output_mode="one_hot"),
    lambda layers: layers.CategoryEncoding(3, "count"),
    lambda layers: layers.IntegerLookup(vocabulary=[1, 2], num_oov_indices=2),
    lambda layers: layers.Resizing(3, 4, interpolation="area"),
    lambda layers: layers.GaussianNoise(0.1), lambda layers: layers.GaussianDropout(0.1),
    lambda layers: layers.AlphaDropout(0.1), lambda layers: layers.RandomFlip("vertical"),
    lambda layers: layers.RandomCrop(3, 3, seed=1), lambda layers: layers.RandomContrast(0.2),
    lambda layers: layers.RandomBrightness((-0.1, 0.2)), lambda layers: layers.RandomGrayscale(),
    lambda layers: layers.RandomInvert(0.3), lambda layers: layers.Solarization(0.1, 0.2),
    lambda layers: layers.AutoContrast((0, 1)), lambda layers: layers.RandomRotation(0.1),
    lambda layers: layers.RandomTranslation(0.1, 0.2, fill_mode="wrap"),
    lambda layers: layers.RandomZoom(0.1, interpolation="nearest"),
]


def unnamed(config):
    return {k: v for k, v in config.items() if k != "name"}


def test_configs_match_keras_and_load_both_ways():
    for make in CONFIGURED:
        ours, theirs = make(L).get_config(), make(K).get_config()
        for config in (ours, theirs):
            config.pop("name")
            config.pop("dtype")
        assert set(ours) == set(theirs), type(make(L)).__name__
        for key in ours:
            value = list(ours[key]) if isinstance(ours[key], tuple) else ours[key]
            expected = list(theirs[key]) if isinstance(theirs[key], tuple) else theirs[key]
            assert value == expected, (type(make(L)).__name__, key)
        # each side rebuilds the same layer from either config
        assert unnamed(type(make(K)).from_config(ours).get_config()) == \
            unnamed(type(make(K)).from_config(theirs).get_config())
        assert unnamed(type(make(L)).from_config(theirs).get_config()) == \
            unnamed(make(L).get_config())
    pipeline = K.Pipeline([K.RandomFlip(), K.Resizing(2, 3)]).get_config()
    rebuilt = L.Pipeline.from_config(pipeline)
    assert [type(layer).__name__ for layer in rebuilt.layers] == ["RandomFlip", "Resizing"]
    assert npy(rebuilt(IMAGES, training=False)).shape == (4, 2, 3, 3)
