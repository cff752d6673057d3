"""Keras's confusion-matrix metrics: TruePositives/FalsePositives/TrueNegatives/FalseNegatives,
Precision, Recall, AUC and the "X at Y" metrics (PrecisionAtRecall, SensitivityAtSpecificity...).

They all accumulate the same four counts per threshold (a prediction is positive when it is
strictly above the threshold, a label when it is non-zero; weights broadcast to the
predictions), so one ``ConfusionCounts`` base keeps them on the host in float64 and each metric
is its ``result()``. The counts are comparisons and sums, nothing to differentiate, and they
update in Python once per batch inside fit (``_host_metrics.py``), as Keras's do per step."""
import numpy as np

from ._metric_base import HostStateMetric, aligned, host

_EPSILON = 1e-7
_COUNTS = ("tp", "fp", "tn", "fn")


def _divide_no_nan(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.where(b == 0, 0.0, a / np.where(b == 0, 1.0, b))


def _thresholds(thresholds, default=0.5):
    """Keras's parse_init_thresholds: a list of floats in [0, 1]."""
    values = [default] if thresholds is None else (
        list(thresholds) if isinstance(thresholds, (list, tuple, np.ndarray)) else [thresholds])
    for value in values:
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"Threshold values must be in [0, 1]. Received: {values}")
    return [float(v) for v in values]


def _top_k_only(y_pred, k):
    """Keras's _filter_top_k: all but each row's k largest set to -1e10."""
    keep = np.argsort(-y_pred, axis=-1, kind="stable")[..., :k]
    filtered = np.full_like(y_pred, -1e10)
    np.put_along_axis(filtered, keep, np.take_along_axis(y_pred, keep, -1), -1)
    return filtered


class ConfusionCounts(HostStateMetric):
    """The four counts at each of ``self.thresholds``; ``multi_label`` keeps one column per
    label (AUC's option), else every prediction is one more example."""

    def __init__(self, thresholds, name=None, dtype=None, top_k=None, class_id=None,
                 multi_label=False):
        self.thresholds = list(thresholds)
        self.top_k, self.class_id, self.multi_label = top_k, class_id, multi_label
        super().__init__(name=name, dtype=dtype)

    def _initial_state(self):
        return {key: 0.0 for key in _COUNTS}

    def _predictions(self, y_pred):
        return y_pred

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_pred, y_true = aligned(self._predictions(host(y_pred)), host(y_true))
        if sample_weight is not None:  # Keras: a last axis added, dropped again where y_true
            weight = host(sample_weight)[..., None]  # has one axis fewer
            if weight.ndim == y_true.ndim + 1:
                weight = weight[..., 0]
        if self.top_k is not None:
            y_pred = _top_k_only(y_pred, self.top_k)
        if self.class_id is not None:
            if y_pred.ndim == 1:
                raise ValueError(f"When class_id is provided, y_pred must be a 2D array with "
                                 f"shape (num_samples, num_classes), found shape: "
                                 f"{y_pred.shape}")
            y_true, y_pred = y_true[..., self.class_id, None], y_pred[..., self.class_id, None]
        try:
            weight = np.ones_like(y_pred) if sample_weight is None else \
                np.broadcast_to(weight, y_pred.shape)
            label = np.broadcast_to(y_true != 0, y_pred.shape)
        except ValueError as error:
            raise ValueError(f"y_true {y_true.shape} and sample_weight must broadcast to "
                             f"y_pred's shape {y_pred.shape}") from error
        if self.multi_label:  # (examples, labels)
            y_pred, label, weight = (a.reshape(a.shape[0], -1) for a in (y_pred, label, weight))
        else:
            y_pred, label, weight = (a.reshape(-1, 1) for a in (y_pred, label, weight))
        above = y_pred[None] > np.asarray(self.thresholds)[:, None, None]  # (T, examples, L)
        label, weight = label[None], weight[None]
        for key, hit in (("tp", above & label), ("fp", above & ~label),
                         ("tn", ~above & ~label), ("fn", ~above & label)):
            self._state[key] = self._state[key] + np.sum(hit * weight, axis=1)

    def _counts(self):
        """(tp, fp, tn, fn), each (thresholds,) or (thresholds, labels) with multi_label."""
        counts = []
        for key in _COUNTS:
            value = np.asarray(self._state[key], np.float64)
            if value.ndim == 0:  # nothing seen yet
                value = np.zeros((len(self.thresholds), 1))
            counts.append(value if self.multi_label else value[:, 0])
        return counts

    def _single(self, values):
        values = np.asarray(values)
        return self._result(values[0] if len(self.thresholds) == 1 else values)


def _counter(class_name, index, default_name):
    def __init__(self, thresholds=None, name=None, dtype=None):
        ConfusionCounts.__init__(self, _thresholds(thresholds), name=name or default_name,
                                 dtype=dtype)

    def result(self):
        return self._single(self._counts()[index])

    return type(class_name, (ConfusionCounts,), {
        "__init__": __init__, "result": result, "__module__": __name__,
        "__doc__": f"``keras.metrics.{class_name}``: the weighted count of {default_name} at "
                   f"each threshold (0.5 by default)."})


TruePositives = _counter("TruePositives", 0, "true_positives")
FalsePositives = _counter("FalsePositives", 1, "false_positives")
TrueNegatives = _counter("TrueNegatives", 2, "true_negatives")
FalseNegatives = _counter("FalseNegatives", 3, "false_negatives")


def _thresholds_or_top_k(thresholds, top_k):
    """Precision's and Recall's thresholds: 0.5 by default, but with ``top_k`` alone Keras's
    NEG_INF, so that the top-k filter alone decides what is predicted positive."""
    if thresholds is None and top_k is not None:
        return [-1e10]
    return _thresholds(thresholds)


class Precision(ConfusionCounts):
    """tp / (tp + fp) at each threshold (0.5 by default; none with ``top_k`` alone)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(_thresholds_or_top_k(thresholds, top_k), name=name or "precision",
                         dtype=dtype, top_k=top_k, class_id=class_id)

    def result(self):
        tp, fp, _, _ = self._counts()
        return self._single(_divide_no_nan(tp, tp + fp))


class Recall(ConfusionCounts):
    """tp / (tp + fn) at each threshold (0.5 by default; none with ``top_k`` alone)."""

    def __init__(self, thresholds=None, top_k=None, class_id=None, name=None, dtype=None):
        super().__init__(_thresholds_or_top_k(thresholds, top_k), name=name or "recall",
                         dtype=dtype, top_k=top_k, class_id=class_id)

    def result(self):
        tp, _, _, fn = self._counts()
        return self._single(_divide_no_nan(tp, tp + fn))


def _even_thresholds(num_thresholds):
    return [(i + 1) / (num_thresholds - 1) for i in range(num_thresholds - 2)]


class _AtConstraint(ConfusionCounts):
    """Keras's SensitivitySpecificityBase: counts at ``num_thresholds`` thresholds over [0, 1];
    the result is the best ``dependent`` value among thresholds whose ``constrained`` value is
    at least ``value`` (0 when none is)."""

    _default_name = None

    def __init__(self, value, num_thresholds=200, class_id=None, name=None, dtype=None):
        if num_thresholds <= 0:
            raise ValueError(f"Argument `num_thresholds` must be an integer > 0. Received: "
                             f"num_thresholds={num_thresholds}")
        if not 0.0 <= float(value) <= 1.0:
            raise ValueError(f"Argument `{self._default_name.split('_at_')[1]}` must be in the "
                             f"range [0, 1]. Received: {value}")
        self.value, self.num_thresholds = float(value), num_thresholds
        thresholds = [0.5] if num_thresholds == 1 else \
            [0.0] + _even_thresholds(num_thresholds) + [1.0]
        super().__init__(thresholds, name=name or self._default_name, dtype=dtype,
                         class_id=class_id)

    def _rates(self):
        tp, fp, tn, fn = self._counts()
        return {"sensitivity": _divide_no_nan(tp, tp + fn), "recall": _divide_no_nan(tp, tp + fn),
                "specificity": _divide_no_nan(tn, tn + fp),
                "precision": _divide_no_nan(tp, tp + fp)}

    def result(self):
        wanted, given = self._default_name.split("_at_")
        rates = self._rates()
        feasible = rates[given] >= self.value
        return self._result(np.max(np.where(feasible, rates[wanted], 0.0), initial=0.0))


def _at_metric(class_name, default_name, argument):
    def __init__(self, *args, **kwargs):
        if argument in kwargs:
            args = (kwargs.pop(argument),) + args
        _AtConstraint.__init__(self, *args, **kwargs)

    return type(class_name, (_AtConstraint,), {
        "__init__": __init__, "_default_name": default_name, "__module__": __name__,
        "__doc__": f"``keras.metrics.{class_name}``: the best {default_name.split('_at_')[0]} "
                   f"among thresholds whose {argument} is at least the given value."})


SensitivityAtSpecificity = _at_metric("SensitivityAtSpecificity", "sensitivity_at_specificity",
                                      "specificity")
SpecificityAtSensitivity = _at_metric("SpecificityAtSensitivity", "specificity_at_sensitivity",
                                      "sensitivity")
PrecisionAtRecall = _at_metric("PrecisionAtRecall", "precision_at_recall", "recall")
RecallAtPrecision = _at_metric("RecallAtPrecision", "recall_at_precision", "precision")


class AUC(ConfusionCounts):
    """``keras.metrics.AUC``: the area under the ROC or PR curve from the counts at
    ``num_thresholds`` thresholds (Keras's: evenly spaced, the ends pushed past 0 and 1 by
    epsilon), summed by interpolation (PR: Davis & Goadrich's), minoring or majoring."""

    def __init__(self, num_thresholds=200, curve="ROC", summation_method="interpolation",
                 name=None, dtype=None, thresholds=None, multi_label=False, num_labels=None,
                 label_weights=None, from_logits=False):
        curve, summation_method = str(curve).upper(), str(summation_method).lower()
        if curve not in ("ROC", "PR"):
            raise ValueError(f'Invalid AUC curve value: "{curve}". Expected "ROC" or "PR" '
                             f"(gpuaccel does not support 'PRGAIN')")
        if summation_method not in ("interpolation", "minoring", "majoring"):
            raise ValueError(f'Invalid AUC summation method value: "{summation_method}". '
                             f'Expected "interpolation", "minoring" or "majoring"')
        if thresholds is not None:
            inner = sorted(_thresholds(thresholds))
            self.num_thresholds = len(inner) + 2
        else:
            if num_thresholds <= 1:
                raise ValueError(f"Argument `num_thresholds` must be an integer > 1. "
                                 f"Received: num_thresholds={num_thresholds}")
            inner = _even_thresholds(num_thresholds)
            self.num_thresholds = num_thresholds
        self.curve, self.summation_method = curve, summation_method
        self.from_logits, self.num_labels = from_logits, num_labels
        self.label_weights = None if label_weights is None else np.asarray(label_weights,
                                                                           np.float64)
        super().__init__([0.0 - _EPSILON] + inner + [1.0 + _EPSILON], name=name or "auc",
                         dtype=dtype, multi_label=multi_label)

    def _predictions(self, y_pred):
        return 1.0 / (1.0 + np.exp(-y_pred)) if self.from_logits else y_pred

    def update_state(self, y_true, y_pred, sample_weight=None):
        if self.label_weights is not None and not self.multi_label:
            # Keras weighs each example's labels by label_weights (the last axis)
            shape = np.shape(host(y_pred))
            ones = np.ones(shape) if sample_weight is None else host(sample_weight)
            ones = ones.reshape(ones.shape + (1,) * (len(shape) - ones.ndim))
            sample_weight = np.broadcast_to(ones, shape) * self.label_weights
        super().update_state(y_true, y_pred, sample_weight)

    def _interpolated_pr_auc(self, tp, fp, fn):
        dtp = tp[:-1] - tp[1:]
        p = tp + fp
        dp = p[:-1] - p[1:]
        slope = _divide_no_nan(dtp, np.maximum(dp, 0))
        intercept = tp[1:] - slope * p[1:]
        both = (p[:-1] > 0) & (p[1:] > 0)
        ratio = np.where(both, _divide_no_nan(p[:-1], np.maximum(p[1:], 0)), 1.0)
        return _divide_no_nan(slope * (dtp + intercept * np.log(ratio)),
                              np.maximum(tp[1:] + fn[1:], 0))

    def result(self):
        tp, fp, tn, fn = self._counts()
        if self.curve == "PR" and self.summation_method == "interpolation":
            terms = self._interpolated_pr_auc(tp, fp, fn)
        else:
            recall = _divide_no_nan(tp, tp + fn)
            if self.curve == "ROC":
                x, y = _divide_no_nan(fp, fp + tn), recall
            else:
                x, y = recall, _divide_no_nan(tp, tp + fp)
            heights = {"interpolation": (y[:-1] + y[1:]) / 2.0,
                       "minoring": np.minimum(y[:-1], y[1:]),
                       "majoring": np.maximum(y[:-1], y[1:])}[self.summation_method]
            terms = (x[:-1] - x[1:]) * heights
        if not self.multi_label:
            return self._result(np.sum(terms))
        by_label = np.sum(terms, axis=0)
        if self.label_weights is None:
            return self._result(np.mean(by_label))
        return self._result(_divide_no_nan(np.sum(by_label * self.label_weights),
                                           np.sum(self.label_weights)))
