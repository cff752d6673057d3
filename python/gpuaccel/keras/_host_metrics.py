"""The metrics ``fit``/``evaluate`` update in Python once per batch: ``keras.metrics.Metric``
subclasses written in Python, the built-in metrics that keep their state on the host (every one
but the six C++ ones, ``metrics._CppMetric``), and every metric of
``compile(weighted_metrics=[...])``.

A Python ``update_state`` assigns to its state variables in place, which the op recorder
refuses (a trace must not write), so it cannot be traced into the C++ step. This is the eager
fallback for metrics only, announced once: the batch's predictions come from one inference-mode
forward of the C++ predict step on the weights the step starts from (Keras measures the
training step's metrics on the same pre-update forward, in training mode), the metrics update
on them in Python, and then the C++ train or test step runs as usual.

``HostMetricsTrainer`` answers the calls the epoch loop makes on ``_C.Trainer``
(``train_step``, ``test_step``, ``reset_metrics``, ``results``), like ``_python_step``'s."""
import warnings

import numpy as np

from .._tensor import Tensor
from . import metrics as metrics_module

_warned = set()


def is_host_metric(metric):
    """Whether ``metric`` runs in Python (not one of the C++ built-ins)."""
    return not isinstance(metric, metrics_module._CppMetric)


def compile_weighted(identifiers, loss, unweighted_names):
    """``compile(weighted_metrics=...)`` as metric objects, named as Keras 3 names them: a name
    an unweighted metric already has becomes ``weighted_<name>``."""
    out = []
    taken = set(unweighted_names)
    for identifier in identifiers:
        metric = metrics_module.get(identifier, loss)
        name = metric.name if metric.name not in taken else f"weighted_{metric.name}"
        if isinstance(metric, metrics_module._CppMetric):
            metric = metrics_module._WeightedMean(metric, name)
        elif name != metric.name:
            metric.name = name
        taken.add(name)
        out.append(metric)
    return out


def _warn_once(model, metrics):
    key = (type(model), tuple(type(m) for m in metrics))
    if key not in _warned:
        _warned.add(key)
        names = ", ".join(repr(m.name) for m in metrics)
        warnings.warn(f"gpuaccel: the metrics {names} update in Python on every batch (a "
                      f"Python update_state assigns its state in place, the built-ins other "
                      f"than accuracy/MSE/MAE keep their state on the host, and weighted "
                      f"metrics are weighed on the host), so each batch also runs one "
                      f"inference-mode forward for their predictions; the rest of the step "
                      f"stays in C++", RuntimeWarning, stacklevel=4)


def log_value(value):
    """A metric's result for the logs: a float, or an array for a per-threshold or per-class
    result (Recall(thresholds=[...]), F1Score()), as Keras logs it."""
    if isinstance(value, Tensor):
        value = value.numpy()
    value = np.asarray(value)
    return float(value) if value.ndim == 0 else value


class HostMetricsTrainer:
    """The C++ trainer's step, preceded by the Python metrics' update on the batch."""

    def __init__(self, model, cpp_trainer):
        self.model = model
        self._cpp = cpp_trainer
        self._unweighted = [m for m in model.compiled_metrics if is_host_metric(m)]
        self._weighted = list(model._weighted_metrics)
        _warn_once(model, self._unweighted + self._weighted)

    @property
    def host_reads(self):
        return self._cpp.host_reads

    def _update(self, xs, y, sample_weight):
        y_pred = self.model._predictor().predict_step(xs)[0]
        for metric in self._unweighted:
            metric.update_state(y, y_pred)
        for metric in self._weighted:
            metric.update_state(y, y_pred, sample_weight)

    def train_step(self, xs, y, sample_weight=None):
        self._update(xs, y, sample_weight)
        return self._cpp.train_step(xs, y, *([] if sample_weight is None else [sample_weight]))

    def test_step(self, xs, y, sample_weight=None):
        self._update(xs, y, sample_weight)
        return self._cpp.test_step(xs, y, *([] if sample_weight is None else [sample_weight]))

    def reset_metrics(self):
        self._cpp.reset_metrics()
        for metric in self._unweighted + self._weighted:
            metric.reset_state()

    def results(self):
        """The logs in Keras's order: loss, the compiled metrics, then the weighted ones."""
        values = dict(self._cpp.results())
        for metric in self._unweighted + self._weighted:
            values[metric.name] = log_value(metric.result())
        return [(name, values[name]) for name in self.model.metrics_names if name in values]
