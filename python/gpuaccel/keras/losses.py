"""``keras.losses``: Keras's loss classes and functions, with Keras's reductions and
``sample_weight``. The four losses with a C++ kernel (``cpp/nn/losses.cc``: sparse categorical,
categorical and binary crossentropy, mean squared error) run it; the others are Keras's formulas
composed from gpuaccel's ops (``_loss_functions.py``, shared with ``metrics.py``).

``model.compile(loss=...)`` accepts an instance of these classes or one of Keras's names
('sparse_categorical_crossentropy', 'mse', 'huber', ...), a Python function ``fn(y_true,
y_pred)``, or a subclass of ``Loss`` with its own ``call(y_true, y_pred)``. Python losses are
traced once per input signature and replayed inside the C++ step, as Python layers are
(cpp/nn/traced_function.h)."""
import re
import warnings
import weakref

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor
from . import _loss_functions as _f, ops
from ._registry import KerasObjectRegistry
from ._wrapper_classes import wrapper_class

_REDUCTIONS = ("sum_over_batch_size", "sum", "mean", "mean_with_sample_weight", "none", None)


class Reduction:
    """``tf.keras.losses.Reduction``: the reduction names as constants, kept by TF 2.21's
    tf.keras for TF-2 era code (``reduction=tf.keras.losses.Reduction.NONE`` in the
    distributed training tutorial). The losses take the strings themselves; ``AUTO`` is only
    a name here, as in Keras 3, whose losses refuse 'auto'."""
    AUTO = "auto"
    NONE = "none"
    SUM = "sum"
    SUM_OVER_BATCH_SIZE = "sum_over_batch_size"

    @classmethod
    def all(cls):
        return (cls.AUTO, cls.NONE, cls.SUM, cls.SUM_OVER_BATCH_SIZE)

    @classmethod
    def validate(cls, key):
        if key not in cls.all():
            raise ValueError(f'Invalid Reduction Key: {key}. Expected keys are "{cls.all()}"')


def _as_tensor(value, integer_ok=True):
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value)
    if array.dtype == np.float64 or (not integer_ok and array.dtype.kind in "iub"):
        array = array.astype(np.float32)
    return tensor(array)


def _returned_loss(name, value):
    """What a Python loss returned, as a tensor; None or a non-number gets Keras's error type
    (ValueError "None values not supported." / TypeError) with what to return instead."""
    advice = (f"the loss '{name}' must return a tensor of numbers: per-example losses or a "
              f"scalar, e.g. `return tf.reduce_mean(tf.square(y_true - y_pred), axis=-1)`")
    if value is None:
        raise ValueError(f"None values not supported: {advice} (it returned None; a missing "
                         f"`return`?)")
    array = np.asarray(value)
    if array.dtype.kind not in "fiub":
        raise TypeError(f"Expected float32, but got {value!r} of type "
                        f"'{type(value).__name__}': {advice}")
    return _as_tensor(array, False)


def _python_loss(name, fn):
    """The C++ loss running the Python ``fn(y_true, y_pred)``, traced once per signature; and
    its TracedFunction (how often Python ran)."""
    def run(inputs, flag):
        out = fn(inputs[0], inputs[1])
        return [out if isinstance(out, Tensor) else _returned_loss(name, out)]

    def warn(reason):
        warnings.warn(f"gpuaccel: loss '{name}' runs its Python code on every step (it could "
                      f"not be traced into the C++ step): {reason}", RuntimeWarning, stacklevel=2)

    traced = _C.layers.TracedFunction(run, warn)
    return _C.Loss.from_python(name, traced), traced


def reduce_weighted(values, sample_weight=None, reduction="sum_over_batch_size", mask=None):
    """Keras's ``reduce_weighted_values``: the per-example ``values`` times ``sample_weight``
    (its rank aligned by one squeezed/expanded last axis, then broadcast), reduced by
    ``reduction``: 'sum', the sum over the number of values ('sum_over_batch_size'/'mean'), the
    sum over the weights' sum ('mean_with_sample_weight'), or none. A ``mask`` (Keras's mask of
    the losses) zeroes the masked values' weights; the means then count the unmasked only."""
    values = _as_tensor(values, False)
    weight = None
    if mask is not None:
        weight = ops.cast(mask, values.dtype)
        if reduction in ("sum_over_batch_size", "mean"):
            weight = weight * ops.divide_no_nan(float(np.prod(weight.shape)), ops.sum(weight))
    if sample_weight is not None:
        given = ops.cast(_as_tensor(sample_weight, False), values.dtype)
        if weight is not None:
            weight, given = _f.same_rank(weight, given)
        weight = given if weight is None else given * weight
    if weight is not None:
        values, weight = _f.same_rank(values, weight)
        try:
            values = values * weight
        except ValueError as error:
            raise ValueError(f"sample_weight of shape {tuple(weight.shape)} does not broadcast "
                             f"to the losses' shape {tuple(values.shape)}") from error
    if reduction in ("none", None) or tuple(values.shape) in ((), (0,)):
        return values
    total = ops.sum(values)
    if reduction == "sum":
        return total
    if reduction == "mean_with_sample_weight" and weight is not None:
        return ops.divide_no_nan(total, ops.sum(weight))
    return ops.divide_no_nan(total, float(np.prod(values.shape)))


def _snake_case(class_name):
    return re.sub(r"(?<!^)(?=[A-Z])", "_", class_name).lower()


class Loss:
    """Base class: ``loss(y_true, y_pred, sample_weight=None)`` -> a float32 scalar (or the
    weighted per-example values with ``reduction=None``/'none'). A subclass defines
    ``call(y_true, y_pred)`` in Python; the built-ins with a C++ kernel (``_kind``) run it."""

    _kind = None  # the C++ built-in loss (cpp/nn/losses.cc) computing this class, if any
    from_logits = False
    label_smoothing = 0.0

    def __init__(self, name=None, reduction="sum_over_batch_size", dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"Invalid value for argument `reduction`. Expected one of "
                             f"{_REDUCTIONS}. Received: reduction={reduction!r}")
        self.reduction = reduction
        self.dtype = str(getattr(dtype, "name", dtype) or "float32")
        self.name = name or _snake_case(type(self).__name__)
        if self._runs_in_cpp():
            self._cpp = _C.Loss(self._kind, bool(self.from_logits), float(self.label_smoothing))
        else:
            call = weakref.WeakMethod(self.call)  # the C++ loss must not keep self alive
            self._cpp, self._traced = _python_loss(self.name, lambda a, b: call()(a, b))

    def _runs_in_cpp(self):
        """Whether the C++ built-in computes this loss: a built-in class whose ``call`` is not
        overridden, with options its kernel supports."""
        return self._kind is not None and type(self).call is LossFunctionWrapper.call

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must define call(y_true, y_pred)")

    def __call__(self, y_true, y_pred, sample_weight=None):
        per_example = self._cpp.per_example(_as_tensor(y_true), _as_tensor(y_pred, False))
        return reduce_weighted(per_example, sample_weight, self.reduction)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


class LossFunctionWrapper(Loss):
    """A function ``fn(y_true, y_pred, **kwargs)`` of per-example losses as a Loss (Keras's
    class of the same name; what compile() makes of a Python function). As in Keras, y_true and
    y_pred are first brought to the same rank (one last axis of 1 squeezed or expanded)."""

    def __init__(self, fn, reduction="sum_over_batch_size", name=None, dtype=None, **kwargs):
        self.fn = fn
        self._fn_kwargs = kwargs
        super().__init__(name=name or getattr(fn, "__name__", "loss"), reduction=reduction,
                         dtype=dtype)

    def call(self, y_true, y_pred):
        if isinstance(y_true, Tensor) and isinstance(y_pred, Tensor):
            y_true, y_pred = _f.same_rank(y_true, y_pred)
        return self.fn(y_true, y_pred, **self._fn_kwargs)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config):
        if cls is LossFunctionWrapper:
            raise ValueError("LossFunctionWrapper.from_config needs the function: build it "
                             "with LossFunctionWrapper(fn, ...)")
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__}({getattr(self.fn, '__name__', self.fn)}, " \
               f"kwargs={self._fn_kwargs})>"


def _builtin(kind, y_true, y_pred, from_logits=False, label_smoothing=0.0):
    """The C++ built-in loss ``kind`` per example."""
    return _C.Loss(kind, bool(from_logits), float(label_smoothing)).per_example(
        _as_tensor(y_true), _as_tensor(y_pred, False))


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False, ignore_class=None,
                                    axis=-1):
    """Integer labels (N,) or (N, 1) against (N, C) probabilities or logits (the C++ kernel)."""
    if ignore_class is not None or axis not in (-1, len(np.shape(y_pred)) - 1):
        raise NotImplementedError("sparse_categorical_crossentropy supports ignore_class=None "
                                  "and axis=-1 (the class axis last) only")
    return _builtin("sparse_categorical_crossentropy", y_true, y_pred, from_logits)


mean_squared_error = _f.mean_squared_error
mean_absolute_error = _f.mean_absolute_error
mean_absolute_percentage_error = _f.mean_absolute_percentage_error
mean_squared_logarithmic_error = _f.mean_squared_logarithmic_error
huber = _f.huber
log_cosh = _f.log_cosh
hinge = _f.hinge
squared_hinge = _f.squared_hinge
categorical_hinge = _f.categorical_hinge
kl_divergence = _f.kl_divergence
poisson = _f.poisson
cosine_similarity = _f.cosine_similarity
binary_crossentropy = _f.binary_crossentropy
categorical_crossentropy = _f.categorical_crossentropy
binary_focal_crossentropy = _f.binary_focal_crossentropy
categorical_focal_crossentropy = _f.categorical_focal_crossentropy
categorical_generalized_cross_entropy = _f.categorical_generalized_cross_entropy
dice = _f.dice
tversky = _f.tversky
mse = MSE = mean_squared_error
mae = MAE = mean_absolute_error
mape = MAPE = mean_absolute_percentage_error
msle = MSLE = mean_squared_logarithmic_error
kld = KLD = kullback_leibler_divergence = kl_divergence
logcosh = log_cosh


class SparseCategoricalCrossentropy(LossFunctionWrapper):
    """Integer class labels (N,) or (N, 1) against (N, C) probabilities or logits."""
    _kind = "sparse_categorical_crossentropy"

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy", dtype=None):
        if ignore_class is not None:
            raise NotImplementedError("SparseCategoricalCrossentropy(ignore_class=...) is not "
                                      "supported by gpuaccel yet")
        self.from_logits = bool(from_logits)
        super().__init__(sparse_categorical_crossentropy, reduction, name, dtype,
                         from_logits=self.from_logits)

    def get_config(self):
        return {**super().get_config(), "ignore_class": None}


class _Crossentropy(LossFunctionWrapper):
    """Categorical and binary crossentropy: the C++ kernel on the last axis, the composed
    formula (_loss_functions.py) on any other."""

    def __init__(self, fn, from_logits, label_smoothing, axis, reduction, name, dtype):
        self.from_logits = bool(from_logits)
        self.label_smoothing = float(label_smoothing)
        self.axis = axis
        super().__init__(fn, reduction, name, dtype, from_logits=self.from_logits,
                         label_smoothing=self.label_smoothing, axis=axis)

    def _runs_in_cpp(self):
        return self.axis == -1 and super()._runs_in_cpp()


class CategoricalCrossentropy(_Crossentropy):
    """One-hot (or probability) labels against probabilities or logits along ``axis``."""
    _kind = "categorical_crossentropy"

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy", dtype=None):
        super().__init__(categorical_crossentropy, from_logits, label_smoothing, axis, reduction,
                         name, dtype)


class BinaryCrossentropy(_Crossentropy):
    """Labels in [0, 1] against probabilities or logits of the same shape; the mean over
    ``axis`` is the per-example loss."""
    _kind = "binary_crossentropy"

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy", dtype=None):
        super().__init__(binary_crossentropy, from_logits, label_smoothing, axis, reduction,
                         name, dtype)


class MeanSquaredError(LossFunctionWrapper):
    _kind = "mean_squared_error"

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error", dtype=None):
        super().__init__(mean_squared_error, reduction, name, dtype)


def _wrapper_class(class_name, fn, default_name, doc, **options):
    """Keras's loss class signature: the function's options, then reduction, name, dtype."""
    return wrapper_class(class_name, LossFunctionWrapper, fn, doc, __name__, {
        **options, "reduction": "sum_over_batch_size", "name": default_name, "dtype": None})


MeanAbsoluteError = _wrapper_class("MeanAbsoluteError", mean_absolute_error,
                                   "mean_absolute_error", "mean(|y_true - y_pred|) per example.")
MeanAbsolutePercentageError = _wrapper_class(
    "MeanAbsolutePercentageError", mean_absolute_percentage_error,
    "mean_absolute_percentage_error", "100 mean(|y_true - y_pred| / max(|y_true|, eps)).")
MeanSquaredLogarithmicError = _wrapper_class(
    "MeanSquaredLogarithmicError", mean_squared_logarithmic_error,
    "mean_squared_logarithmic_error", "mean((log(y_pred + 1) - log(y_true + 1))^2).")
Huber = _wrapper_class("Huber", huber, "huber_loss",
                       "Quadratic below ``delta``, linear above.", delta=1.0)
LogCosh = _wrapper_class("LogCosh", log_cosh, "log_cosh", "mean(log(cosh(y_pred - y_true))).")
Hinge = _wrapper_class("Hinge", hinge, "hinge",
                       "mean(max(1 - y_true y_pred, 0)); 0/1 labels become -1/1.")
SquaredHinge = _wrapper_class("SquaredHinge", squared_hinge, "squared_hinge",
                              "mean(max(1 - y_true y_pred, 0)^2); 0/1 labels become -1/1.")
CategoricalHinge = _wrapper_class("CategoricalHinge", categorical_hinge, "categorical_hinge",
                                  "max(max((1 - y_true) y_pred) - sum(y_true y_pred) + 1, 0).")
KLDivergence = _wrapper_class("KLDivergence", kl_divergence, "kl_divergence",
                              "sum(y_true log(y_true / y_pred)), both clipped to [eps, 1].")
Poisson = _wrapper_class("Poisson", poisson, "poisson", "mean(y_pred - y_true log(y_pred + eps)).")
CosineSimilarity = _wrapper_class("CosineSimilarity", cosine_similarity, "cosine_similarity",
                                  "-sum(l2_normalize(y_true) l2_normalize(y_pred)) along axis.",
                                  axis=-1)
BinaryFocalCrossentropy = _wrapper_class(
    "BinaryFocalCrossentropy", binary_focal_crossentropy, "binary_focal_crossentropy",
    "Binary crossentropy scaled by (1 - p_t)^gamma (and alpha balancing).",
    apply_class_balancing=False, alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0,
    axis=-1)
CategoricalFocalCrossentropy = _wrapper_class(
    "CategoricalFocalCrossentropy", categorical_focal_crossentropy,
    "categorical_focal_crossentropy", "Categorical crossentropy scaled by alpha (1 - p)^gamma.",
    alpha=0.25, gamma=2.0, from_logits=False, label_smoothing=0.0, axis=-1)
CategoricalGeneralizedCrossEntropy = _wrapper_class(
    "CategoricalGeneralizedCrossEntropy", categorical_generalized_cross_entropy,
    "categorical_generalized_cross_entropy", "(1 - p^q) / q of the true class's probability.",
    q=0.5)
Dice = _wrapper_class("Dice", dice, "dice", "1 - 2 sum(y_true y_pred) / (sum(y_true) + "
                      "sum(y_pred)) over ``axis``.", axis=None)
Tversky = _wrapper_class("Tversky", tversky, "tversky", "Dice with false positives weighted by "
                         "alpha and false negatives by beta.", alpha=0.5, beta=0.5, axis=None)

class Circle(_wrapper_class("Circle", _f.circle, "circle", "", gamma=80.0, margin=0.4,
                            remove_diagonal=True)):
    """Circle loss of L2-normalized embeddings and integer labels (Keras's ``circle``). Keras
    masks the queries whose loss is 0 (no positive or no negative pair) out of the mean: a direct
    call does so through ``reduce_weighted``'s mask, and inside fit, whose C++ step takes the
    plain batch mean, the traced per-query losses carry the same weights."""

    def call(self, y_true, y_pred):
        losses = _f.circle(y_true, y_pred, **self._fn_kwargs)
        return losses * _f.circle_mean_weights(losses)

    def __call__(self, y_true, y_pred, sample_weight=None):
        losses = _f.circle(_as_tensor(y_true), _as_tensor(y_pred, False), **self._fn_kwargs)
        return reduce_weighted(losses, sample_weight, self.reduction, mask=losses > 0.0)


circle = _f.circle
ctc = _f.ctc
CTC = _wrapper_class("CTC", ctc, "ctc", "Connectionist temporal classification: integer labels "
                     "(batch, max_length) padded with the blank 0 against logits (batch, time, "
                     "classes).")

_BY_NAME = {
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
    "mean_absolute_percentage_error": MeanAbsolutePercentageError,
    "mape": MeanAbsolutePercentageError,
    "mean_squared_logarithmic_error": MeanSquaredLogarithmicError,
    "msle": MeanSquaredLogarithmicError,
    "huber": Huber,
    "huber_loss": Huber,
    "log_cosh": LogCosh,
    "logcosh": LogCosh,
    "hinge": Hinge,
    "squared_hinge": SquaredHinge,
    "categorical_hinge": CategoricalHinge,
    "kl_divergence": KLDivergence,
    "kld": KLDivergence,
    "kullback_leibler_divergence": KLDivergence,
    "poisson": Poisson,
    "cosine_similarity": CosineSimilarity,
    "binary_focal_crossentropy": BinaryFocalCrossentropy,
    "categorical_focal_crossentropy": CategoricalFocalCrossentropy,
    "dice": Dice,
    "tversky": Tversky,
    "circle": Circle,
    "ctc": CTC,
}
_FUNCTIONS = {fn: cls for fn, cls in (
    (sparse_categorical_crossentropy, SparseCategoricalCrossentropy),
    (categorical_crossentropy, CategoricalCrossentropy),
    (binary_crossentropy, BinaryCrossentropy),
    (mean_squared_error, MeanSquaredError),
    (mean_absolute_error, MeanAbsoluteError),
    (mean_absolute_percentage_error, MeanAbsolutePercentageError),
    (mean_squared_logarithmic_error, MeanSquaredLogarithmicError),
    (huber, Huber), (log_cosh, LogCosh), (hinge, Hinge), (squared_hinge, SquaredHinge),
    (categorical_hinge, CategoricalHinge), (kl_divergence, KLDivergence), (poisson, Poisson),
    (cosine_similarity, CosineSimilarity), (binary_focal_crossentropy, BinaryFocalCrossentropy),
    (categorical_focal_crossentropy, CategoricalFocalCrossentropy), (dice, Dice),
    (tversky, Tversky), (circle, Circle), (ctc, CTC))}


def check_fit_reduction(loss):
    """compile()'s check: the C++ step averages the (weighted) per-example losses over the batch,
    which is Keras's 'sum_over_batch_size' (and 'mean'); refuse the reductions it would get
    wrong rather than train on another number than Keras."""
    reduction = getattr(loss, "reduction", "sum_over_batch_size")
    if reduction not in ("sum_over_batch_size", "mean"):
        raise NotImplementedError(
            f"compile(loss=...) with reduction={reduction!r} is not supported by gpuaccel yet: "
            f"fit and evaluate average the loss over the batch (reduction="
            f"'sum_over_batch_size'); use that, or call the loss yourself in a custom "
            f"train_step")


# Serialized dicts name classes; bare names go through get() (Keras's loss names and aliases).
_REGISTRY = KerasObjectRegistry(
    "loss", "keras.losses", Loss, {cls.__name__: cls for cls in set(_BY_NAME.values())},
    unknown_hint="an unknown loss class; known: {names}; pass custom_objects for your own",
    resolve_name=lambda name: get(name))


def serialize(loss):
    """Keras's serialized form of a loss object: its class name and ``get_config()``."""
    return _REGISTRY.serialize(loss)


def deserialize(config, custom_objects=None):
    """The loss ``serialize`` described (a dict), or the one a Keras name stands for."""
    return _REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """A Loss instance for ``identifier``: a Loss, one of Keras's names, one of the loss
    functions above, or any Python function ``fn(y_true, y_pred)``."""
    if isinstance(identifier, Loss):
        return identifier
    if isinstance(identifier, str):
        cls = _BY_NAME.get(identifier.lower()) or _BY_NAME.get(identifier)
        if cls is None:
            raise ValueError(f"Could not interpret loss identifier: {identifier!r}. Known "
                             f"names: {sorted(_BY_NAME)}")
        return cls()
    if identifier in _FUNCTIONS:
        return _FUNCTIONS[identifier]()
    if isinstance(identifier, type) and issubclass(identifier, Loss):
        return identifier()
    if callable(identifier) and not isinstance(identifier, type):
        return LossFunctionWrapper(identifier)
    raise ValueError(f"Could not interpret loss identifier: {identifier!r}. compile() takes a "
                     f"keras.losses class instance, one of {sorted(_BY_NAME)}, or a function "
                     "fn(y_true, y_pred)")
