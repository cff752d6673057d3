"""Keras's metrics whose state is per-class sums rather than a running mean: F1Score and
FBetaScore (per-class true/false positives and negatives) and R2Score (per-output sums of y,
y^2 and squared errors). Kept on the host in float64 like the confusion counts
(``_confusion_metrics.py``); fit updates them once per batch (``_host_metrics.py``)."""
import warnings

import numpy as np

from ._metric_base import HostStateMetric, aligned, host

_EPSILON = 1e-7


class FBetaScore(HostStateMetric):
    """``keras.metrics.FBetaScore``: (1 + beta^2) P R / (beta^2 P + R) per class, from
    predictions thresholded at ``threshold`` (None: each row's maximum is the positive);
    ``average`` None (per class), 'micro' (all classes pooled), 'macro' or 'weighted'."""

    def __init__(self, average=None, beta=1.0, threshold=None, name="fbeta_score", dtype=None):
        if average not in (None, "micro", "macro", "weighted"):
            raise ValueError(f"Invalid `average` argument value. Expected one of: {{None, "
                             f"'micro', 'macro', 'weighted'}}. Received: average={average}")
        if not isinstance(beta, float) or beta <= 0.0:
            raise ValueError(f"Invalid `beta` argument value. It should be a Python float "
                             f"greater than zero. Received: beta={beta}")
        if threshold is not None and not (isinstance(threshold, float) and 0 < threshold <= 1):
            raise ValueError(f"Invalid `threshold` argument value. It should be a Python "
                             f"float in the range ]0, 1]. Received: threshold={threshold}")
        self.average, self.beta, self.threshold = average, beta, threshold
        super().__init__(name=name, dtype=dtype)

    def _initial_state(self):
        return {"tp": 0.0, "fp": 0.0, "fn": 0.0, "support": 0.0}

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = host(y_true), host(y_pred)
        if y_pred.ndim != 2 or y_true.shape != y_pred.shape:
            raise ValueError(f"FBetaScore expects 2D inputs with shape (batch_size, "
                             f"output_dim), the same for y_true and y_pred. Received: "
                             f"y_true.shape={y_true.shape} y_pred.shape={y_pred.shape}")
        if self.threshold is None:
            predicted = (y_pred >= y_pred.max(-1, keepdims=True)) & (np.abs(y_pred) > 1e-9)
        else:
            predicted = y_pred > self.threshold
        predicted = predicted.astype(np.float64)
        weight = 1.0 if sample_weight is None else host(sample_weight)[:, None]
        axis = None if self.average == "micro" else 0
        for key, values in (("tp", predicted * y_true), ("fp", predicted * (1 - y_true)),
                            ("fn", (1 - predicted) * y_true), ("support", y_true)):
            self._state[key] = self._state[key] + np.sum(values * weight, axis=axis)

    def result(self):
        tp, fp, fn = (np.asarray(self._state[k], np.float64) for k in ("tp", "fp", "fn"))
        precision = tp / (tp + fp + _EPSILON)
        recall = tp / (tp + fn + _EPSILON)
        beta2 = self.beta ** 2
        score = precision * recall / (beta2 * precision + recall + _EPSILON) * (1 + beta2)
        if self.average == "weighted":
            support = np.asarray(self._state["support"], np.float64)
            score = np.sum(score * support / (np.sum(support) + _EPSILON))
        elif self.average is not None:
            score = np.mean(score)
        return self._result(score)

    def get_config(self):
        return {**super().get_config(), "average": self.average, "beta": self.beta,
                "threshold": self.threshold}


class F1Score(FBetaScore):
    """``keras.metrics.F1Score``: FBetaScore with beta = 1."""

    def __init__(self, average=None, threshold=None, name="f1_score", dtype=None):
        super().__init__(average=average, beta=1.0, threshold=threshold, name=name, dtype=dtype)

    def get_config(self):
        config = super().get_config()
        del config["beta"]
        return config


class R2Score(HostStateMetric):
    """``keras.metrics.R2Score``: 1 - SSE / SST per output, aggregated 'uniform_average',
    'variance_weighted_average' or not at all (None); ``num_regressors`` adjusts it."""

    def __init__(self, class_aggregation="uniform_average", num_regressors=0, name="r2_score",
                 dtype=None):
        if class_aggregation not in (None, "uniform_average", "variance_weighted_average"):
            raise ValueError(f"Invalid value for argument `class_aggregation`. Expected one of "
                             f"(None, 'uniform_average', 'variance_weighted_average'). "
                             f"Received: class_aggregation={class_aggregation}")
        if num_regressors < 0:
            raise ValueError(f"Invalid value for argument `num_regressors`. Expected a value "
                             f">= 0. Received: num_regressors={num_regressors}")
        self.class_aggregation, self.num_regressors = class_aggregation, num_regressors
        super().__init__(name=name, dtype=dtype)

    def _initial_state(self):
        return {"sum": 0.0, "squared_sum": 0.0, "total_mse": 0.0, "count": 0.0,
                "num_samples": 0}

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = aligned(host(y_true), host(y_pred))
        if y_true.ndim != 2:
            raise ValueError(f"R2Score expects 2D inputs with shape (batch_size, output_dim). "
                             f"Received input shape: y_true.shape={y_true.shape}")
        weight = np.ones(1) if sample_weight is None else host(sample_weight)
        weight = np.broadcast_to(weight[:, None] if weight.ndim == 1 else weight, y_true.shape)
        state = self._state
        state["sum"] = state["sum"] + np.sum(y_true * weight, axis=0)
        state["squared_sum"] = state["squared_sum"] + np.sum(y_true * y_true * weight, axis=0)
        state["total_mse"] = state["total_mse"] + np.sum((y_true - y_pred) ** 2 * weight, axis=0)
        state["count"] = state["count"] + np.sum(weight, axis=0)
        state["num_samples"] += y_true.size

    def result(self):
        state = self._state
        with np.errstate(divide="ignore", invalid="ignore"):  # nothing seen yet: NaN, as Keras
            mean = state["sum"] / state["count"]
            total = state["squared_sum"] - state["sum"] * mean
            raw = 1 - state["total_mse"] / total
        raw = np.where(np.isinf(raw), 0.0, raw)
        if self.class_aggregation == "uniform_average":
            score = np.mean(raw)
        elif self.class_aggregation == "variance_weighted_average":
            score = np.sum(total * raw) / np.sum(total)
        else:
            score = raw
        n, p = state["num_samples"], self.num_regressors
        if p and p > n - 1:
            warnings.warn("More independent predictors than datapoints in adjusted R2 score. "
                          "Falling back to standard R2 score.", stacklevel=2)
        elif p and p == n - 1:
            warnings.warn("Division by zero in Adjusted R2 score. Falling back to standard R2 "
                          "score.", stacklevel=2)
        elif p:
            score = 1 - (1 - score) * (n - 1) / (n - p - 1)
        return self._result(score)

    def get_config(self):
        return {**super().get_config(), "class_aggregation": self.class_aggregation,
                "num_regressors": self.num_regressors}
