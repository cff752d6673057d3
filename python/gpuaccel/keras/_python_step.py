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


def warn_once(model, name):
    key = (type(model), name)
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"gpuaccel: {type(model).__name__}.{name}() is Python, so each batch runs "
                      f"it eagerly (it cannot be traced into the C++ training step)",
                      RuntimeWarning, stacklevel=3)


def _batch(xs, y, sample_weight):
    x = xs[0] if len(xs) == 1 else tuple(xs)
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
    for the other one."""

    def __init__(self, model, cpp_trainer):
        self.model = model
        self._cpp = cpp_trainer
        self._logs = None
        self.host_reads = 0

    def train_step(self, xs, y, sample_weight=None):
        if not overrides(self.model, "train_step"):
            return self._cpp.train_step(xs, y, *([] if sample_weight is None else [sample_weight]))
        self._logs = self.model.train_step(_batch(xs, y, sample_weight))

    def test_step(self, xs, y, sample_weight=None):
        if not overrides(self.model, "test_step"):
            return self._cpp.test_step(xs, y, *([] if sample_weight is None else [sample_weight]))
        self._logs = self.model.test_step(_batch(xs, y, sample_weight))

    def reset_metrics(self):
        self._logs = None
        self._cpp.reset_metrics()
        self.model.reset_metrics()

    def results(self):
        if self._logs is None:
            return self._cpp.results()
        return [(name, float(value.numpy() if isinstance(value, Tensor) else value))
                for name, value in _flat_logs(self._logs).items()]
