"""fit and evaluate for a model that overrides ``train_step``/``test_step``: Keras's contract
(the method gets one batch ``(x, y)`` or ``(x, y, sample_weight)`` and returns its logs) run in
Python on every batch. This is the eager fallback: a Python step cannot be traced into the C++
step (it updates Python metric objects and calls the optimizer itself), so fit says so once.

``PythonStepTrainer`` answers the calls fit's loop makes on ``_C.Trainer`` (``train_step``,
``test_step``, ``reset_metrics``, ``results``), so the epoch loop, callbacks and validation
stay the same."""
import warnings

from .._tensor import Tensor

_warned = set()


def overrides(model, name):
    """Whether the model's class defines its own ``name`` ('train_step' or 'test_step')."""
    return getattr(type(model), name, None) is not None


def runs_without_graph(model, name):
    """Whether ``model`` steps by its own ``name`` ('train_step'/'test_step') with no layer
    graph of its own: a Model subclass without ``call`` or inputs that only drives the models
    it holds (the guides' GAN), which Keras fits as it is."""
    return (overrides(model, name) and model._cpp_graph is None and not model._is_subclassed()
            and not hasattr(model, "inputs"))


def warn_once(model, name):
    key = (type(model), name)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"gpuaccel: {type(model).__name__}.{name}() is Python, so each batch runs "
                      f"it eagerly (it cannot be traced into the C++ training step)",
                      RuntimeWarning, stacklevel=3)


def _batch(xs, y, sample_weight, labels_absent=False):
    """The step's ``data``: (x, y) or (x, y, sample_weight); ``x`` alone where the data has no
    labels (the ones fit put in their place are left out), as Keras passes it."""
    x = xs[0] if len(xs) == 1 else tuple(xs)
    if labels_absent:
        return x if sample_weight is None else (x, None, sample_weight)
    return (x, y) if sample_weight is None else (x, y, sample_weight)


def _flat_logs(logs, out=None):
    """Keras flattens nested dicts of logs (a CompileMetrics result) into one level."""
    out = {} if out is None else out
    for name, value in (logs or {}).items():
        if isinstance(value, dict):
            _flat_logs(value, out)
        else:
            out[name] = value
    return out


class PythonStepTrainer:
    """The model's own ``train_step``/``test_step`` where it overrides them; the C++ trainer's
    for the other one (None for a model without a graph: ``runs_without_graph``)."""

    def __init__(self, model, cpp_trainer, labels_absent=False):
        self.model = model
        self._cpp = cpp_trainer
        self._labels_absent = labels_absent  # the data's labels are fit's placeholders
        self._logs = None
        self.host_reads = 0

    def train_step(self, xs, y, sample_weight=None):
        if not overrides(self.model, "train_step"):
            return self._cpp.train_step(xs, y, *([] if sample_weight is None else [sample_weight]))
        self._logs = self.model.train_step(_batch(xs, y, sample_weight, self._labels_absent))

    def test_step(self, xs, y, sample_weight=None):
        if not overrides(self.model, "test_step"):
            return self._cpp.test_step(xs, y, *([] if sample_weight is None else [sample_weight]))
        self._logs = self.model.test_step(_batch(xs, y, sample_weight, self._labels_absent))

    def reset_metrics(self):
        self._logs = None
        if self._cpp is not None:
            self._cpp.reset_metrics()
        self.model.reset_metrics()

    def results(self):
        if self._logs is None:
            return [] if self._cpp is None else self._cpp.results()
        return [(name, float(value.numpy() if isinstance(value, Tensor) else value))
                for name, value in _flat_logs(self._logs).items()]
