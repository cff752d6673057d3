"""``keras.metrics``: the ``Metric`` base a Python metric subclasses, Keras's built-in metrics,
and how ``compile(metrics=[...])`` turns names into them (Keras's rule for 'accuracy': the variant
that fits the loss: sparse categorical, categorical or binary).

Six built-ins accumulate in the C++ training step (``cpp/nn/metrics.cc``; ``_CppMetric``). Every
other one updates in Python once per batch inside fit (``_host_metrics.py``) with its state on the
host: the mean metrics average the loss formulas (``_loss_functions.py``) and the accuracy and
correlation functions (``_metric_functions.py``), the confusion, score and IoU families keep
their counts (``_confusion_metrics.py``, ``_score_metrics.py``, ``_iou_metrics.py``)."""
import numpy as np

from .. import _C
from .._tensor import Tensor, tensor
from . import _loss_functions as _lf, _metric_functions as _mf, losses as _losses
from ._confusion_metrics import (AUC, FalseNegatives, FalsePositives, Precision,  # noqa: F401
                                 PrecisionAtRecall, Recall, RecallAtPrecision,
                                 SensitivityAtSpecificity, SpecificityAtSensitivity,
                                 TrueNegatives, TruePositives)
from ._iou_metrics import BinaryIoU, IoU, MeanIoU, OneHotIoU, OneHotMeanIoU  # noqa: F401
from ._metric_base import Mean, MeanMetricWrapper, Metric, Sum, aligned, host  # noqa: F401
from ._score_metrics import F1Score, FBetaScore, R2Score  # noqa: F401
from ._registry import KerasObjectRegistry
from ._wrapper_classes import wrapper_class


def _as_tensor(value):
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    return tensor(array)


class _CppMetric(Mean):
    """A built-in metric whose per-example values come from C++ (``nn::Metric``): fit
    accumulates them inside the C++ step (``result()`` reads that running mean); a direct
    ``update_state`` (with or without sample weights) averages them on the host, as Keras's
    ``MeanMetricWrapper`` does."""

    _kind = None
    _default_name = None

    def __init__(self, name=None, dtype=None, threshold=0.5):
        self._cpp = _C.Metric(name or self._default_name, self._kind, float(threshold))
        super().__init__(name=name or self._default_name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._cpp.values(_as_tensor(y_true), _as_tensor(y_pred)),
                             sample_weight)

    def result(self):
        if self._state["count"]:
            return super().result()
        return tensor(np.float32(self._cpp.result()))

    def reset_state(self):
        super().reset_state()
        self._cpp.reset()


class _WeightedMean(Mean):
    """A built-in metric listed in ``compile(weighted_metrics=[...])``: Keras's weighted mean
    ``sum(value * w) / sum(w)`` of the C++ per-example values, on the host."""

    def __init__(self, builtin, name):
        self._builtin = builtin
        super().__init__(name=name, dtype=builtin.dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._builtin._cpp.values(_as_tensor(y_true), _as_tensor(y_pred)),
                             sample_weight)


class Accuracy(_CppMetric):
    _kind, _default_name = "accuracy", "accuracy"


class SparseCategoricalAccuracy(_CppMetric):
    _kind, _default_name = "sparse_categorical_accuracy", "sparse_categorical_accuracy"


class CategoricalAccuracy(_CppMetric):
    _kind, _default_name = "categorical_accuracy", "categorical_accuracy"


class BinaryAccuracy(_CppMetric):
    _kind, _default_name = "binary_accuracy", "binary_accuracy"

    def __init__(self, name="binary_accuracy", dtype=None, threshold=0.5):
        super().__init__(name, dtype, threshold)
        self.threshold = threshold


class MeanSquaredError(_CppMetric):
    _kind, _default_name = "mean_squared_error", "mean_squared_error"


class MeanAbsoluteError(_CppMetric):
    _kind, _default_name = "mean_absolute_error", "mean_absolute_error"


class RootMeanSquaredError(Mean):
    """``keras.metrics.RootMeanSquaredError``: sqrt of the weighted mean squared error."""

    def __init__(self, name="root_mean_squared_error", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        y_true, y_pred = aligned(host(y_true), host(y_pred))
        super().update_state(np.square(y_pred - y_true), sample_weight)

    def result(self):
        return self._result(np.sqrt(float(super().result().numpy())))


def _mean_class(class_name, fn, name, doc, leading=None, **options):
    """Keras's metric class signature: (name, dtype, *options), or (*leading, name, dtype,
    *options) for the few that put an option first (TopKCategoricalAccuracy's k)."""
    return wrapper_class(class_name, MeanMetricWrapper, fn, doc, __name__, {
        **(leading or {}), "name": name, "dtype": None, **options})


MeanAbsolutePercentageError = _mean_class(
    "MeanAbsolutePercentageError", _lf.mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "The mean of keras.losses.mean_absolute_percentage_error.")
MeanSquaredLogarithmicError = _mean_class(
    "MeanSquaredLogarithmicError", _lf.mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "The mean of keras.losses.mean_squared_logarithmic_error.")
LogCoshError = _mean_class("LogCoshError", _lf.log_cosh, "logcosh",
                           "The mean of keras.losses.log_cosh.")
CosineSimilarity = _mean_class("CosineSimilarity", _mf.cosine_similarity, "cosine_similarity",
                               "The mean cosine similarity (+1: same direction).", axis=-1)
Hinge = _mean_class("Hinge", _lf.hinge, "hinge", "The mean of keras.losses.hinge.")
SquaredHinge = _mean_class("SquaredHinge", _lf.squared_hinge, "squared_hinge",
                           "The mean of keras.losses.squared_hinge.")
CategoricalHinge = _mean_class("CategoricalHinge", _lf.categorical_hinge, "categorical_hinge",
                               "The mean of keras.losses.categorical_hinge.")
KLDivergence = _mean_class("KLDivergence", _lf.kl_divergence, "kl_divergence",
                           "The mean of keras.losses.kl_divergence.")
Poisson = _mean_class("Poisson", _lf.poisson, "poisson", "The mean of keras.losses.poisson.")
BinaryCrossentropy = _mean_class(
    "BinaryCrossentropy", _lf.binary_crossentropy, "binary_crossentropy",
    "The mean of keras.losses.binary_crossentropy.", from_logits=False, label_smoothing=0)
CategoricalCrossentropy = _mean_class(
    "CategoricalCrossentropy", _lf.categorical_crossentropy, "categorical_crossentropy",
    "The mean of keras.losses.categorical_crossentropy.", from_logits=False, label_smoothing=0,
    axis=-1)
SparseCategoricalCrossentropy = _mean_class(
    "SparseCategoricalCrossentropy", _losses.sparse_categorical_crossentropy,
    "sparse_categorical_crossentropy", "The mean of keras.losses.sparse_categorical_"
    "crossentropy.", from_logits=False, ignore_class=None, axis=-1)
TopKCategoricalAccuracy = _mean_class(
    "TopKCategoricalAccuracy", _mf.top_k_categorical_accuracy, "top_k_categorical_accuracy",
    "How often the one-hot label is among the k highest scores.", leading={"k": 5})
SparseTopKCategoricalAccuracy = _mean_class(
    "SparseTopKCategoricalAccuracy", _mf.sparse_top_k_categorical_accuracy,
    "sparse_top_k_categorical_accuracy", "How often the integer label is among the k highest "
    "scores (or, from_sorted_ids, the first k ids).", leading={"k": 5}, from_sorted_ids=False)
PearsonCorrelation = _mean_class("PearsonCorrelation", _mf.pearson_correlation,
                                 "pearson_correlation", "The mean Pearson correlation along "
                                 "axis.", axis=-1)
ConcordanceCorrelation = _mean_class("ConcordanceCorrelation", _mf.concordance_correlation,
                                     "concordance_correlation", "The mean concordance "
                                     "correlation along axis.", axis=-1)

# The per-example functions Keras lists in keras.metrics (the losses' formulas among them)
accuracy = _mf.accuracy
binary_accuracy = _mf.binary_accuracy
categorical_accuracy = _mf.categorical_accuracy
sparse_categorical_accuracy = _mf.sparse_categorical_accuracy
top_k_categorical_accuracy = _mf.top_k_categorical_accuracy
sparse_top_k_categorical_accuracy = _mf.sparse_top_k_categorical_accuracy
pearson_correlation = _mf.pearson_correlation
concordance_correlation = _mf.concordance_correlation
binary_crossentropy = _lf.binary_crossentropy
binary_focal_crossentropy = _lf.binary_focal_crossentropy
categorical_crossentropy = _lf.categorical_crossentropy
categorical_focal_crossentropy = _lf.categorical_focal_crossentropy
sparse_categorical_crossentropy = _losses.sparse_categorical_crossentropy
categorical_hinge = _lf.categorical_hinge
hinge = _lf.hinge
squared_hinge = _lf.squared_hinge
huber = _lf.huber
kl_divergence = _lf.kl_divergence
log_cosh = _lf.log_cosh
mean_absolute_error = _lf.mean_absolute_error
mean_absolute_percentage_error = _lf.mean_absolute_percentage_error
mean_squared_error = _lf.mean_squared_error
mean_squared_logarithmic_error = _lf.mean_squared_logarithmic_error
poisson = _lf.poisson


_BY_NAME = {
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "binary_accuracy": BinaryAccuracy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError,
    "root_mean_squared_error": RootMeanSquaredError,
    "log_cosh": LogCoshError,
    "logcosh": LogCoshError,
    "hinge": Hinge,
    "squared_hinge": SquaredHinge,
    "categorical_hinge": CategoricalHinge,
    "kl_divergence": KLDivergence,
    "kld": KLDivergence,
    "poisson": Poisson,
    "cosine_similarity": CosineSimilarity,
    "binary_crossentropy": BinaryCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "top_k_categorical_accuracy": TopKCategoricalAccuracy,
    "sparse_top_k_categorical_accuracy": SparseTopKCategoricalAccuracy,
    "pearson_correlation": PearsonCorrelation,
    "concordance_correlation": ConcordanceCorrelation,
    "precision": Precision,
    "recall": Recall,
    "auc": AUC,
    "true_positives": TruePositives,
    "false_positives": FalsePositives,
    "true_negatives": TrueNegatives,
    "false_negatives": FalseNegatives,
    "r2_score": R2Score,
}
# Keras also takes a class's own name ('Precision', 'AUC'); those that need an argument
# (MeanIoU's num_classes...) are only for deserialize.
_CLASSES = {cls.__name__: cls for cls in (
    *_BY_NAME.values(), Accuracy, Mean, Sum, F1Score, FBetaScore, IoU, MeanIoU, BinaryIoU,
    OneHotIoU, OneHotMeanIoU, PrecisionAtRecall, RecallAtPrecision, SensitivityAtSpecificity,
    SpecificityAtSensitivity)}


def _accuracy_for(loss):
    """Keras's choice for the string 'accuracy' given the compiled loss."""
    if isinstance(loss, _losses.SparseCategoricalCrossentropy):
        return SparseCategoricalAccuracy
    if isinstance(loss, _losses.CategoricalCrossentropy):
        return CategoricalAccuracy
    if isinstance(loss, _losses.BinaryCrossentropy):
        return BinaryAccuracy
    return Accuracy


def get(identifier, loss=None):
    """A Metric for ``identifier`` (an instance, a class, a Keras name or class name). 'accuracy'
    /'acc' become the variant that fits ``loss`` and keep the name the user wrote, as in Keras."""
    if isinstance(identifier, Metric):
        return identifier
    if isinstance(identifier, type) and issubclass(identifier, Metric):
        return identifier()
    if isinstance(identifier, str):
        key = identifier.lower()
        if key in ("accuracy", "acc"):
            return _accuracy_for(loss)(name=identifier)
        cls = _BY_NAME.get(key)
        if cls is not None:
            return cls(name=identifier)
        if identifier in _CLASSES:
            return _CLASSES[identifier]()
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}. Known names: "
                     f"{sorted(_BY_NAME) + ['accuracy', 'acc']}, or a keras.metrics.Metric")


# Serialized dicts name classes; bare names go through get() ('accuracy' and the aliases).
_REGISTRY = KerasObjectRegistry(
    "metric", "keras.metrics", Metric, _CLASSES,
    unknown_hint="an unknown metric class; known: {names}; pass custom_objects for your own",
    resolve_name=lambda name: get(name))


def serialize(metric):
    """Keras's serialized form of a metric object: its class name and ``get_config()``."""
    return _REGISTRY.serialize(metric)


def deserialize(config, custom_objects=None):
    """The metric ``serialize`` described (a dict), or the one a Keras name stands for."""
    return _REGISTRY.deserialize(config, custom_objects)
