"""keras.losses and keras.metrics against real Keras (TensorFlow backend) on the same arrays,
including saturated probabilities (where Keras clips to 1e-7), label shapes (N,) and (N, 1),
and the errors for mismatched shapes and unknown names."""
import numpy as np
import pytest

import gpuaccel
from gpuaccel.keras import losses, metrics

keras = pytest.importorskip("keras")

RNG = np.random.default_rng(7)


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _close(ours, theirs, tol=1e-6):
    ours = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * max(1.0, np.abs(theirs).max()))


LOGITS = RNG.normal(size=(16, 5)).astype(np.float32) * 3
LABELS = RNG.integers(0, 5, size=16)
ONE_HOT = np.eye(5, dtype=np.float32)[LABELS]


@pytest.mark.parametrize("from_logits", [True, False])
@pytest.mark.parametrize("label_shape", ["flat", "column"])
def test_sparse_categorical_crossentropy_matches_keras(from_logits, label_shape):
    pred = LOGITS if from_logits else _softmax(LOGITS)
    labels = LABELS if label_shape == "flat" else LABELS[:, None]
    ours = losses.SparseCategoricalCrossentropy(from_logits=from_logits)(labels, pred)
    theirs = keras.losses.SparseCategoricalCrossentropy(from_logits=from_logits)(labels, pred)
    _close(ours, theirs)


def test_crossentropy_clips_saturated_probabilities_like_keras():
    pred = np.zeros((4, 3), np.float32)
    pred[:, 0] = 1.0  # the true class of two rows has probability exactly 0
    labels = np.array([0, 1, 2, 0])
    ours = losses.SparseCategoricalCrossentropy()(labels, pred)
    theirs = keras.losses.SparseCategoricalCrossentropy()(labels, pred)
    assert np.isfinite(ours.numpy())
    _close(ours, theirs, 1e-5)


@pytest.mark.parametrize("from_logits", [True, False])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_categorical_crossentropy_matches_keras(from_logits, smoothing):
    pred = LOGITS if from_logits else _softmax(LOGITS)
    ours = losses.CategoricalCrossentropy(from_logits=from_logits, label_smoothing=smoothing)
    theirs = keras.losses.CategoricalCrossentropy(from_logits=from_logits,
                                                  label_smoothing=smoothing)
    _close(ours(ONE_HOT, pred), theirs(ONE_HOT, pred))


@pytest.mark.parametrize("from_logits", [True, False])
@pytest.mark.parametrize("shape", [(12, 1), (12, 3)])
def test_binary_crossentropy_matches_keras(from_logits, shape):
    z = RNG.normal(size=shape).astype(np.float32) * 4
    pred = z if from_logits else (1 / (1 + np.exp(-z))).astype(np.float32)
    labels = RNG.integers(0, 2, size=shape).astype(np.float32)
    ours = losses.BinaryCrossentropy(from_logits=from_logits)(labels, pred)
    theirs = keras.losses.BinaryCrossentropy(from_logits=from_logits)(labels, pred)
    _close(ours, theirs, 1e-5)


def test_mean_squared_error_and_reductions():
    a = RNG.normal(size=(6, 4)).astype(np.float32)
    b = RNG.normal(size=(6, 4)).astype(np.float32)
    _close(losses.MeanSquaredError()(a, b), keras.losses.MeanSquaredError()(a, b))
    per_example = losses.MeanSquaredError(reduction="none")(a, b)
    _close(per_example, ((a - b) ** 2).mean(-1))
    _close(losses.MeanSquaredError(reduction="sum")(a, b), ((a - b) ** 2).mean(-1).sum(), 1e-5)
    _close(losses.mean_squared_error(a, b), keras.losses.mean_squared_error(a, b))


def test_loss_gradient_flows_to_predictions():
    logits = gpuaccel.tensor(LOGITS, requires_grad=True)
    loss = losses.SparseCategoricalCrossentropy(from_logits=True)(LABELS, logits)
    loss.backward()
    expected = (_softmax(LOGITS.astype(np.float64)) - np.eye(5)[LABELS]) / len(LABELS)
    _close(logits.grad, expected, 1e-5)


def test_loss_errors():
    with pytest.raises(ValueError, match="do not fit predictions"):
        losses.SparseCategoricalCrossentropy()(np.zeros((4, 2)), np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="must be in \\[0, 2\\)|labels"):
        losses.SparseCategoricalCrossentropy(from_logits=True)(np.array([0, 5]),
                                                               np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="do not match predictions"):
        losses.CategoricalCrossentropy()(np.ones((4, 2)), np.ones((4, 3), np.float32))
    with pytest.raises(ValueError, match="Could not interpret loss identifier"):
        losses.get("hinge_of_doom")
    with pytest.raises(ValueError, match="Could not interpret loss identifier"):
        losses.get(3)
    assert isinstance(losses.get(lambda y, p: p), losses.LossFunctionWrapper)
    with pytest.raises(ValueError, match="reduction"):
        losses.MeanSquaredError(reduction="average")
    assert isinstance(losses.get("mse"), losses.MeanSquaredError)
    assert losses.get("sparse_categorical_crossentropy").from_logits is False


def test_accuracy_metrics_match_keras_over_batches():
    ours = metrics.SparseCategoricalAccuracy()
    theirs = keras.metrics.SparseCategoricalAccuracy()
    for _ in range(3):  # running mean over uneven batches
        n = int(RNG.integers(3, 9))
        pred = RNG.normal(size=(n, 4)).astype(np.float32)
        labels = RNG.integers(0, 4, size=(n, 1))
        ours.update_state(labels, pred)
        theirs.update_state(labels, pred)
    _close(ours.result(), theirs.result())
    ours.reset_state()
    assert float(ours.result().numpy()) == 0.0

    pred = _softmax(LOGITS)
    for cls, args in [(metrics.CategoricalAccuracy, (ONE_HOT, pred)),
                      (metrics.MeanSquaredError, (ONE_HOT, pred)),
                      (metrics.MeanAbsoluteError, (ONE_HOT, pred))]:
        mine, ref = cls(), getattr(keras.metrics, cls.__name__)()
        mine.update_state(*args)
        ref.update_state(*args)
        _close(mine.result(), ref.result(), 1e-6)
    probs = RNG.uniform(size=(10, 1)).astype(np.float32)
    labels = RNG.integers(0, 2, size=(10, 1)).astype(np.float32)
    mine, ref = metrics.BinaryAccuracy(threshold=0.3), keras.metrics.BinaryAccuracy(threshold=0.3)
    mine.update_state(labels, probs)
    ref.update_state(labels, probs)
    _close(mine.result(), ref.result())


def test_accuracy_string_follows_the_loss_as_in_keras():
    sparse = metrics.get("accuracy", losses.SparseCategoricalCrossentropy())
    assert isinstance(sparse, metrics.SparseCategoricalAccuracy) and sparse.name == "accuracy"
    assert isinstance(metrics.get("acc", losses.CategoricalCrossentropy()),
                      metrics.CategoricalAccuracy)
    assert isinstance(metrics.get("accuracy", losses.BinaryCrossentropy()), metrics.BinaryAccuracy)
    assert isinstance(metrics.get("accuracy", losses.MeanSquaredError()), metrics.Accuracy)
    with pytest.raises(ValueError, match="Could not interpret metric identifier"):
        metrics.get("f1_of_doom")
