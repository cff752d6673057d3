"""``keras.metrics.Metric`` and the reduction metrics every other metric builds on (``Mean``,
``Sum``, ``MeanMetricWrapper``), apart from ``metrics.py`` so that the metric families in their
own files (``_confusion_metrics.py``, ``_score_metrics.py``, ...) can subclass them without an
import circle.

Built-in metrics keep their state on the host in float64 (Keras keeps float32 variables; the
extra precision only removes rounding): they update in Python once per batch inside fit
(``_host_metrics.py``), on predictions that are already computed."""
import re

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor, zeros_like


def _snake_case(class_name):
    """Keras's default metric name: ``BinaryTruePositives`` -> 'binary_true_positives'."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", class_name).lower()


def host(value, dtype=np.float64):
    """``value`` (a Tensor, array or number) as a NumPy array of ``dtype`` (None keeps it)."""
    if isinstance(value, Tensor):
        value = _C.detach(value).numpy()
    return np.asarray(value, dtype=dtype)


def aligned(y_true, y_pred):
    """Keras's squeeze_or_expand_to_same_rank of two host arrays."""
    if y_true.ndim == y_pred.ndim + 1 and y_true.shape[-1] == 1:
        y_true = y_true[..., 0] if y_pred.ndim != 1 else y_true
        y_pred = y_pred[:, None] if y_pred.ndim == 1 else y_pred
    elif y_pred.ndim == y_true.ndim + 1 and y_pred.shape[-1] == 1:
        y_pred = y_pred[..., 0] if y_true.ndim != 1 else y_pred
        y_true = y_true[:, None] if y_true.ndim == 1 else y_true
    return y_true, y_pred


def samplewise(values, sample_weight, reduce_fn):
    """Keras's ``reduce_to_samplewise_values``: (one value per sample, its weight or None), the
    values reduced by ``reduce_fn`` (np.mean or np.sum) over the axes the weights lack."""
    values = host(values)
    weight = None
    if sample_weight is not None:
        values, weight = aligned(values, host(sample_weight))
        if values.ndim > weight.ndim:
            values = reduce_fn(values, axis=tuple(range(weight.ndim, values.ndim)))
        try:
            weight = np.broadcast_to(weight, values.shape)
        except ValueError as error:
            raise ValueError(f"sample_weight of shape {weight.shape} does not broadcast to the "
                             f"values' shape {values.shape}") from error
        values = values * weight
        if weight.ndim > 1:
            weight = reduce_fn(weight, axis=tuple(range(1, weight.ndim)))
    if values.ndim > 1:
        values = reduce_fn(values, axis=tuple(range(1, values.ndim)))
    return values, weight


class Metric:
    """``keras.metrics.Metric``: the base of a metric written in Python (Keras 3's contract:
    state made with ``add_variable``/``add_weight`` in ``__init__``, ``update_state(y_true,
    y_pred, sample_weight=None)``, ``result()``, ``reset_state()``). ``fit``/``evaluate`` run
    such a metric's ``update_state`` in Python once per batch (``_host_metrics.py``); the
    built-in metrics of ``metrics._CppMetric`` accumulate in the C++ step."""

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


class HostStateMetric(Metric):
    """A built-in metric whose state is NumPy arrays on the host, named in ``_state`` and made
    by ``_initial_state()``; ``variables`` shows them as tensors, as Keras's variables."""

    def __init__(self, name=None, dtype=None):
        super().__init__(dtype=dtype, name=name)
        self.reset_state()

    def _initial_state(self):
        raise NotImplementedError

    def reset_state(self):
        """Every state value back to zeros, keeping the shapes an update gave it (Keras builds
        per-class variables on the first update and keeps them)."""
        state = getattr(self, "_state", None)
        self._state = self._initial_state() if state is None else {
            key: np.zeros_like(np.asarray(value)) for key, value in state.items()}

    @property
    def variables(self):
        return [tensor(np.asarray(v, np.float32)) for v in self._state.values()]

    def _result(self, value):
        return tensor(np.asarray(value, np.float32))


class Sum(HostStateMetric):
    """``keras.metrics.Sum``: the running (weighted) sum."""

    def __init__(self, name="sum", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def _initial_state(self):
        return {"total": 0.0}

    def update_state(self, values, sample_weight=None):
        values, _ = samplewise(values, sample_weight, np.sum)
        self._state["total"] += float(np.sum(values))

    def result(self):
        return self._result(self._state["total"])


class Mean(HostStateMetric):
    """``keras.metrics.Mean``: the (weighted) mean of every value passed to ``update_state``,
    as in the expert quickstart's ``train_loss(loss)``; Keras's rule: values are first averaged
    to one per sample (over the axes the weights lack), counted by the weights' sum."""

    def __init__(self, name="mean", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def _initial_state(self):
        return {"total": 0.0, "count": 0.0}

    def update_state(self, values, sample_weight=None):
        values, weight = samplewise(values, sample_weight, np.mean)
        self._state["total"] += float(np.sum(values))
        if weight is not None:
            self._state["count"] += float(np.sum(weight))
        else:
            self._state["count"] += float(values.shape[0] if values.ndim else 1)

    def result(self):
        total, count = self._state["total"], self._state["count"]
        return self._result(total / count if count else 0.0)


class MeanMetricWrapper(Mean):
    """``keras.metrics.MeanMetricWrapper``: the weighted mean of ``fn(y_true, y_pred,
    **kwargs)``, the per-example values of a function (the loss functions' formulas)."""

    def __init__(self, fn, name=None, dtype=None, **kwargs):
        self._fn = fn
        self._fn_kwargs = kwargs
        super().__init__(name=name or getattr(fn, "__name__", None), dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        super().update_state(self._fn(y_true, y_pred, **self._fn_kwargs), sample_weight)

    def get_config(self):
        return {**super().get_config(), **self._fn_kwargs}

    @classmethod
    def from_config(cls, config):
        if cls is MeanMetricWrapper:
            raise ValueError("MeanMetricWrapper.from_config needs the function: build it with "
                             "MeanMetricWrapper(fn, ...)")
        return cls(**config)
