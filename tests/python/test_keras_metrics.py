"""Every keras.metrics class and function gpuaccel has, against real Keras on the same seeded
batches: several update_state calls with and without sample weights, result(), reset_state(),
the function forms, and compile/fit's logged values per family (mean, accuracy, confusion,
score and IoU metrics) against Keras's history."""
import re

import numpy as np
import pytest

from gpuaccel import keras as gk
from gpuaccel.keras import metrics

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")

N, C = 12, 4


def _softmax(z):
    e = np.exp(z - z.max(-1, keepdims=True))
    return (e / e.sum(-1, keepdims=True)).astype(np.float32)


def batch(kind, seed):
    """(y_true, y_pred, sample weights) of one seeded batch of the given kind."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, C, size=N)
    scores = rng.normal(size=(N, C)).astype(np.float32)
    weights = rng.uniform(0.0, 2.0, size=N).astype(np.float32)
    if kind == "regression":
        return rng.normal(size=(N, C)).astype(np.float32), scores, weights
    if kind == "positive":
        return (rng.uniform(0.01, 1, size=(N, C)).astype(np.float32),
                rng.uniform(0.01, 1, size=(N, C)).astype(np.float32), weights)
    if kind == "binary":
        return (rng.integers(0, 2, size=(N, C)).astype(np.float32),
                rng.uniform(size=(N, C)).astype(np.float32), weights)
    if kind == "binary_column":
        return (rng.integers(0, 2, size=(N, 1)).astype(np.float32),
                rng.uniform(size=(N, 1)).astype(np.float32), weights)
    if kind == "one_hot":
        return np.eye(C, dtype=np.float32)[labels], _softmax(scores), weights
    if kind == "sparse":
        return labels[:, None], _softmax(scores), weights
    if kind == "classes":  # integer labels against integer predictions (IoU)
        return labels, rng.integers(0, C, size=N), weights
    raise ValueError(kind)


# (gpuaccel metric, Keras metric, batch kind)
CASES = [
    (metrics.Accuracy(), keras.metrics.Accuracy(), "classes"),
    (metrics.BinaryAccuracy(threshold=0.3), keras.metrics.BinaryAccuracy(threshold=0.3),
     "binary"),
    (metrics.CategoricalAccuracy(), keras.metrics.CategoricalAccuracy(), "one_hot"),
    (metrics.SparseCategoricalAccuracy(), keras.metrics.SparseCategoricalAccuracy(), "sparse"),
    (metrics.TopKCategoricalAccuracy(k=2), keras.metrics.TopKCategoricalAccuracy(k=2),
     "one_hot"),
    (metrics.SparseTopKCategoricalAccuracy(2), keras.metrics.SparseTopKCategoricalAccuracy(2),
     "sparse"),
    (metrics.MeanSquaredError(), keras.metrics.MeanSquaredError(), "regression"),
    (metrics.MeanAbsoluteError(), keras.metrics.MeanAbsoluteError(), "regression"),
    (metrics.RootMeanSquaredError(), keras.metrics.RootMeanSquaredError(), "regression"),
    (metrics.MeanAbsolutePercentageError(), keras.metrics.MeanAbsolutePercentageError(),
     "regression"),
    (metrics.MeanSquaredLogarithmicError(), keras.metrics.MeanSquaredLogarithmicError(),
     "positive"),
    (metrics.LogCoshError(), keras.metrics.LogCoshError(), "regression"),
    (metrics.CosineSimilarity(), keras.metrics.CosineSimilarity(), "regression"),
    (metrics.CosineSimilarity(axis=0), keras.metrics.CosineSimilarity(axis=0), "regression"),
    (metrics.Hinge(), keras.metrics.Hinge(), "binary"),
    (metrics.SquaredHinge(), keras.metrics.SquaredHinge(), "binary"),
    (metrics.CategoricalHinge(), keras.metrics.CategoricalHinge(), "one_hot"),
    (metrics.KLDivergence(), keras.metrics.KLDivergence(), "positive"),
    (metrics.Poisson(), keras.metrics.Poisson(), "positive"),
    (metrics.BinaryCrossentropy(label_smoothing=0.1),
     keras.metrics.BinaryCrossentropy(label_smoothing=0.1), "binary"),
    (metrics.CategoricalCrossentropy(), keras.metrics.CategoricalCrossentropy(), "one_hot"),
    (metrics.SparseCategoricalCrossentropy(), keras.metrics.SparseCategoricalCrossentropy(),
     "sparse"),
    (metrics.PearsonCorrelation(), keras.metrics.PearsonCorrelation(), "regression"),
    (metrics.ConcordanceCorrelation(), keras.metrics.ConcordanceCorrelation(), "regression"),
    (metrics.TruePositives(), keras.metrics.TruePositives(), "binary"),
    (metrics.FalsePositives(thresholds=[0.2, 0.7]),
     keras.metrics.FalsePositives(thresholds=[0.2, 0.7]), "binary"),
    (metrics.TrueNegatives(0.4), keras.metrics.TrueNegatives(0.4), "binary_column"),
    (metrics.FalseNegatives(), keras.metrics.FalseNegatives(), "binary"),
    (metrics.Precision(), keras.metrics.Precision(), "binary"),
    (metrics.Precision(thresholds=[0.3, 0.6]), keras.metrics.Precision(thresholds=[0.3, 0.6]),
     "binary"),
    (metrics.Precision(top_k=2), keras.metrics.Precision(top_k=2), "binary"),
    (metrics.Precision(class_id=1), keras.metrics.Precision(class_id=1), "binary"),
    (metrics.Recall(), keras.metrics.Recall(), "binary_column"),
    (metrics.Recall(thresholds=0.2, class_id=2), keras.metrics.Recall(thresholds=0.2, class_id=2),
     "binary"),
    (metrics.Recall(top_k=1), keras.metrics.Recall(top_k=1), "binary"),
    (metrics.AUC(), keras.metrics.AUC(), "binary"),
    (metrics.AUC(num_thresholds=50, curve="PR"), keras.metrics.AUC(num_thresholds=50, curve="PR"),
     "binary"),
    (metrics.AUC(summation_method="minoring"), keras.metrics.AUC(summation_method="minoring"),
     "binary"),
    (metrics.AUC(curve="PR", summation_method="majoring"),
     keras.metrics.AUC(curve="PR", summation_method="majoring"), "binary"),
    (metrics.AUC(multi_label=True, label_weights=[1, 2, 0, 1]),
     keras.metrics.AUC(multi_label=True, label_weights=[1, 2, 0, 1]), "binary"),
    (metrics.AUC(thresholds=[0.25, 0.5, 0.75]), keras.metrics.AUC(thresholds=[0.25, 0.5, 0.75]),
     "binary"),
    (metrics.AUC(label_weights=[1, 2, 0, 1], from_logits=True),
     keras.metrics.AUC(label_weights=[1, 2, 0, 1], from_logits=True), "binary"),
    (metrics.PrecisionAtRecall(0.6), keras.metrics.PrecisionAtRecall(0.6), "binary"),
    (metrics.RecallAtPrecision(0.5, num_thresholds=20),
     keras.metrics.RecallAtPrecision(0.5, num_thresholds=20), "binary"),
    (metrics.SensitivityAtSpecificity(0.5, class_id=1),
     keras.metrics.SensitivityAtSpecificity(0.5, class_id=1), "binary"),
    (metrics.SpecificityAtSensitivity(sensitivity=0.7),
     keras.metrics.SpecificityAtSensitivity(sensitivity=0.7), "binary"),
    (metrics.F1Score(), keras.metrics.F1Score(), "one_hot"),
    (metrics.F1Score(average="micro", threshold=0.3),
     keras.metrics.F1Score(average="micro", threshold=0.3), "one_hot"),
    (metrics.FBetaScore(average="macro", beta=2.0),
     keras.metrics.FBetaScore(average="macro", beta=2.0), "one_hot"),
    (metrics.FBetaScore(average="weighted", beta=0.5, threshold=0.5),
     keras.metrics.FBetaScore(average="weighted", beta=0.5, threshold=0.5), "binary"),
    (metrics.R2Score(), keras.metrics.R2Score(), "regression"),
    (metrics.R2Score(class_aggregation="variance_weighted_average", num_regressors=2),
     keras.metrics.R2Score(class_aggregation="variance_weighted_average", num_regressors=2),
     "regression"),
    (metrics.R2Score(class_aggregation=None), keras.metrics.R2Score(class_aggregation=None),
     "regression"),
    (metrics.IoU(C, [0, 2]), keras.metrics.IoU(C, [0, 2]), "classes"),
    (metrics.MeanIoU(C, ignore_class=1), keras.metrics.MeanIoU(C, ignore_class=1), "classes"),
    (metrics.BinaryIoU([1], threshold=0.4), keras.metrics.BinaryIoU([1], threshold=0.4),
     "binary"),
    (metrics.OneHotIoU(C, [1, 3]), keras.metrics.OneHotIoU(C, [1, 3]), "one_hot"),
    (metrics.OneHotMeanIoU(C), keras.metrics.OneHotMeanIoU(C), "one_hot"),
]


def assert_close(ours, theirs, tol=2e-5):
    ours = np.asarray(ours.numpy() if hasattr(ours, "numpy") else ours, np.float64)
    theirs = np.asarray(theirs, np.float64)
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=tol, atol=tol * max(1.0, np.abs(theirs).max()))


@pytest.mark.parametrize("ours, theirs, kind", CASES,
                         ids=[f"{type(c[0]).__name__}{i}" for i, c in enumerate(CASES)])
def test_metrics_match_keras_over_batches_weights_and_reset(ours, theirs, kind):
    ours.reset_state()
    theirs.reset_state()
    for seed, weighted in ((1, False), (2, True), (3, False)):
        y_true, y_pred, weights = batch(kind, seed)
        weight = weights if weighted else None
        try:
            theirs.update_state(y_true, y_pred, sample_weight=weight)
        except (ValueError, tf.errors.InvalidArgumentError):  # per-column values (axis=0)
            with pytest.raises(ValueError, match="does not broadcast"):
                ours.update_state(y_true, y_pred, sample_weight=weight)
            continue
        ours.update_state(y_true, y_pred, sample_weight=weight)
        assert_close(ours.result(), theirs.result())
    assert ours.name == re.sub(r"_\d+$", "", theirs.name)  # Keras numbers a repeated name
    ours.reset_state()
    theirs.reset_state()
    assert_close(ours.result(), theirs.result())
    y_true, y_pred, _ = batch(kind, 4)  # a fresh start after the reset
    assert_close(ours(y_true, y_pred), theirs(y_true, y_pred))


def test_mean_and_sum_with_weights_of_several_shapes():
    values = np.arange(12, dtype=np.float32).reshape(4, 3)
    for weight in (None, np.array([1, 0, 2, 0.5], np.float32),
                   np.array([[1], [0], [2], [3]], np.float32),
                   np.linspace(0, 1, 12, dtype=np.float32).reshape(4, 3)):
        for ours, theirs in ((metrics.Mean(), keras.metrics.Mean()),
                             (metrics.Sum(), keras.metrics.Sum())):
            ours.update_state(values, sample_weight=weight)
            theirs.update_state(values, sample_weight=weight)
            ours.update_state(np.float32(5.0))
            theirs.update_state(np.float32(5.0))
            assert_close(ours.result(), theirs.result())
    wrapper = metrics.MeanMetricWrapper(metrics.mean_squared_error, name="w")
    theirs = keras.metrics.MeanMetricWrapper(keras.metrics.mean_squared_error, name="w")
    y_true, y_pred, weights = batch("regression", 5)
    wrapper.update_state(y_true, y_pred, weights)
    theirs.update_state(y_true, y_pred, weights)
    assert_close(wrapper.result(), theirs.result())
    with pytest.raises(ValueError, match="does not broadcast"):
        metrics.Mean().update_state(values, sample_weight=np.ones(3, np.float32))


FUNCTIONS = [
    (metrics.binary_accuracy, keras.metrics.binary_accuracy, "binary", {"threshold": 0.7}),
    (metrics.categorical_accuracy, keras.metrics.categorical_accuracy, "one_hot", {}),
    (metrics.sparse_categorical_accuracy, keras.metrics.sparse_categorical_accuracy, "sparse",
     {}),
    (metrics.top_k_categorical_accuracy, keras.metrics.top_k_categorical_accuracy, "one_hot",
     {"k": 3}),
    (metrics.sparse_top_k_categorical_accuracy, keras.metrics.sparse_top_k_categorical_accuracy,
     "sparse", {"k": 2}),
    (metrics.pearson_correlation, keras.metrics.pearson_correlation, "regression", {}),
    (metrics.concordance_correlation, keras.metrics.concordance_correlation, "regression",
     {"axis": 0}),
    (metrics.binary_crossentropy, keras.metrics.binary_crossentropy, "binary", {}),
    (metrics.binary_focal_crossentropy, keras.metrics.binary_focal_crossentropy, "binary", {}),
    (metrics.categorical_crossentropy, keras.metrics.categorical_crossentropy, "one_hot", {}),
    (metrics.categorical_focal_crossentropy, keras.metrics.categorical_focal_crossentropy,
     "one_hot", {}),
    (metrics.sparse_categorical_crossentropy, keras.metrics.sparse_categorical_crossentropy,
     "sparse", {}),
    (metrics.categorical_hinge, keras.metrics.categorical_hinge, "one_hot", {}),
    (metrics.hinge, keras.metrics.hinge, "binary", {}),
    (metrics.squared_hinge, keras.metrics.squared_hinge, "binary", {}),
    (metrics.huber, keras.metrics.huber, "regression", {}),
    (metrics.kl_divergence, keras.metrics.kl_divergence, "positive", {}),
    (metrics.log_cosh, keras.metrics.log_cosh, "regression", {}),
    (metrics.mean_absolute_error, keras.metrics.mean_absolute_error, "regression", {}),
    (metrics.mean_absolute_percentage_error, keras.metrics.mean_absolute_percentage_error,
     "regression", {}),
    (metrics.mean_squared_error, keras.metrics.mean_squared_error, "regression", {}),
    (metrics.mean_squared_logarithmic_error, keras.metrics.mean_squared_logarithmic_error,
     "positive", {}),
    (metrics.poisson, keras.metrics.poisson, "positive", {}),
]


@pytest.mark.parametrize("ours, theirs, kind, options", FUNCTIONS,
                         ids=[f[0].__name__ for f in FUNCTIONS])
def test_metric_functions_match_keras(ours, theirs, kind, options):
    y_true, y_pred, _ = batch(kind, 6)
    value = ours(y_true, y_pred, **options)
    assert value.dtype == "float32"
    assert_close(value, theirs(y_true, y_pred, **options))


def test_sparse_top_k_from_sorted_ids_and_the_accuracy_function():
    ids = np.array([[2, 0, 1], [1, 2, 0], [0, 1, 2]], np.float32)
    labels = np.array([0, 0, 0])
    assert_close(metrics.sparse_top_k_categorical_accuracy(labels, ids, k=2, from_sorted_ids=True),
                 keras.metrics.sparse_top_k_categorical_accuracy(labels, ids, k=2,
                                                                 from_sorted_ids=True))


def test_get_serialize_and_errors_as_keras():
    assert isinstance(metrics.get("AUC"), metrics.AUC)
    assert isinstance(metrics.get("mape"), metrics.MeanAbsolutePercentageError)
    assert metrics.get("logcosh").name == "logcosh"
    ours = metrics.serialize(metrics.Precision(thresholds=[0.3, 0.6], name="p"))
    theirs = keras.metrics.serialize(keras.metrics.Precision(thresholds=[0.3, 0.6], name="p"))
    assert ours["class_name"] == theirs["class_name"] == "Precision"
    back = metrics.deserialize(metrics.serialize(metrics.MeanIoU(3, name="miou")))
    assert isinstance(back, metrics.MeanIoU) and back.num_classes == 3 and back.name == "miou"
    with pytest.raises(ValueError, match="Could not interpret metric identifier: Nope "
                       r"\(an unknown metric class; known: \[.*'MeanIoU'"):
        metrics.deserialize({"class_name": "Nope", "config": {}})
    with pytest.raises(ValueError, match="Threshold values must be in \\[0, 1\\]"):
        metrics.Precision(thresholds=1.5)
    with pytest.raises(ValueError, match="Invalid AUC curve value"):
        metrics.AUC(curve="ROCK")
    with pytest.raises(ValueError, match="Invalid `average` argument value"):
        metrics.F1Score(average="mean")
    with pytest.raises(ValueError, match="out of range"):
        metrics.IoU(2, [0, 2])
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['kk'\\]"):
        metrics.TopKCategoricalAccuracy(kk=2)


def _twins(compile_for, units, activation, seed=0):
    keras.utils.set_random_seed(seed)
    models = []
    for lib in (gk, keras):
        model = lib.Sequential([lib.Input((5,)), lib.layers.Dense(8, activation="relu"),
                                lib.layers.Dense(units, activation=activation)])
        model.compile(optimizer="sgd", **compile_for(lib))
        models.append(model)
    models[0].set_weights(models[1].get_weights())
    return models


FIT_FAMILIES = {
    "mean": (1, None, "regression", lambda lib: dict(loss="mse", metrics=[
        lib.metrics.RootMeanSquaredError(), lib.metrics.LogCoshError(), "mape",
        lib.metrics.PearsonCorrelation()], weighted_metrics=[lib.metrics.Poisson()])),
    "accuracy": (C, "softmax", "one_hot", lambda lib: dict(
        loss="categorical_crossentropy",
        metrics=["accuracy", lib.metrics.TopKCategoricalAccuracy(k=2),
                 lib.metrics.CategoricalCrossentropy(), lib.metrics.CategoricalHinge()])),
    "confusion": (1, "sigmoid", "binary_column", lambda lib: dict(
        loss="binary_crossentropy",
        metrics=[lib.metrics.Precision(name="p"), lib.metrics.Recall(thresholds=[0.3, 0.6], name="r"),
                 lib.metrics.AUC(num_thresholds=30, name="auc"), lib.metrics.TruePositives(name="tp"),
                 lib.metrics.RecallAtPrecision(0.4, name="rp")],
        weighted_metrics=[lib.metrics.AUC(curve="PR", name="pr_auc")])),
    "score_and_iou": (C, "softmax", "one_hot", lambda lib: dict(
        loss="categorical_crossentropy",
        metrics=[lib.metrics.F1Score(average="macro"), lib.metrics.OneHotMeanIoU(C, name="miou"),
                 lib.metrics.R2Score()])),
}


@pytest.mark.parametrize("family", sorted(FIT_FAMILIES))
def test_compiled_metrics_log_what_keras_logs_in_fit_and_evaluate(family):
    units, activation, kind, compile_for = FIT_FAMILIES[family]
    rng = np.random.default_rng(9)
    x = rng.normal(size=(48, 5)).astype(np.float32)
    y_true, _, _ = batch(kind, 7)
    y = np.concatenate([batch(kind, s)[0] for s in range(7, 11)])
    y = y if units > 1 or y.ndim > 1 else y[:, None]
    y = y[:, :units] if kind == "regression" else y
    weights = rng.uniform(0.2, 2.0, size=48).astype(np.float32)
    ours, theirs = _twins(compile_for, units, activation)
    logs = [m.fit(x, y, batch_size=16, epochs=2, shuffle=False, verbose=0,
                  sample_weight=weights, validation_split=0.25).history for m in (ours, theirs)]
    assert sorted(logs[0]) == sorted(logs[1])
    for name in logs[1]:
        values = np.asarray(logs[1][name], np.float64).reshape(len(logs[1][name]), -1)
        np.testing.assert_allclose(np.asarray(logs[0][name], np.float64).reshape(values.shape),
                                   values, rtol=1e-4, atol=1e-5, err_msg=name)
    evaluated = [m.evaluate(x, y, verbose=0, return_dict=True) for m in (ours, theirs)]
    for name in evaluated[1]:
        np.testing.assert_allclose(np.asarray(evaluated[0][name], np.float64).ravel(),
                                   np.asarray(evaluated[1][name], np.float64).ravel(),
                                   rtol=1e-4, atol=1e-5, err_msg=name)
