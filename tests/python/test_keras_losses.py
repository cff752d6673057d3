"""Every keras.losses class and function gpuaccel has, against real Keras on the same seeded
arrays: each reduction, with and without sample weights, the class and function forms, a
gradient per family (against tf.GradientTape), and fit's logged loss for a composed loss."""
import numpy as np
import pytest

import gpuaccel
from gpuaccel import keras as gk
from gpuaccel.keras import losses

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

RNG = np.random.default_rng(11)
N, C = 8, 4
REAL_A = RNG.normal(size=(N, C)).astype(np.float32) * 2
REAL_B = RNG.normal(size=(N, C)).astype(np.float32) * 2
POSITIVE_A = RNG.uniform(0.01, 1.0, size=(N, C)).astype(np.float32)
POSITIVE_B = RNG.uniform(0.01, 1.0, size=(N, C)).astype(np.float32)
BITS = RNG.integers(0, 2, size=(N, C)).astype(np.float32)
SIGNS = 2 * BITS - 1
ONE_HOT = np.eye(C, dtype=np.float32)[RNG.integers(0, C, size=N)]
PROBS = (np.exp(REAL_B) / np.exp(REAL_B).sum(-1, keepdims=True)).astype(np.float32)
WEIGHTS = RNG.uniform(0.0, 2.0, size=N).astype(np.float32)

# (gpuaccel class, Keras class, constructor options, y_true, y_pred)
CASES = [
    (losses.MeanSquaredError, keras.losses.MeanSquaredError, {}, REAL_A, REAL_B),
    (losses.MeanAbsoluteError, keras.losses.MeanAbsoluteError, {}, REAL_A, REAL_B),
    (losses.MeanAbsolutePercentageError, keras.losses.MeanAbsolutePercentageError, {},
     REAL_A, REAL_B),
    (losses.MeanSquaredLogarithmicError, keras.losses.MeanSquaredLogarithmicError, {},
     POSITIVE_A, REAL_B),
    (losses.Huber, keras.losses.Huber, {}, REAL_A, REAL_B),
    (losses.Huber, keras.losses.Huber, {"delta": 0.3}, REAL_A, REAL_B),
    (losses.LogCosh, keras.losses.LogCosh, {}, REAL_A, REAL_B * 30),
    (losses.Hinge, keras.losses.Hinge, {}, BITS, REAL_B),
    (losses.Hinge, keras.losses.Hinge, {}, SIGNS, REAL_B),
    (losses.SquaredHinge, keras.losses.SquaredHinge, {}, BITS, REAL_B),
    (losses.CategoricalHinge, keras.losses.CategoricalHinge, {}, ONE_HOT, REAL_B),
    (losses.KLDivergence, keras.losses.KLDivergence, {}, PROBS[::-1].copy(), PROBS),
    (losses.Poisson, keras.losses.Poisson, {}, POSITIVE_A, POSITIVE_B),
    (losses.CosineSimilarity, keras.losses.CosineSimilarity, {}, REAL_A, REAL_B),
    (losses.CosineSimilarity, keras.losses.CosineSimilarity, {"axis": 0}, REAL_A, REAL_B),
    (losses.BinaryCrossentropy, keras.losses.BinaryCrossentropy,
     {"from_logits": True, "label_smoothing": 0.2}, BITS, REAL_B),
    (losses.BinaryCrossentropy, keras.losses.BinaryCrossentropy, {"axis": 0}, BITS, POSITIVE_B),
    (losses.CategoricalCrossentropy, keras.losses.CategoricalCrossentropy,
     {"label_smoothing": 0.1}, ONE_HOT, PROBS),
    (losses.CategoricalCrossentropy, keras.losses.CategoricalCrossentropy,
     {"from_logits": True, "axis": 0}, ONE_HOT, REAL_B),
    (losses.SparseCategoricalCrossentropy, keras.losses.SparseCategoricalCrossentropy,
     {"from_logits": True}, ONE_HOT.argmax(-1), REAL_B),
    (losses.BinaryFocalCrossentropy, keras.losses.BinaryFocalCrossentropy, {}, BITS, POSITIVE_B),
    (losses.BinaryFocalCrossentropy, keras.losses.BinaryFocalCrossentropy,
     {"apply_class_balancing": True, "alpha": 0.4, "gamma": 1.5, "from_logits": True,
      "label_smoothing": 0.1}, BITS, REAL_B),
    (losses.CategoricalFocalCrossentropy, keras.losses.CategoricalFocalCrossentropy, {},
     ONE_HOT, PROBS),
    (losses.CategoricalFocalCrossentropy, keras.losses.CategoricalFocalCrossentropy,
     {"alpha": 0.5, "gamma": 3.0, "from_logits": True, "label_smoothing": 0.2}, ONE_HOT, REAL_B),
    (losses.CategoricalGeneralizedCrossEntropy, keras.losses.CategoricalGeneralizedCrossEntropy,
     {"q": 0.7}, ONE_HOT.argmax(-1), PROBS),
    (losses.Dice, keras.losses.Dice, {}, BITS, POSITIVE_B),
    (losses.Dice, keras.losses.Dice, {"axis": 1}, BITS, POSITIVE_B),
    (losses.Tversky, keras.losses.Tversky, {"alpha": 0.3, "beta": 0.7}, BITS, POSITIVE_B),
    (losses.Tversky, keras.losses.Tversky, {"axis": 1}, BITS, POSITIVE_B),
]


def assert_close(ours, theirs, tol=2e-5):
    ours = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours, np.float64)
    theirs = np.asarray(theirs, np.float64)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * max(1.0, np.abs(theirs).max()))


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "mean", "sum", "none",
                                       "mean_with_sample_weight"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ours, theirs, options, y_true, y_pred", CASES,
                         ids=[f"{c[0].__name__}{i}" for i, c in enumerate(CASES)])
def test_loss_classes_match_keras(ours, theirs, options, y_true, y_pred, reduction, weighted):
    weight = WEIGHTS if weighted else None
    try:
        expected = theirs(reduction=reduction, **options)(y_true, y_pred, sample_weight=weight)
    except (ValueError, tf.errors.InvalidArgumentError):  # per-class losses (axis=0), N weights
        with pytest.raises(ValueError, match="sample_weight of shape \\(8,\\) does not "
                                             "broadcast to the losses' shape \\(4,\\)"):
            ours(reduction=reduction, **options)(y_true, y_pred, sample_weight=weight)
        return
    value = ours(reduction=reduction, **options)(y_true, y_pred, sample_weight=weight)
    assert value.dtype == "float32"
    assert_close(value, expected)


def test_sample_weights_of_other_shapes_follow_keras():
    """A (N, 1) column and a (N, C) matrix of weights, as Keras aligns and broadcasts them."""
    column = WEIGHTS[:, None]
    assert_close(losses.Dice(axis=1)(BITS, POSITIVE_B, sample_weight=column),
                 keras.losses.Dice(axis=1)(BITS, POSITIVE_B, sample_weight=column))
    class AbsoluteErrors(keras.losses.Loss):  # per element, not averaged over the last axis
        def call(self, y_true, y_pred):
            return keras.ops.abs(y_true - y_pred)

    per_element = losses.LossFunctionWrapper(lambda t, p: gpuaccel.keras.ops.abs(t - p))
    theirs = AbsoluteErrors()
    weight = RNG.uniform(size=(N, C)).astype(np.float32)
    assert_close(per_element(REAL_A, REAL_B, weight), theirs(REAL_A, REAL_B, weight))
    with pytest.raises(ValueError, match="does not broadcast"):
        losses.MeanAbsoluteError()(REAL_A, REAL_B, sample_weight=np.ones(3, np.float32))


FUNCTIONS = [
    (losses.mean_squared_error, keras.losses.mean_squared_error, {}, REAL_A, REAL_B),
    (losses.mean_absolute_error, keras.losses.mean_absolute_error, {}, REAL_A, REAL_B),
    (losses.mean_absolute_percentage_error, keras.losses.mean_absolute_percentage_error, {},
     REAL_A, REAL_B),
    (losses.mean_squared_logarithmic_error, keras.losses.mean_squared_logarithmic_error, {},
     POSITIVE_A, POSITIVE_B),
    (losses.huber, keras.losses.huber, {"delta": 2.0}, REAL_A, REAL_B),
    (losses.log_cosh, keras.losses.log_cosh, {}, REAL_A, REAL_B),
    (losses.hinge, keras.losses.hinge, {}, BITS, REAL_B),
    (losses.squared_hinge, keras.losses.squared_hinge, {}, SIGNS, REAL_B),
    (losses.categorical_hinge, keras.losses.categorical_hinge, {}, ONE_HOT, REAL_B),
    (losses.kl_divergence, keras.losses.kl_divergence, {}, PROBS[::-1].copy(), PROBS),
    (losses.poisson, keras.losses.poisson, {}, POSITIVE_A, POSITIVE_B),
    (losses.cosine_similarity, keras.losses.cosine_similarity, {"axis": 0}, REAL_A, REAL_B),
    (losses.binary_crossentropy, keras.losses.binary_crossentropy,
     {"from_logits": True, "label_smoothing": 0.1}, BITS, REAL_B),
    (losses.categorical_crossentropy, keras.losses.categorical_crossentropy,
     {"label_smoothing": 0.1, "axis": -1}, ONE_HOT, PROBS),
    (losses.sparse_categorical_crossentropy, keras.losses.sparse_categorical_crossentropy,
     {}, ONE_HOT.argmax(-1), PROBS),
    (losses.binary_focal_crossentropy, keras.losses.binary_focal_crossentropy,
     {"gamma": 1.0}, BITS, POSITIVE_B),
    (losses.categorical_focal_crossentropy, keras.losses.categorical_focal_crossentropy,
     {"gamma": 1.0}, ONE_HOT, PROBS),
    (losses.categorical_generalized_cross_entropy,
     keras.losses.categorical_generalized_cross_entropy, {"q": 0.4}, ONE_HOT.argmax(-1), PROBS),
    (losses.dice, keras.losses.dice, {"axis": -1}, BITS, POSITIVE_B),
    (losses.tversky, keras.losses.tversky, {"alpha": 0.8, "beta": 0.2}, BITS, POSITIVE_B),
]


@pytest.mark.parametrize("ours, theirs, options, y_true, y_pred", FUNCTIONS,
                         ids=[f[0].__name__ for f in FUNCTIONS])
def test_loss_functions_match_keras(ours, theirs, options, y_true, y_pred):
    assert_close(ours(y_true, y_pred, **options), theirs(y_true, y_pred, **options))


def test_aliases_and_names_as_keras():
    assert losses.mse is losses.mean_squared_error and losses.mae is losses.mean_absolute_error
    assert losses.kld is losses.kl_divergence and losses.logcosh is losses.log_cosh
    for cls, theirs in ((losses.Huber, keras.losses.Huber), (losses.LogCosh, keras.losses.LogCosh),
                        (losses.Dice, keras.losses.Dice),
                        (losses.BinaryFocalCrossentropy, keras.losses.BinaryFocalCrossentropy)):
        assert cls().name == theirs().name
    for name in ("mae", "mape", "msle", "huber", "kld", "log_cosh", "poisson", "hinge",
                 "categorical_hinge", "cosine_similarity", "dice", "tversky"):
        # Keras's get() gives the function, gpuaccel's the class compile() needs: same values
        y_true, y_pred = (POSITIVE_A, POSITIVE_B) if name in ("msle", "kld", "poisson") else \
            (BITS, POSITIVE_B)
        assert_close(losses.get(name)(y_true, y_pred),
                     np.mean(keras.losses.get(name)(y_true, y_pred)))
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['delt'\\]"):
        losses.Huber(delt=1.0)


def test_serialize_and_deserialize_round_trip_like_keras():
    ours = losses.serialize(losses.Huber(delta=0.25, name="h"))
    theirs = keras.losses.serialize(keras.losses.Huber(delta=0.25, name="h"))
    assert ours["class_name"] == theirs["class_name"] == "Huber"
    back = losses.deserialize(ours)
    assert isinstance(back, losses.Huber) and back.delta == 0.25 and back.name == "h"
    assert_close(back(REAL_A, REAL_B), keras.losses.Huber(delta=0.25)(REAL_A, REAL_B))
    assert isinstance(losses.deserialize("mse"), losses.MeanSquaredError)
    with pytest.raises(ValueError, match="Could not interpret loss identifier: Nope "
                       r"\(an unknown loss class; known: \[.*'Huber'"):
        losses.deserialize({"class_name": "Nope", "config": {}})
    custom = losses.deserialize({"class_name": "Nope", "config": {"delta": 0.5}},
                                custom_objects={"Nope": losses.Huber})
    assert isinstance(custom, losses.Huber) and custom.delta == 0.5
    with pytest.raises(TypeError, match="serialize\\(\\) takes a Loss, received 3"):
        losses.serialize(3)


@pytest.mark.parametrize("ours, theirs, options, y_true, y_pred", [
    (losses.Huber, keras.losses.Huber, {"delta": 0.8}, REAL_A, REAL_B),
    (losses.LogCosh, keras.losses.LogCosh, {}, REAL_A, REAL_B),
    (losses.CategoricalFocalCrossentropy, keras.losses.CategoricalFocalCrossentropy,
     {"from_logits": True}, ONE_HOT, REAL_B),
    (losses.BinaryFocalCrossentropy, keras.losses.BinaryFocalCrossentropy,
     {"apply_class_balancing": True}, BITS, POSITIVE_B),
    (losses.KLDivergence, keras.losses.KLDivergence, {}, PROBS[::-1].copy(), PROBS),
    (losses.Tversky, keras.losses.Tversky, {}, BITS, POSITIVE_B),
    (losses.CosineSimilarity, keras.losses.CosineSimilarity, {}, REAL_A, REAL_B),
    (losses.SquaredHinge, keras.losses.SquaredHinge, {}, BITS, REAL_B),
], ids=lambda v: getattr(v, "__name__", None) if isinstance(v, type) else None)
def test_loss_gradients_match_tensorflow(ours, theirs, options, y_true, y_pred):
    prediction = gpuaccel.tensor(y_pred, requires_grad=True)
    ours(**options)(y_true, prediction, sample_weight=WEIGHTS).backward()
    variable = tf.Variable(y_pred)
    with tf.GradientTape() as tape:
        loss = theirs(**options)(y_true, variable, sample_weight=WEIGHTS)
    assert_close(prediction.grad, tape.gradient(loss, variable).numpy(), 1e-4)


def _twins(loss_for, units):
    keras.utils.set_random_seed(3)
    models = []
    for lib in (gk, keras):
        model = lib.Sequential([lib.Input((5,)), lib.layers.Dense(units)])
        model.compile(optimizer="sgd", loss=loss_for(lib))
        models.append(model)
    models[0].set_weights(models[1].get_weights())
    return models


@pytest.mark.parametrize("loss_for", [
    lambda lib: lib.losses.Huber(delta=0.5),
    lambda lib: "log_cosh",
    lambda lib: lib.losses.CategoricalFocalCrossentropy(from_logits=True),
    lambda lib: lib.losses.mean_absolute_error,
    lambda lib: "squared_hinge",
    lambda lib: lib.losses.Tversky(alpha=0.7, beta=0.3),
], ids=["Huber", "log_cosh", "CategoricalFocal", "mae_function", "squared_hinge", "Tversky"])
def test_fit_logs_the_loss_keras_logs(loss_for):
    x = RNG.normal(size=(32, 5)).astype(np.float32)
    y = np.eye(3, dtype=np.float32)[RNG.integers(0, 3, size=32)]
    weights = RNG.uniform(size=32).astype(np.float32)
    histories = [m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                       sample_weight=weights).history["loss"] for m in _twins(loss_for, 3)]
    np.testing.assert_allclose(histories[0], histories[1], rtol=2e-5)
    assert histories[0][0] != histories[0][-1]  # it trained


@pytest.mark.parametrize("reduction", ["sum", "none", None, "mean_with_sample_weight"])
def test_compile_refuses_the_reductions_fit_would_get_wrong(reduction):
    model = gk.Sequential([gk.Input((5,)), gk.layers.Dense(2)])
    with pytest.raises(NotImplementedError, match=f"reduction={reduction!r} is not supported"):
        model.compile("sgd", losses.Huber(reduction=reduction))
    model.compile("sgd", losses.Huber(reduction="mean"))  # the batch mean, as fit computes it


EMBEDDINGS = RNG.normal(size=(10, 6)).astype(np.float32)
EMBEDDINGS /= np.linalg.norm(EMBEDDINGS, axis=1, keepdims=True)
GROUPS = np.array([0, 1, 2, 0, 1, 2, 3, 0, 1, 4])  # classes 3 and 4: no positive pair (masked)
GROUP_WEIGHTS = np.linspace(0.2, 1.5, 10).astype(np.float32)


@pytest.mark.parametrize("reduction", ["sum_over_batch_size", "sum", "none",
                                       "mean_with_sample_weight"])
@pytest.mark.parametrize("options", [{}, {"gamma": 10.0, "margin": 0.25,
                                          "remove_diagonal": False}])
def test_circle_matches_keras_with_its_mask(reduction, options):
    for weight in (None, GROUP_WEIGHTS):
        assert_close(losses.Circle(reduction=reduction, **options)(GROUPS, EMBEDDINGS, weight),
                     keras.losses.Circle(reduction=reduction, **options)(GROUPS, EMBEDDINGS,
                                                                         weight))
    assert_close(losses.circle(GROUPS, EMBEDDINGS, **options),
                 keras.losses.circle(GROUPS, EMBEDDINGS, **options))


def test_circle_gradient_and_fit_match_keras():
    prediction = gpuaccel.tensor(EMBEDDINGS, requires_grad=True)
    losses.Circle(gamma=5.0)(GROUPS, prediction, sample_weight=GROUP_WEIGHTS).backward()
    variable = tf.Variable(EMBEDDINGS)
    with tf.GradientTape() as tape:
        loss = keras.losses.Circle(gamma=5.0)(GROUPS, variable, sample_weight=GROUP_WEIGHTS)
    assert_close(prediction.grad, tape.gradient(loss, variable).numpy(), 1e-4)

    x = RNG.normal(size=(40, 5)).astype(np.float32)
    y = RNG.integers(0, 3, size=40)
    y[[5, 25]] = 7  # alone in their batch: masked out of its mean
    keras.utils.set_random_seed(4)
    models = []
    for lib in (gk, keras):
        model = lib.Sequential([lib.Input((5,)), lib.layers.Dense(4),
                                lib.layers.UnitNormalization()])
        model.compile(optimizer="sgd", loss=lib.losses.Circle(gamma=8.0))
        models.append(model)
    models[0].set_weights(models[1].get_weights())
    histories = [m.fit(x, y, batch_size=10, epochs=3, shuffle=False, verbose=0,
                       sample_weight=np.tile(WEIGHTS, 5)).history["loss"] for m in models]
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-4)


CTC_LOGITS = RNG.normal(size=(3, 7, 5)).astype(np.float32) * 2
CTC_LABELS = np.array([[1, 2, 2, 0], [3, 1, 4, 2], [0, 0, 0, 0]])  # repeats, full, empty


def test_ctc_matches_keras_values_reductions_and_gradient():
    assert_close(losses.ctc(CTC_LABELS, CTC_LOGITS), keras.losses.ctc(CTC_LABELS, CTC_LOGITS))
    for reduction in ("sum_over_batch_size", "sum", "none"):
        for weight in (None, WEIGHTS[:3]):
            assert_close(losses.CTC(reduction=reduction)(CTC_LABELS, CTC_LOGITS, weight),
                         keras.losses.CTC(reduction=reduction)(CTC_LABELS, CTC_LOGITS, weight))
    prediction = gpuaccel.tensor(CTC_LOGITS, requires_grad=True)
    losses.CTC()(CTC_LABELS, prediction).backward()
    variable = tf.Variable(CTC_LOGITS)
    with tf.GradientTape() as tape:
        loss = keras.losses.CTC()(CTC_LABELS, variable)
    assert_close(prediction.grad, tape.gradient(loss, variable).numpy(), 1e-4)
    with pytest.raises(ValueError, match="expected to be a tensor of shape"):
        losses.ctc(CTC_LABELS[0], CTC_LOGITS)


def test_ctc_fit_matches_keras():
    x = RNG.normal(size=(12, 6, 3)).astype(np.float32)
    y = RNG.integers(1, 4, size=(12, 3))
    y[::4, 2] = 0  # shorter label sequences, padded with the blank
    keras.utils.set_random_seed(5)
    models = []
    for lib in (gk, keras):
        model = lib.Sequential([lib.Input((6, 3)), lib.layers.Dense(4)])
        model.compile(optimizer="sgd", loss=lib.losses.CTC())
        models.append(model)
    models[0].set_weights(models[1].get_weights())
    histories = [m.fit(x, y, batch_size=4, epochs=3, shuffle=False, verbose=0).history["loss"]
                 for m in models]
    np.testing.assert_allclose(histories[0], histories[1], rtol=1e-4)
    assert histories[0][0] != histories[0][-1]
