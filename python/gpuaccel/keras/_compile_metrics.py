"""Keras 3's CompileMetrics: ``model.metrics`` lists it after the loss tracker, named
'compile_metrics', holding what ``compile(metrics=..., weighted_metrics=...)`` made. The Keras
guides' custom ``train_step`` calls ``metric.update_state(y, y_pred,
sample_weight=sample_weight)`` on every metric of ``self.metrics``: through this container the
``metrics=`` ones get the predictions unweighted and the ``weighted_metrics=`` ones the weights,
Keras's rule (only weighted_metrics see sample_weight). ``result()`` is a dict by metric name,
which fit's logs flatten into one level, as Keras's."""
from ._metric_base import Metric


class CompileMetrics(Metric):
    def __init__(self, unweighted, weighted):
        super().__init__(name="compile_metrics")
        self._unweighted, self._weighted = list(unweighted), list(weighted)

    @property
    def metrics(self):
        """The metric objects, compile's ``metrics`` then ``weighted_metrics`` (Keras's order)."""
        return self._unweighted + self._weighted

    @property
    def variables(self):
        return [v for metric in self.metrics for v in metric.variables]

    def update_state(self, y_true, y_pred, sample_weight=None):
        for metric in self._unweighted:
            metric.update_state(y_true, y_pred)
        for metric in self._weighted:
            metric.update_state(y_true, y_pred, sample_weight=sample_weight)

    def result(self):
        return {metric.name: metric.result() for metric in self.metrics}

    def reset_state(self):
        for metric in self.metrics:
            metric.reset_state()


def container_for(model):
    """The model's CompileMetrics over its current compiled lists (the same object while the
    lists are unchanged, so ``model.metrics`` is stable between calls), or None without any."""
    unweighted, weighted = list(model.compiled_metrics), list(model._weighted_metrics)
    if not unweighted and not weighted:
        return None
    key = tuple(map(id, unweighted)), tuple(map(id, weighted))
    cached = model.__dict__.get("_compile_metrics_container")
    if cached is None or cached[0] != key:
        cached = (key, CompileMetrics(unweighted, weighted))
        model.__dict__["_compile_metrics_container"] = cached
    return cached[1]
