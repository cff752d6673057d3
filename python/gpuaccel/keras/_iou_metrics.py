"""Keras's intersection-over-union metrics (IoU, MeanIoU, BinaryIoU, OneHotIoU, OneHotMeanIoU):
one weighted (true class x predicted class) confusion matrix accumulated on the host, and the
IoU of the target classes read from it. A label or prediction outside [0, num_classes) or equal
to ``ignore_class`` gets weight 0, and as in Keras the matrix has the metric's dtype, by default
an integer one: float sample weights are truncated toward zero then (Keras warns; so do we)."""
import inspect
import warnings

import numpy as np

from ._metric_base import HostStateMetric, host

_EPSILON = 1e-7


class IoU(HostStateMetric):
    """``keras.metrics.IoU``: tp / (tp + fp + fn) per target class, averaged over the target
    classes that occur (in the labels or the predictions)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        if max(target_class_ids) >= num_classes:
            raise ValueError(f"Target class id {max(target_class_ids)} is out of range, which "
                             f"is [0, {num_classes}).")
        self.num_classes, self.target_class_ids = num_classes, list(target_class_ids)
        self.ignore_class, self.axis = ignore_class, axis
        self.sparse_y_true, self.sparse_y_pred = sparse_y_true, sparse_y_pred
        super().__init__(name=name, dtype=dtype or "int")

    def _initial_state(self):
        return {"total_cm": np.zeros((self.num_classes, self.num_classes))}

    def _predicted_classes(self, y_pred):
        return y_pred if self.sparse_y_pred else np.argmax(y_pred, axis=self.axis)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = host(y_true), host(y_pred)
        if not self.sparse_y_true:
            y_true = np.argmax(y_true, axis=self.axis)
        y_true, y_pred = y_true.reshape(-1), self._predicted_classes(y_pred).reshape(-1)
        weight = np.ones(1) if sample_weight is None else host(sample_weight).reshape(-1)
        try:
            weight = np.broadcast_to(weight, y_true.shape)
        except ValueError as error:
            raise ValueError(f"sample_weight of {weight.size} values does not broadcast to the "
                             f"{y_true.size} labels") from error
        if "int" in self.dtype:
            if sample_weight is not None and np.any(weight != np.trunc(weight)):
                warnings.warn("You are passing weight as `float`, but dtype is `int`. This may "
                              "result in an incorrect weight due to type casting Consider "
                              "using integer weights.", stacklevel=2)
            weight = np.trunc(weight)
        valid = (y_true >= 0) & (y_true < self.num_classes) & (y_pred >= 0) & \
            (y_pred < self.num_classes)
        if self.ignore_class is not None:
            valid &= y_true != self.ignore_class
        rows, cols = np.where(valid, y_true, 0).astype(np.int64), \
            np.where(valid, y_pred, 0).astype(np.int64)
        np.add.at(self._state["total_cm"], (rows, cols), np.where(valid, weight, 0.0))

    def result(self):
        cm = self._state["total_cm"]
        true_positives = np.diag(cm)
        denominator = cm.sum(axis=0) + cm.sum(axis=1) - true_positives
        true_positives = true_positives[self.target_class_ids]
        denominator = denominator[self.target_class_ids]
        valid = denominator > 1e-9
        iou = np.where(valid, true_positives / (denominator + _EPSILON), 0.0)
        return self._result(np.sum(iou) / (np.sum(valid) + _EPSILON))

    def get_config(self):
        """Keras's keys for this class: those its constructor takes."""
        config = {**super().get_config(), "num_classes": self.num_classes,
                  "target_class_ids": self.target_class_ids, "ignore_class": self.ignore_class,
                  "sparse_y_true": self.sparse_y_true, "sparse_y_pred": self.sparse_y_pred,
                  "axis": self.axis, "threshold": getattr(self, "threshold", None)}
        accepted = inspect.signature(type(self).__init__).parameters
        return {key: value for key, value in config.items() if key in accepted}


class MeanIoU(IoU):
    """``keras.metrics.MeanIoU``: IoU averaged over every class."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_true=True, sparse_y_pred=True, axis=-1):
        super().__init__(num_classes, list(range(num_classes)), name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=sparse_y_true,
                         sparse_y_pred=sparse_y_pred, axis=axis)


class BinaryIoU(IoU):
    """``keras.metrics.BinaryIoU``: two classes, a prediction >= ``threshold`` being class 1."""

    def __init__(self, target_class_ids=(0, 1), threshold=0.5, name=None, dtype=None):
        self.threshold = threshold
        super().__init__(2, list(target_class_ids), name=name, dtype=dtype)

    def _predicted_classes(self, y_pred):
        return (y_pred >= self.threshold).astype(np.float64)


class OneHotIoU(IoU):
    """``keras.metrics.OneHotIoU``: IoU of one-hot labels (and by default scores)."""

    def __init__(self, num_classes, target_class_ids, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, target_class_ids, name=name, dtype=dtype,
                         ignore_class=ignore_class, sparse_y_true=False,
                         sparse_y_pred=sparse_y_pred, axis=axis)


class OneHotMeanIoU(MeanIoU):
    """``keras.metrics.OneHotMeanIoU``: MeanIoU of one-hot labels (and by default scores)."""

    def __init__(self, num_classes, name=None, dtype=None, ignore_class=None,
                 sparse_y_pred=False, axis=-1):
        super().__init__(num_classes, name=name, dtype=dtype, ignore_class=ignore_class,
                         sparse_y_true=False, sparse_y_pred=sparse_y_pred, axis=axis)
