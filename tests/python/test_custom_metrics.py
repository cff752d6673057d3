"""keras.metrics.Metric subclasses written in Python (the Keras guides' BinaryTruePositives,
with add_variable/add_weight state) and compile(weighted_metrics=[...]) give fit's history,
evaluate and the callbacks' logs the numbers real Keras gives with the same weights and
inputs. Their update_state runs in Python once per batch (the eager fallback for metrics,
announced once); the rest of the step stays in C++."""
import warnings

import numpy as np
import pytest

import gpuaccel as gt
from gpuaccel import keras as gk

keras = pytest.importorskip("keras")
pytest.importorskip("tensorflow")


def ours_ops():
    """The ops a metric needs, spelled with gpuaccel's top-level functions."""
    return dict(cast=gt.cast, greater=gt.greater, equal=gt.equal, sum=gt.reduce_sum,
                multiply=gt.multiply, reshape=gt.reshape, argmax=gt.argmax)


def keras_ops():
    ops = keras.ops
    return dict(cast=ops.cast, greater=ops.greater, equal=ops.equal, sum=ops.sum,
                multiply=ops.multiply, reshape=ops.reshape, argmax=ops.argmax)


def guide_metrics(lib, ops, result_copies=False):
    """The Keras guide's metrics, written against `lib` (gpuaccel.keras or keras).
    ``result_copies``: BinaryTruePositives.result() returns a new tensor rather than its state
    variable. Keras's logs keep the variable itself, so with validation data a training log
    reads the variable after the validation pass reset and refilled it (the training value is
    lost); gpuaccel's logs hold the value at the epoch's end. Tests that validate compare the
    copy, which both report alike."""

    class BinaryTruePositives(lib.metrics.Metric):
        def __init__(self, name="binary_true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_variable(shape=(), initializer="zeros",
                                                    name="true_positives")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_true = ops["cast"](ops["greater"](y_true, 0.5), "float32")
            y_pred = ops["cast"](ops["greater"](y_pred, 0.5), "float32")
            values = ops["multiply"](y_true, y_pred)
            if sample_weight is not None:
                weight = ops["reshape"](ops["cast"](sample_weight, "float32"), (-1, 1))
                values = ops["multiply"](values, weight)
            self.true_positives.assign(self.true_positives + ops["sum"](values))

        def result(self):
            return self.true_positives + 0.0 if result_copies else self.true_positives

    class CategoricalTruePositives(lib.metrics.Metric):  # add_weight, own reset_state
        def __init__(self, name="categorical_true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_weight(name="ctp", initializer="zeros")
            self.batches = self.add_weight(name="batches", initializer="zeros")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_pred = ops["reshape"](ops["argmax"](y_pred, axis=1), (-1, 1))
            values = ops["cast"](ops["equal"](ops["cast"](y_true, "int32"),
                                              ops["cast"](y_pred, "int32")), "float32")
            if sample_weight is not None:
                values = ops["multiply"](values, ops["reshape"](
                    ops["cast"](sample_weight, "float32"), (-1, 1)))
            self.true_positives.assign_add(ops["sum"](values))
            self.batches.assign_add(1.0)

        def result(self):
            return self.true_positives / self.batches

        def reset_state(self):
            self.true_positives.assign(0.0)
            self.batches.assign(0.0)

    return BinaryTruePositives, CategoricalTruePositives


def binary_data(n=22, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    y = (rng.random((n, 1)) > 0.5).astype(np.float32)
    return x, y, rng.random(n).astype(np.float32) * 2


def categorical_data(n=26, seed=1):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 4)).astype(np.float32)
    return x, rng.integers(0, 3, size=(n, 1)).astype(np.int64), rng.random(n).astype(np.float32)


def twins(units, activation, compile_args, result_copies=False):
    """The same model in gpuaccel and Keras, same weights, compiled with the arguments that
    `compile_args(lib, metrics)` makes (Keras's initial weights from a fixed seed)."""
    keras.utils.set_random_seed(0)
    models = []
    for lib, ops in ((gk, ours_ops()), (keras, keras_ops())):
        model = lib.Sequential([lib.Input((4,)), lib.layers.Dense(6, activation="relu"),
                                lib.layers.Dense(units, activation=activation)])
        model.compile(**compile_args(lib, guide_metrics(lib, ops, result_copies)))
        models.append(model)
    models[0].set_weights(models[1].get_weights())
    return models


def assert_logs_close(ours, theirs):
    assert sorted(ours) == sorted(theirs)
    for name in theirs:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=2e-5, atol=2e-6, err_msg=name)


class LogsRecorder:
    """A callback keeping every epoch's and test batch's logs (in both libraries)."""

    @staticmethod
    def make(lib):
        class Recorder(lib.callbacks.Callback):
            def __init__(self):
                super().__init__()
                self.epochs, self.test_batches = [], []

            def on_epoch_end(self, epoch, logs=None):
                self.epochs.append(dict(logs))

            def on_test_batch_end(self, batch, logs=None):
                self.test_batches.append({k: float(v) for k, v in logs.items()})
        return Recorder()


def fit_both(models, x, y, **kwargs):
    recorders = [LogsRecorder.make(gk), LogsRecorder.make(keras)]
    histories = [m.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                       callbacks=[r], **kwargs).history
                 for m, r in zip(models, recorders)]
    return histories, recorders


def test_python_metric_subclasses_match_keras_in_fit_evaluate_and_callbacks():
    ours, theirs = twins(1, "sigmoid", lambda lib, m: dict(
        optimizer="sgd", loss="binary_crossentropy",
        metrics=[m[0](), "accuracy", m[1](name="cat_tp")]), result_copies=True)
    x, y, _ = binary_data()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (h_ours, h_theirs), (r_ours, r_theirs) = fit_both([ours, theirs], x, y,
                                                          validation_split=0.25)
    fallback = [w for w in caught if "update in Python on every batch" in str(w.message)]
    assert len(fallback) == 1 and "'binary_true_positives'" in str(fallback[0].message)
    assert sorted(h_ours) == sorted(h_theirs)
    for name in h_theirs:
        np.testing.assert_allclose(h_ours[name], h_theirs[name], rtol=2e-5, atol=2e-6,
                                   err_msg=name)
    assert h_ours["binary_true_positives"][0] > 0  # the metric saw positives: not trivially 0
    for logs_ours, logs_theirs in zip(r_ours.epochs, r_theirs.epochs):
        assert_logs_close(logs_ours, logs_theirs)
    assert_logs_close(ours.evaluate(x, y, verbose=0, return_dict=True),
                      theirs.evaluate(x, y, verbose=0, return_dict=True))
    # evaluate's list: loss, then the metrics in compile order (as Keras 3 lists them)
    values = ours.evaluate(x, y, verbose=0)
    expected = theirs.evaluate(x, y, verbose=0, return_dict=True)
    np.testing.assert_allclose(values, [expected[k] for k in (
        "loss", "binary_true_positives", "accuracy", "cat_tp")], rtol=2e-5, atol=2e-6)


def test_a_result_that_is_the_state_variable_logs_its_epoch_end_value():
    """The guide's verbatim result() (the variable itself) logs what the copy logs in gpuaccel,
    with validation too (Keras would log the validation pass's count there)."""
    x, y, _ = binary_data()
    histories, weights = [], None
    for result_copies in (False, True):
        model = twins(1, "sigmoid", lambda lib, m: dict(
            optimizer="sgd", loss="binary_crossentropy", metrics=[m[0]()]), result_copies)[0]
        weights = weights or model.get_weights()
        model.set_weights(weights)
        histories.append(model.fit(x, y, batch_size=8, epochs=2, shuffle=False, verbose=0,
                                   validation_split=0.25).history)
    assert histories[0] == histories[1]
    assert histories[0]["binary_true_positives"] != histories[0]["val_binary_true_positives"]


def test_per_batch_logs_and_state_reset_between_epochs_and_evaluations():
    ours, theirs = twins(3, "softmax", lambda lib, m: dict(
        optimizer="adam", loss="sparse_categorical_crossentropy", metrics=[m[1]()]))
    x, y, _ = categorical_data()
    recorders = [LogsRecorder.make(gk), LogsRecorder.make(keras)]
    for model, recorder in zip((ours, theirs), recorders):
        model.evaluate(x, y, batch_size=8, verbose=0, callbacks=[recorder])
        model.evaluate(x, y, batch_size=8, verbose=0, callbacks=[recorder])  # reset between
    assert len(recorders[0].test_batches) == 8
    for logs_ours, logs_theirs in zip(recorders[0].test_batches, recorders[1].test_batches):
        assert_logs_close(logs_ours, logs_theirs)
    (h_ours, h_theirs), _ = fit_both([ours, theirs], x, y)
    for name in h_theirs:
        np.testing.assert_allclose(h_ours[name], h_theirs[name], rtol=2e-5, atol=2e-6)
    metric = ours.metrics[-1].metrics[-1]  # Keras 3: [loss tracker, CompileMetrics]
    metric.reset_state()
    assert float(metric.true_positives.numpy()) == 0.0


def test_weighted_metrics_match_keras_with_sample_weight_and_class_weight():
    def compile_args(lib, m):
        return dict(optimizer="sgd", loss="binary_crossentropy",
                    metrics=["accuracy", m[0]()],
                    weighted_metrics=["accuracy", m[0](name="weighted_tp"), "mse"])
    x, y, w = binary_data()
    ours, theirs = twins(1, "sigmoid", compile_args)
    assert ours.metrics_names[1:] == ["accuracy", "binary_true_positives", "weighted_accuracy",
                                      "weighted_tp", "mse"]
    (h_ours, h_theirs), _ = fit_both([ours, theirs], x, y, sample_weight=w)
    assert sorted(h_ours) == sorted(h_theirs)
    for name in h_theirs:
        np.testing.assert_allclose(h_ours[name], h_theirs[name], rtol=2e-5, atol=2e-6,
                                   err_msg=name)
    assert h_ours["weighted_accuracy"] != h_ours["accuracy"]  # the weights did reach it
    for kwargs in ({}, {"sample_weight": w}):
        assert_logs_close(ours.evaluate(x, y, verbose=0, return_dict=True, **kwargs),
                          theirs.evaluate(x, y, verbose=0, return_dict=True, **kwargs))
    ours, theirs = twins(1, "sigmoid", compile_args)
    (h_ours, h_theirs), _ = fit_both([ours, theirs], x, y, class_weight={0: 0.5, 1: 2.0})
    for name in h_theirs:
        np.testing.assert_allclose(h_ours[name], h_theirs[name], rtol=2e-5, atol=2e-6,
                                   err_msg=name)


def test_metric_called_directly_and_its_config_as_in_keras():
    for lib, ops in ((gk, ours_ops()), (keras, keras_ops())):
        BinaryTruePositives, _ = guide_metrics(lib, ops)
        metric = BinaryTruePositives(name="tp")
        y_true = np.array([[1.0], [1.0], [0.0], [1.0]], np.float32)
        y_pred = np.array([[0.9], [0.2], [0.8], [0.7]], np.float32)
        first = float(np.asarray(metric(y_true, y_pred)))
        metric.update_state(y_true, y_pred, sample_weight=np.array([1, 2, 3, 0.5], np.float32))
        second = float(np.asarray(metric.result()))
        assert (first, second) == (2.0, 3.5), lib
        assert [tuple(v.shape) for v in metric.variables] == [()]
        metric.reset_state()
        assert float(np.asarray(metric.result())) == 0.0
        assert metric.get_config() == {"name": "tp", "dtype": "float32"}
        assert type(metric).from_config(metric.get_config()).name == "tp"


def test_default_name_and_forgotten_super_init_as_in_keras():
    class MyCountMetric(gk.metrics.Metric):
        def update_state(self, y_true, y_pred, sample_weight=None):
            pass

        def result(self):
            return 0.0

    assert MyCountMetric().name == "my_count_metric"

    class Forgot(gk.metrics.Metric):
        def __init__(self):
            self.total = self.add_variable(shape=(), initializer="zeros")

    with pytest.raises(RuntimeError, match=r"super\(\).__init__\(\)"):
        Forgot()


def guide_binary_true_positives(lib):
    """Keras 3's Metric docstring example, verbatim but for the import (bool casts and all)."""
    ops = lib.ops

    class BinaryTruePositives(lib.metrics.Metric):
        def __init__(self, name="binary_true_positives", **kwargs):
            super().__init__(name=name, **kwargs)
            self.true_positives = self.add_variable(shape=(), initializer="zeros",
                                                    name="true_positives")

        def update_state(self, y_true, y_pred, sample_weight=None):
            y_true = ops.cast(y_true, "bool")
            y_pred = ops.cast(y_pred, "bool")
            values = ops.logical_and(ops.equal(y_true, True), ops.equal(y_pred, True))
            values = ops.cast(values, self.dtype)
            if sample_weight is not None:
                sample_weight = ops.cast(sample_weight, self.dtype)
                sample_weight = ops.broadcast_to(sample_weight, ops.shape(values))
                values = ops.multiply(values, sample_weight)
            self.true_positives.assign(self.true_positives + ops.sum(values))

        def result(self):
            return self.true_positives
    return BinaryTruePositives


def test_the_keras_docstring_metric_written_with_keras_ops_matches_keras():
    x, y, _ = binary_data()
    y_pred = (x[:, :1] > 0).astype(np.float32)
    weights = np.linspace(0.5, 2.0, len(y)).astype(np.float32).reshape(-1, 1)
    values = []
    for lib in (keras, gk):
        metric = guide_binary_true_positives(lib)()
        metric.update_state(y, y_pred)
        metric.update_state(y, y_pred, sample_weight=weights)
        values.append(float(np.asarray(metric.result())))
    assert values[0] == pytest.approx(values[1]) and values[0] > 0
    models = twins(1, "relu", lambda lib, m: dict(
        optimizer="sgd", loss="mse", metrics=[guide_binary_true_positives(lib)()]))
    (h_ours, h_theirs), _ = fit_both(models, x, y)
    np.testing.assert_allclose(h_ours["binary_true_positives"],
                               h_theirs["binary_true_positives"])
    np.testing.assert_allclose(h_ours["loss"], h_theirs["loss"], rtol=2e-5)


def test_single_batch_calls_report_python_metrics_as_keras():
    ours, theirs = twins(3, "softmax", lambda lib, m: dict(
        optimizer="sgd", loss="sparse_categorical_crossentropy",
        metrics=[m[1]()], weighted_metrics=["accuracy"]))
    x, y, w = categorical_data()
    for model in (ours, theirs):
        model.train_on_batch(x, y)
    assert_logs_close(ours.test_on_batch(x, y, return_dict=True),
                      theirs.test_on_batch(x, y, return_dict=True))
