"""``keras.metrics``: the ``Metric`` base a Python metric subclasses, the built-in running-mean
metrics accumulated by C++ (``cpp/nn/metrics.cc``), and how ``compile(metrics=[...])`` turns names
into them (Keras's rule for 'accuracy': the variant that fits the loss: sparse categorical,
categorical or binary)."""
import re

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor, zeros_like
from . import losses as _losses


def _as_tensor(value):
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value)
    if array.dtype == np.float64:
        array = array.astype(np.float32)
    return tensor(array)


def _snake_case(class_name):
    """Keras's default metric name: ``BinaryTruePositives`` -> 'binary_true_positives'."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", class_name).lower()


class Metric:
    """``keras.metrics.Metric``: the base of a metric written in Python (Keras 3's contract:
    state made with ``add_variable``/``add_weight`` in ``__init__``, ``update_state(y_true,
    y_pred, sample_weight=None)``, ``result()``, ``reset_state()``). ``fit``/``evaluate`` run
    such a metric's ``update_state`` in Python once per batch (``_host_metrics.py``); the
    built-in metrics below derive from ``_CppMetric`` and accumulate in the C++ step."""

    def __init__(self, dtype=None, name=None):
        self.name = name or _snake_case(type(self).__name__)
        self.dtype = str(getattr(dtype, "name", dtype) or "float32")
        self._variables = []

    def _check_super_called(self):
        if "_variables" not in self.__dict__:
            raise RuntimeError("You forgot to call `super().__init__()` in the `__init__()` "
                               "method. Go add it!")  # Keras's words

    def add_variable(self, shape, initializer, dtype=None, aggregation="sum", name=None):
        """A state variable (a tensor with ``assign``/``assign_add``), zeroed by ``reset_state``."""
        self._check_super_called()
        from ._python_layer import initial_value
        shape = () if shape is None else tuple(shape)
        name = name or f"variable_{len(self._variables)}"
        value = initial_value(initializer, shape, str(getattr(dtype, "name", dtype)
                                                      or self.dtype), self, name)
        self._variables.append(value)
        return value

    def add_weight(self, shape=(), initializer=None, dtype=None, name=None):
        """Keras keeps ``add_weight`` as an alias of ``add_variable``."""
        return self.add_variable(shape, "zeros" if initializer is None else initializer,
                                 dtype=dtype, name=name)

    @property
    def variables(self):
        return list(self.__dict__.get("_variables", []))

    def update_state(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define update_state(y_true, "
                                  f"y_pred, sample_weight=None)")

    def result(self):
        raise NotImplementedError(f"{type(self).__name__} must define result()")

    def reset_state(self):
        """Keras's default: every state variable back to zeros."""
        for variable in self.variables:
            variable.assign(zeros_like(variable))

    def __call__(self, *args, **kwargs):
        self._check_super_called()
        self.update_state(*args, **kwargs)
        return self.result()

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


class _CppMetric(Metric):
    """A built-in metric: a running mean of a per-example value accumulated by C++ inside the
    training step (``nn::Metric``)."""

    _kind = None
    _default_name = None

    def __init__(self, name=None, dtype=None, threshold=0.5):
        super().__init__(dtype=dtype, name=name or self._default_name)
        self._cpp = _C.Metric(self.name, self._kind, float(threshold))

    def update_state(self, y_true, y_pred, sample_weight=None):
        if sample_weight is not None:
            raise NotImplementedError("sample_weight is not supported by gpuaccel's built-in "
                                      "metrics' update_state yet (compile(weighted_metrics=[...]) "
                                      "weighs them in fit and evaluate)")
        self._cpp.update(_as_tensor(y_true), _as_tensor(y_pred))

    def result(self):
        return tensor(np.float32(self._cpp.result()))

    def reset_state(self):
        self._cpp.reset()


class _WeightedMean(Metric):
    """A built-in metric listed in ``compile(weighted_metrics=[...])``: Keras's weighted mean
    ``sum(value * w) / sum(w)`` of the C++ per-example values, kept in float64 on the host."""

    def __init__(self, builtin, name):
        super().__init__(dtype=builtin.dtype, name=name)
        self._builtin = builtin
        self.reset_state()

    def update_state(self, y_true, y_pred, sample_weight=None):
        values = _C.detach(self._builtin._cpp.values(_as_tensor(y_true), _as_tensor(y_pred)))
        values = np.asarray(values.numpy(), np.float64).reshape(-1)
        if sample_weight is None:
            weights = np.ones_like(values)
        else:
            weights = np.asarray(_C.detach(_as_tensor(sample_weight)).numpy(), np.float64)
            weights = np.broadcast_to(weights.reshape(-1), values.shape)
        self._total += float(np.sum(values * weights))
        self._count += float(np.sum(weights))

    def result(self):
        return tensor(np.float32(self._total / self._count if self._count else 0.0))

    def reset_state(self):
        self._total = 0.0
        self._count = 0.0


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


class Mean:
    """``keras.metrics.Mean``: the (weighted) mean of every value passed to ``update_state``,
    as in the expert quickstart's ``train_loss(loss)``. Sums are kept in float64 on the host."""

    def __init__(self, name="mean", dtype=None):
        self.name = name
        self.dtype = dtype or "float32"
        self.reset_state()

    def _values(self, values, sample_weight):
        array = np.asarray(_C.detach(values).numpy() if isinstance(values, Tensor) else values,
                           dtype=np.float64)
        if sample_weight is None:
            return array, np.ones_like(array)
        weight = np.asarray(_C.detach(sample_weight).numpy() if isinstance(sample_weight, Tensor)
                            else sample_weight, dtype=np.float64)
        try:
            weight = np.broadcast_to(weight, array.shape)
        except ValueError as error:
            raise ValueError(f"sample_weight of shape {weight.shape} does not broadcast to the "
                             f"values' shape {array.shape}") from error
        return array, weight

    def update_state(self, values, sample_weight=None):
        array, weight = self._values(values, sample_weight)
        self._total += float(np.sum(array * weight))
        self._count += float(np.sum(weight))

    def result(self):
        return tensor(np.float32(self._total / self._count if self._count else 0.0))

    def reset_state(self):
        self._total = 0.0
        self._count = 0.0

    def __call__(self, values, sample_weight=None):
        self.update_state(values, sample_weight)
        return self.result()

    @property
    def variables(self):
        return [tensor(np.float32(self._total)), tensor(np.float32(self._count))]

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


class Sum(Mean):
    """``keras.metrics.Sum``: the running (weighted) sum."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name, dtype)

    def result(self):
        return tensor(np.float32(self._total))


_BY_NAME = {
    "sparse_categorical_accuracy": SparseCategoricalAccuracy,
    "categorical_accuracy": CategoricalAccuracy,
    "binary_accuracy": BinaryAccuracy,
    "mean_squared_error": MeanSquaredError,
    "mse": MeanSquaredError,
    "mean_absolute_error": MeanAbsoluteError,
    "mae": MeanAbsoluteError,
}


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
    """A Metric for ``identifier`` (an instance, a class, or a Keras name). 'accuracy'/'acc'
    become the variant that fits ``loss`` and keep the name the user wrote, as in Keras."""
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
    raise ValueError(f"Could not interpret metric identifier: {identifier!r}. Known names: "
                     f"{sorted(_BY_NAME) + ['accuracy', 'acc']}, or a keras.metrics.Metric")
