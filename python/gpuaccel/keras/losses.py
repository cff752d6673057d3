"""``keras.losses``: Keras's loss classes and functions, computed by the C++ losses
(``cpp/nn/losses.cc``) in float32 with Keras's default reduction (the mean over examples).

``model.compile(loss=...)`` accepts an instance of these classes or one of Keras's names
('sparse_categorical_crossentropy', 'categorical_crossentropy', 'binary_crossentropy',
'mean_squared_error' / 'mse'), a Python function ``fn(y_true, y_pred)``, or a subclass of
``Loss`` with its own ``call(y_true, y_pred)``. Python losses are traced once per input
signature and replayed inside the C++ step, as Python layers are (cpp/nn/traced_function.h)."""
import re
import warnings
import weakref

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor

_REDUCTIONS = ("sum_over_batch_size", "sum", "none", None)


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


class Loss:
    """Base class: ``loss(y_true, y_pred)`` -> a float32 scalar (or per-example values with
    ``reduction=None``/'none'). A subclass may define ``call(y_true, y_pred)`` in Python."""

    _kind = None
    _default_name = None

    def __init__(self, name=None, reduction="sum_over_batch_size", from_logits=False,
                 label_smoothing=0.0, dtype=None):
        if reduction not in _REDUCTIONS:
            raise ValueError(f"Invalid value for argument `reduction`. Expected one of "
                             f"{_REDUCTIONS}. Received: reduction={reduction!r}")
        self.reduction = reduction
        self.from_logits = bool(from_logits)
        self.label_smoothing = float(label_smoothing)
        if type(self).call is not Loss.call:
            self.name = name or re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()
            call = weakref.WeakMethod(self.call)  # the C++ loss must not keep self alive
            self._cpp, self._traced = _python_loss(self.name, lambda a, b: call()(a, b))
        else:
            self.name = name or self._default_name
            self._cpp = _C.Loss(self._kind, self.from_logits, self.label_smoothing)

    def call(self, y_true, y_pred):
        raise NotImplementedError(f"{type(self).__name__} must define call(y_true, y_pred)")

    def __call__(self, y_true, y_pred, sample_weight=None):
        if sample_weight is not None:
            raise NotImplementedError("sample_weight is not supported by gpuaccel losses yet")
        per_example = self._cpp.per_example(_as_tensor(y_true), _as_tensor(y_pred, False))
        if self.reduction in ("none", None):
            return per_example
        total = per_example.sum()
        return total if self.reduction == "sum" else total / max(per_example.numel(), 1)

    def get_config(self):
        return {"name": self.name, "reduction": self.reduction}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r} from_logits={self.from_logits}>"


class LossFunctionWrapper(Loss):
    """A Python function ``fn(y_true, y_pred)`` as a loss (what compile() makes of one)."""

    def __init__(self, fn, name=None, reduction="sum_over_batch_size", **kwargs):
        self.fn = fn
        self._fn_kwargs = kwargs
        super().__init__(name=name or getattr(fn, "__name__", "loss"), reduction=reduction)

    def call(self, y_true, y_pred):
        return self.fn(y_true, y_pred, **self._fn_kwargs)


class SparseCategoricalCrossentropy(Loss):
    """Integer class labels (N,) or (N, 1) against (N, C) probabilities or logits."""
    _kind = "sparse_categorical_crossentropy"
    _default_name = "sparse_categorical_crossentropy"

    def __init__(self, from_logits=False, ignore_class=None, reduction="sum_over_batch_size",
                 name="sparse_categorical_crossentropy"):
        if ignore_class is not None:
            raise NotImplementedError("SparseCategoricalCrossentropy(ignore_class=...) is not "
                                      "supported by gpuaccel yet")
        super().__init__(name, reduction, from_logits)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits, "ignore_class": None}


class CategoricalCrossentropy(Loss):
    """One-hot (or probability) labels (N, C) against probabilities or logits."""
    _kind = "categorical_crossentropy"
    _default_name = "categorical_crossentropy"

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="categorical_crossentropy"):
        if axis != -1:
            raise NotImplementedError("CategoricalCrossentropy supports axis=-1 only")
        super().__init__(name, reduction, from_logits, label_smoothing)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": -1}


class BinaryCrossentropy(Loss):
    """Labels in [0, 1] against probabilities or logits of the same shape; the mean over the
    last axis is the per-example loss."""
    _kind = "binary_crossentropy"
    _default_name = "binary_crossentropy"

    def __init__(self, from_logits=False, label_smoothing=0.0, axis=-1,
                 reduction="sum_over_batch_size", name="binary_crossentropy"):
        if axis != -1:
            raise NotImplementedError("BinaryCrossentropy supports axis=-1 only")
        super().__init__(name, reduction, from_logits, label_smoothing)

    def get_config(self):
        return {**super().get_config(), "from_logits": self.from_logits,
                "label_smoothing": self.label_smoothing, "axis": -1}


class MeanSquaredError(Loss):
    _kind = "mean_squared_error"
    _default_name = "mean_squared_error"

    def __init__(self, reduction="sum_over_batch_size", name="mean_squared_error"):
        super().__init__(name, reduction)


def _per_example(cls, **kwargs):
    def fn(y_true, y_pred):
        return cls(reduction="none", **kwargs)(y_true, y_pred)
    return fn


def sparse_categorical_crossentropy(y_true, y_pred, from_logits=False):
    return _per_example(SparseCategoricalCrossentropy, from_logits=from_logits)(y_true, y_pred)


def categorical_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    return _per_example(CategoricalCrossentropy, from_logits=from_logits,
                        label_smoothing=label_smoothing)(y_true, y_pred)


def binary_crossentropy(y_true, y_pred, from_logits=False, label_smoothing=0.0):
    return _per_example(BinaryCrossentropy, from_logits=from_logits,
                        label_smoothing=label_smoothing)(y_true, y_pred)


def mean_squared_error(y_true, y_pred):
    return _per_example(MeanSquaredError)(y_true, y_pred)


mse = MSE = mean_squared_error

_BY_NAME = {
    "sparse_categorical_crossentropy": SparseCategoricalCrossentropy,
    "categorical_crossentropy": CategoricalCrossentropy,
    "binary_crossentropy": BinaryCrossentropy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
}
_FUNCTIONS = {
    sparse_categorical_crossentropy: SparseCategoricalCrossentropy,
    categorical_crossentropy: CategoricalCrossentropy,
    binary_crossentropy: BinaryCrossentropy,
    mean_squared_error: MeanSquaredError,
}


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
