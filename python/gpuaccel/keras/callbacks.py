"""``keras.callbacks``: the hooks ``fit``/``evaluate``/``predict`` call, with Keras 3's semantics.

The training loop talks to one :class:`CallbackList`. Per-step work is the costly part (a tiny
model's step is ~50 us), so the list works out once per run which callbacks really implement
batch hooks and dispatches batch events only to those; ``needs_batch_hooks('train')`` tells
the loop whether it need build batch logs at all. Batch ``logs`` may also be handed over as a
zero-argument callable: it is called once, only if a listener other than the progress bar
wants the values, and the bar calls it only when it draws.

The model interface these callbacks use: ``model.stop_training``, ``model.optimizer.
learning_rate`` (a settable float), ``model.get_weights()`` / ``set_weights(list)``,
``model.save_weights(path)``, ``model.save(path)``, ``model.history``.
"""
import csv
import inspect
import math
import numbers
import os
import warnings

import numpy as np

from . import _progbar
from ._progbar import Progbar
from ._callback import Callback
# Each is most of a subsystem, so it has a module of its own (subclassing _callback.Callback).
from ._backup_and_restore import BackupAndRestore
from ._remote_monitor import RemoteMonitor
from ._swap_ema_weights import SwapEMAWeights
from ._tensorboard_callback import TensorBoard

__all__ = [
    "Callback", "CallbackList", "History", "ProgbarLogger", "EarlyStopping", "ModelCheckpoint",
    "LearningRateScheduler", "CSVLogger", "TerminateOnNaN", "ReduceLROnPlateau",
    "LambdaCallback", "TensorBoard", "BackupAndRestore", "RemoteMonitor", "SwapEMAWeights",
]


def _print(message):
    _progbar._write(f"{message}\n")


def _to_python(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def _pythonify_logs(logs):
    """A new dict, keys sorted, nested dicts flattened, numbers as Python floats (Keras)."""
    if not logs:
        return {}
    result = {}
    for key, value in sorted(logs.items(), key=lambda kv: str(kv[0])):
        if isinstance(value, dict):
            result.update(_pythonify_logs(value))
        else:
            result[key] = _to_python(value)
    return result


_MODES = ("train", "test", "predict")


class CallbackList(Callback):
    """All of a run's callbacks behind one object; the loop calls its hooks.

    ``add_history`` / ``add_progbar`` append a :class:`History` / :class:`ProgbarLogger`
    unless one is already in ``callbacks``. ``params`` (``verbose``, ``epochs``, ``steps``)
    are handed to every callback.
    """

    def __init__(self, callbacks=None, add_history=False, add_progbar=False, model=None,
                 **params):
        super().__init__()
        self.callbacks = _flatten(callbacks) if callbacks else []
        self._history = None
        self._progbar = None
        for cb in self.callbacks:
            if isinstance(cb, ProgbarLogger):
                self._progbar = cb
            elif isinstance(cb, History):
                self._history = cb
        if self._history is None and add_history:
            self._history = History()
            self.callbacks.append(self._history)
        if self._progbar is None and add_progbar:
            self._progbar = ProgbarLogger()
            self.callbacks.append(self._progbar)
        self.set_model(model)
        self.set_params(params)

    def append(self, callback):
        self.callbacks.append(callback)
        if self._model is not None:
            callback.set_model(self._model)
        if self.params:
            callback.set_params(self.params)
        self._refresh_batch_hooks()

    def set_params(self, params):
        self.params = params
        if params:
            for cb in self.callbacks:
                cb.set_params(params)
        self._refresh_batch_hooks()

    def set_model(self, model):
        if model is None:
            return
        super().set_model(model)
        if self._history is not None:
            model.history = self._history
        for cb in self.callbacks:
            cb.set_model(model)

    # -- batch-hook bookkeeping ------------------------------------------------------------

    def _refresh_batch_hooks(self):
        """Work out, per mode, the bound batch hooks worth calling."""
        self._batch_hooks = {}
        self._lazy_ok = {}
        for mode in _MODES:
            listeners = [cb for cb in self.callbacks
                         if getattr(cb, f"_implements_{mode}_batch_hooks")()]
            for when in ("begin", "end"):
                name = f"on_{mode}_batch_{when}"
                self._batch_hooks[name] = [getattr(cb, name) for cb in listeners]
                # The progress bar (and any callback saying so) accepts logs as a callable and
                # resolves it only when it needs the values.
                self._lazy_ok[name] = all(getattr(cb, "_accepts_lazy_logs", False)
                                          for cb in listeners)

    def needs_batch_hooks(self, mode="train"):
        """Whether any callback listens to ``mode``'s batch events ('train', 'test',
        'predict'). When False the loop may skip the per-batch calls and their logs."""
        hooks = self._batch_hooks
        return bool(hooks[f"on_{mode}_batch_begin"] or hooks[f"on_{mode}_batch_end"])

    def needs_batch_logs(self, mode="train"):
        """Whether a listener of ``mode``'s batch events wants the values eagerly (anything
        but the progress bar); when False, a callable for ``logs`` is only called to draw."""
        return not (self._lazy_ok[f"on_{mode}_batch_begin"]
                    and self._lazy_ok[f"on_{mode}_batch_end"])

    def _dispatch_batch(self, name, batch, logs):
        hooks = self._batch_hooks[name]
        if not hooks:
            return
        if callable(logs) and not self._lazy_ok[name]:
            logs = logs()
        if logs is None:
            logs = {}
        for hook in hooks:
            hook(batch, logs=logs)

    # -- batch hooks -----------------------------------------------------------------------

    def on_batch_begin(self, batch, logs=None):
        self._dispatch_batch("on_train_batch_begin", batch, logs)

    def on_batch_end(self, batch, logs=None):
        self._dispatch_batch("on_train_batch_end", batch, logs)

    def on_train_batch_begin(self, batch, logs=None):
        self._dispatch_batch("on_train_batch_begin", batch, logs)

    def on_train_batch_end(self, batch, logs=None):
        self._dispatch_batch("on_train_batch_end", batch, logs)

    def on_test_batch_begin(self, batch, logs=None):
        self._dispatch_batch("on_test_batch_begin", batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        self._dispatch_batch("on_test_batch_end", batch, logs)

    def on_predict_batch_begin(self, batch, logs=None):
        self._dispatch_batch("on_predict_batch_begin", batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._dispatch_batch("on_predict_batch_end", batch, logs)

    # -- epoch and run hooks ---------------------------------------------------------------

    def on_epoch_begin(self, epoch, logs=None):
        logs = _pythonify_logs(logs)
        for cb in self.callbacks:
            cb.on_epoch_begin(epoch, logs)

    def on_epoch_end(self, epoch, logs=None):
        # One dict shared by all: a callback may add to it (LearningRateScheduler adds
        # 'learning_rate', which History then records).
        logs = _pythonify_logs(logs)
        for cb in self.callbacks:
            cb.on_epoch_end(epoch, logs)

    def _on_begin(self, name, logs):
        logs = _pythonify_logs(logs)
        for cb in self.callbacks:
            getattr(cb, name)(logs)
        # After the callbacks: what they listen to may depend on the run (ProgbarLogger is
        # silent during fit's validation).
        self._refresh_batch_hooks()

    def _on_end(self, name, logs):
        logs = _pythonify_logs(logs)
        for cb in self.callbacks:
            getattr(cb, name)(logs)
        self._refresh_batch_hooks()

    def on_train_begin(self, logs=None):
        self._on_begin("on_train_begin", logs)

    def on_train_end(self, logs=None):
        self._on_end("on_train_end", logs)

    def on_test_begin(self, logs=None):
        self._on_begin("on_test_begin", logs)

    def on_test_end(self, logs=None):
        self._on_end("on_test_end", logs)

    def on_predict_begin(self, logs=None):
        self._on_begin("on_predict_begin", logs)

    def on_predict_end(self, logs=None):
        self._on_end("on_predict_end", logs)

    def __iter__(self):
        return iter(self.callbacks)

    def __len__(self):
        return len(self.callbacks)


def _flatten(callbacks):
    """The callbacks of ``fit(callbacks=...)`` as a flat list; a TypeError naming the entry
    for anything that is not a Callback (Keras fails later with an AttributeError about
    ``set_model``)."""
    if isinstance(callbacks, Callback):
        return [callbacks]
    if not isinstance(callbacks, (list, tuple)):
        raise TypeError("callbacks must be a list of keras.callbacks.Callback instances; got "
                        f"{type(callbacks).__name__}: {callbacks!r}")
    out = []
    for index, cb in enumerate(callbacks):
        if isinstance(cb, (list, tuple)):
            out.extend(_flatten(cb))
        elif isinstance(cb, Callback):
            out.append(cb)
        else:
            kind = "a class, not an instance: add ()" if isinstance(cb, type) else \
                f"a {type(cb).__name__}"
            raise TypeError(f"callbacks[{index}] must be a keras.callbacks.Callback instance "
                            f"(subclass gpuaccel.keras.callbacks.Callback); got {cb!r}, "
                            f"{kind}")
    return out


class History(Callback):
    """Records each epoch's logs: ``history`` maps a metric name to its per-epoch values,
    ``epoch`` lists the epoch indices. ``fit`` returns it (and sets ``model.history``)."""

    def __init__(self):
        super().__init__()
        self.history = {}
        self.epoch = []

    def on_train_begin(self, logs=None):
        self.epoch = []

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        self.epoch.append(epoch)
        for key, value in logs.items():
            self.history.setdefault(key, []).append(value)
        if self.model is not None:
            self.model.history = self


class ProgbarLogger(Callback):
    """Prints progress and metrics to stdout: ``Epoch 1/5`` then the bar of each epoch
    (``verbose=1``), or one line per epoch (``verbose=2``). ``fit`` adds it unless
    ``verbose=0``; during ``fit`` its validation runs are silent."""

    _accepts_lazy_logs = True  # resolves callable batch logs only when it draws

    def __init__(self):
        super().__init__()
        self.seen = 0
        self.progbar = None
        self.target = None
        self.verbose = 1
        self.epochs = 1
        self._called_in_fit = False

    def set_params(self, params):
        verbose = params.get("verbose", 1)
        self.verbose = 1 if verbose == "auto" else verbose
        self.epochs = params.get("epochs", 1)
        self.target = params.get("steps")

    def _implements_train_batch_hooks(self):
        # Verbose 2 draws only at the epoch's end, but an unknown step count must be counted.
        return self.verbose == 1 or self.target is None

    def _implements_test_batch_hooks(self):
        return not self._called_in_fit and (self.verbose == 1 or self.target is None)

    def _implements_predict_batch_hooks(self):
        return self.verbose == 1 or self.target is None

    def on_train_begin(self, logs=None):
        self._called_in_fit = True

    def on_train_end(self, logs=None):
        self._called_in_fit = False

    def on_test_begin(self, logs=None):
        if not self._called_in_fit:
            self._reset_progbar()
            self._maybe_init_progbar()

    def on_predict_begin(self, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()

    def on_epoch_begin(self, epoch, logs=None):
        self._reset_progbar()
        self._maybe_init_progbar()
        if self.verbose and self.epochs > 1:
            _print(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, batch, logs=None):
        self._update_progbar(batch, logs)

    def on_test_batch_end(self, batch, logs=None):
        if not self._called_in_fit:
            self._update_progbar(batch, logs)

    def on_predict_batch_end(self, batch, logs=None):
        self._update_progbar(batch, None)  # predictions are not metrics

    def on_epoch_end(self, epoch, logs=None):
        self._finalize_progbar(logs)

    def on_test_end(self, logs=None):
        if not self._called_in_fit:
            self._finalize_progbar(logs)

    def on_predict_end(self, logs=None):
        self._finalize_progbar(logs)

    def _reset_progbar(self):
        self.seen = 0
        self.progbar = None

    def _maybe_init_progbar(self):
        if self.progbar is None:
            self.progbar = Progbar(target=self.target, verbose=self.verbose, unit_name="step",
                                   stateless_metrics=set())
            self.progbar._sort_new_names = True

    def _update_progbar(self, batch, logs=None):
        if self.progbar is None:
            self._maybe_init_progbar()
        self.seen = batch + 1
        if self.verbose == 1:
            self.progbar.update(self.seen, logs, finalize=False)

    def _finalize_progbar(self, logs):
        if self.progbar is None:
            self._maybe_init_progbar()
        if self.target is None:
            self.target = self.seen
            self.progbar.target = self.seen
        self.progbar.update(self.target, logs or {}, finalize=True)


# -- callbacks that watch a metric ---------------------------------------------------------

# Direction of well-known metric names when the model cannot tell (mode='auto').
_HIGHER_IS_BETTER = {
    "accuracy", "acc", "binary_accuracy", "categorical_accuracy",
    "sparse_categorical_accuracy", "top_k_categorical_accuracy",
    "sparse_top_k_categorical_accuracy", "auc", "precision", "recall", "f1_score",
    "fbeta_score", "r2_score", "iou", "mean_iou", "binary_iou", "one_hot_iou",
    "one_hot_mean_iou", "precision_at_recall", "recall_at_precision",
    "sensitivity_at_specificity", "specificity_at_sensitivity", "true_positives",
    "true_negatives",
}
_LOWER_IS_BETTER = {
    "loss", "mse", "mae", "mape", "msle", "mean_squared_error", "mean_absolute_error",
    "mean_absolute_percentage_error", "mean_squared_logarithmic_error",
    "root_mean_squared_error", "rmse", "binary_crossentropy", "categorical_crossentropy",
    "sparse_categorical_crossentropy", "kl_divergence", "kld", "poisson", "hinge",
    "squared_hinge", "categorical_hinge", "log_cosh_error", "logcosh", "false_positives",
    "false_negatives", "cosine_similarity_loss",
}


def _less(a, b):
    return a < b


def _greater(a, b):
    return a > b


class _MonitorCallback(Callback):
    """Shared by callbacks that watch ``monitor`` for improvement (Keras's MonitorCallback)."""

    def __init__(self, monitor="val_loss", mode="auto", baseline=None, min_delta=0):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"{type(self).__name__} mode '{mode}' is unknown, fallback to auto "
                          "mode.", stacklevel=3)
            mode = "auto"
        self.monitor = monitor
        self.mode = mode
        self.best = baseline
        self.min_delta = abs(min_delta)
        self.monitor_op = None

    def _metric_direction(self, name):
        """'up', 'down' or None: from the model's metric object of that name (its direction,
        else its class), else from the name itself."""
        for metric in _model_metrics(self.model):
            if getattr(metric, "name", None) == name:
                direction = getattr(metric, "_direction", None) or getattr(
                    metric, "direction", None)
                if direction in ("up", "down"):
                    return direction
                direction = _direction_from_class(type(metric).__name__)
                if direction is not None:
                    return direction
        if name in _HIGHER_IS_BETTER:
            return "up"
        if name in _LOWER_IS_BETTER or name.endswith("_loss"):
            return "down"
        return None

    def _set_monitor_op(self):
        if self.mode == "min":
            self.monitor_op = _less
        elif self.mode == "max":
            self.monitor_op = _greater
        else:
            metric_name = self.monitor[4:] if self.monitor.startswith("val_") else self.monitor
            direction = "down" if metric_name == "loss" else self._metric_direction(metric_name)
            if direction is None:
                raise ValueError(
                    f"{type(self).__name__} callback received monitor={self.monitor}, but "
                    "Keras isn't able to automatically determine whether that metric should "
                    "be maximized or minimized. Pass `mode='max'` in order to monitor based "
                    "on the highest metric value, or pass `mode='min'` in order to use the "
                    "lowest value.")
            self.monitor_op = _greater if direction == "up" else _less
        if self.monitor_op is _less:
            self.min_delta *= -1

    def _is_improvement(self, monitor_value, reference_value):
        if reference_value is None:
            return True
        return bool(self.monitor_op(monitor_value - self.min_delta, reference_value))


def _direction_from_class(class_name):
    lowered = class_name.lower()
    if any(w in lowered for w in ("accuracy", "auc", "precision", "recall", "iou", "score")):
        return "up"
    if any(w in lowered for w in ("error", "crossentropy", "loss", "divergence", "hinge")):
        return "down"
    return None


def _model_metrics(model):
    metrics = []
    for attr in ("metrics", "compiled_metrics"):
        try:
            found = getattr(model, attr, None)
        except Exception:  # noqa: BLE001 -- a property that needs a built model
            found = None
        if isinstance(found, (list, tuple)):
            metrics.extend(found)
    out = []
    for m in metrics:
        inner = getattr(m, "metrics", None)  # a container of compiled metrics
        if isinstance(inner, (list, tuple)):
            out.extend(inner)
        else:
            out.append(m)
    return out


class EarlyStopping(_MonitorCallback):
    """Stops ``fit`` once ``monitor`` has not improved by more than ``min_delta`` for
    ``patience`` epochs; optionally restores the weights of the best epoch."""

    def __init__(self, monitor="val_loss", min_delta=0, patience=0, verbose=0, mode="auto",
                 baseline=None, restore_best_weights=False, start_from_epoch=0):
        super().__init__(monitor, mode, min_delta=min_delta)
        self.patience = patience
        self.verbose = verbose
        self.baseline = baseline
        self.wait = 0
        self.stopped_epoch = 0
        self.restore_best_weights = restore_best_weights
        self.best_weights = None
        self.start_from_epoch = start_from_epoch
        self.best_epoch = 0

    def on_train_begin(self, logs=None):
        # An instance may be reused by several fit() calls.
        self.wait = 0
        self.stopped_epoch = 0
        self.best = None
        self.best_weights = None
        self.best_epoch = 0

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        current = self.get_monitor_value(logs)
        if current is None or epoch < self.start_from_epoch:
            return
        if self.restore_best_weights and self.best_weights is None:
            # The first monitored epoch is the best so far.
            self.best_weights = self.model.get_weights()
            self.best_epoch = epoch
        self.wait += 1
        if self._is_improvement(current, self.best):
            self.best = current
            self.best_epoch = epoch
            if self.restore_best_weights:
                self.best_weights = self.model.get_weights()
            # Patience restarts only when the baseline is beaten too.
            if self.baseline is None or self._is_improvement(current, self.baseline):
                self.wait = 0
            return
        if self.wait >= self.patience and epoch > 0:
            self.stopped_epoch = epoch
            self.model.stop_training = True

    def on_train_end(self, logs=None):
        if self.stopped_epoch > 0 and self.verbose > 0:
            _print(f"Epoch {self.stopped_epoch + 1}: early stopping")
        if self.restore_best_weights and self.best_weights is not None:
            if self.verbose > 0:
                _print("Restoring model weights from the end of the best epoch: "
                       f"{self.best_epoch + 1}.")
            self.model.set_weights(self.best_weights)

    def get_monitor_value(self, logs):
        logs = logs or {}
        value = logs.get(self.monitor)
        if value is None:
            warnings.warn(f"Early stopping conditioned on metric `{self.monitor}` which is not "
                          f"available. Available metrics are: {','.join(list(logs.keys()))}",
                          stacklevel=2)
        return value


class ModelCheckpoint(_MonitorCallback):
    """Saves the model (``.keras``/``.h5``) or its weights (``.weights.h5``) every epoch or
    every ``save_freq`` batches; ``filepath`` may name ``{epoch}`` (1-based), ``{batch}`` and
    any log key (``"ckpt-{epoch:02d}-{val_loss:.2f}.weights.h5"``)."""

    def __init__(self, filepath, monitor="val_loss", verbose=0, save_best_only=False,
                 save_weights_only=False, mode="auto", save_freq="epoch",
                 initial_value_threshold=None):
        super().__init__(monitor, mode, initial_value_threshold)
        self.verbose = verbose
        self.filepath = os.fspath(filepath)
        self.save_best_only = save_best_only
        self.save_weights_only = save_weights_only
        self.save_freq = save_freq
        self._batches_seen_since_last_saving = 0
        self._last_batch_seen = None
        self._current_epoch = 0
        # Keras 3 refuses what is neither 'epoch' nor an int, but takes 0 and negative counts
        # and then saves after every batch; a count of batches must be positive here, as for
        # BackupAndRestore.
        if not (isinstance(save_freq, str) and save_freq == "epoch") and (
                not isinstance(save_freq, int) or isinstance(save_freq, bool) or save_freq < 1):
            raise ValueError(f"Unrecognized save_freq: {save_freq}. Expected save_freq are "
                             "'epoch' or a positive integer (a number of batches)")
        if save_weights_only:
            if not self.filepath.endswith(".weights.h5"):
                raise ValueError(
                    "When using `save_weights_only=True` in `ModelCheckpoint`, the filepath "
                    "provided must end in `.weights.h5` (Keras weights format). Received: "
                    f"filepath={self.filepath}")
        elif not self.filepath.endswith((".keras", ".h5")):
            raise ValueError("The filepath provided must end in `.keras` (Keras model format). "
                             f"Received: filepath={self.filepath}")

    def _implements_train_batch_hooks(self):
        return self.save_freq != "epoch"

    def on_train_batch_end(self, batch, logs=None):
        if self._should_save_on_batch(batch):
            self._save_model(epoch=self._current_epoch, batch=batch, logs=logs)

    def on_epoch_begin(self, epoch, logs=None):
        self._current_epoch = epoch

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        if self.save_freq == "epoch":
            self._save_model(epoch=epoch, batch=None, logs=logs)

    def _should_save_on_batch(self, batch):
        if self.save_freq == "epoch":
            return False
        if self._last_batch_seen is None or batch <= self._last_batch_seen:
            added = batch + 1  # a new epoch began
        else:
            added = batch - self._last_batch_seen
        self._batches_seen_since_last_saving += added
        self._last_batch_seen = batch
        if self._batches_seen_since_last_saving >= self.save_freq:
            self._batches_seen_since_last_saving = 0
            return True
        return False

    def _should_save_model(self, epoch, logs, filepath):
        if not self.save_best_only:
            if self.verbose > 0:
                _print(f"\nEpoch {epoch + 1}: saving model to {filepath}")
            return True
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Can save best model only with {self.monitor} available.",
                          stacklevel=2)
            return True
        if self.monitor_op is None:  # a batch-level save before the first epoch ended
            self._set_monitor_op()
        best_str = "None" if self.best is None else f"{self.best:.5f}"
        if self._is_improvement(current, self.best):
            if self.verbose > 0:
                _print(f"\nEpoch {epoch + 1}: {self.monitor} improved from {best_str} to "
                       f"{current:.5f}, saving model to {filepath}")
            self.best = current
            return True
        if self.verbose > 0:
            _print(f"\nEpoch {epoch + 1}: {self.monitor} did not improve from {best_str}")
        return False

    def _save_model(self, epoch, batch, logs):
        if callable(logs):
            logs = logs()
        logs = logs or {}
        filepath = self._get_file_path(epoch, batch, logs)
        if os.path.isdir(filepath):
            raise IOError("Please specify a non-directory filepath for ModelCheckpoint. "
                          f"Filepath used is an existing directory: {filepath}")
        if not self._should_save_model(epoch, logs, filepath):
            return
        dirname = os.path.dirname(filepath)
        if dirname:
            os.makedirs(dirname, exist_ok=True)
        if self.save_weights_only:
            self.model.save_weights(filepath)
        else:
            self.model.save(filepath)
        if self.verbose > 0:
            _print(f"\nEpoch {epoch + 1}: finished saving model to {filepath}")

    def _get_file_path(self, epoch, batch, logs):
        try:
            if batch is None or "batch" in logs:
                return self.filepath.format(epoch=epoch + 1, **logs)
            return self.filepath.format(epoch=epoch + 1, batch=batch + 1, **logs)
        except KeyError as e:
            raise KeyError(f'Failed to format this callback filepath: "{self.filepath}". '
                           f"Reason: {e}") from None


class LearningRateScheduler(Callback):
    """Sets the optimizer's learning rate to ``schedule(epoch, lr)`` (or ``schedule(epoch)``)
    at the start of each epoch, and logs it as ``learning_rate``.

    Keras accepts only float results; we also accept ints and anything ``float()`` takes
    (NumPy scalars, 0-d tensors), and reject other results with Keras's ValueError."""

    def __init__(self, schedule, verbose=0):
        super().__init__()
        self.schedule = schedule
        self.verbose = verbose

    def _call_schedule(self, epoch, lr):
        try:
            return self.schedule(epoch, lr)
        except TypeError:
            if _accepts_two_args(self.schedule):
                raise
            return self.schedule(epoch)  # the one-argument form

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if not hasattr(optimizer, "learning_rate"):
            raise ValueError('Optimizer must have a "learning_rate" attribute.')
        lr = self._call_schedule(epoch, float(optimizer.learning_rate))
        if isinstance(lr, (str, bytes, bool)) or lr is None:
            value = None
        elif isinstance(lr, numbers.Real):
            value = float(lr)
        else:
            try:
                value = float(lr)
            except (TypeError, ValueError):
                value = None
        if value is None:
            raise ValueError(f"The output of the `schedule` function should be a float. "
                             f"Got: {lr}")
        optimizer.learning_rate = value
        if self.verbose > 0:
            _print(f"\nEpoch {epoch + 1}: LearningRateScheduler setting learning rate to "
                   f"{value}.")

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["learning_rate"] = float(self.model.optimizer.learning_rate)


def _accepts_two_args(fn):
    try:
        inspect.signature(fn).bind(0, 0.0)
        return True
    except TypeError:
        return False
    except ValueError:  # no signature (a builtin): assume it does
        return True


class CSVLogger(Callback):
    """Writes each epoch's logs to a CSV file: a header (``epoch`` and the sorted log keys)
    and a row per epoch, flushed every epoch. ``append=True`` continues an existing file."""

    def __init__(self, filename, separator=",", append=False):
        super().__init__()
        self.sep = separator
        self.filename = os.fspath(filename)
        self.append = append
        self.writer = None
        self.keys = None
        self.append_header = True
        self.csv_file = None

    def on_train_begin(self, logs=None):
        if self.append:
            if os.path.exists(self.filename):
                with open(self.filename, "r") as f:
                    self.append_header = not bool(len(f.readline()))
            mode = "a"
        else:
            mode = "w"
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.csv_file = open(self.filename, mode, newline="")
        self.writer = None
        self.keys = None

    def on_epoch_end(self, epoch, logs=None):
        logs = logs or {}
        if self.keys is None:
            self.keys = sorted(logs.keys())
            # As Keras: with no validation keys yet, reserve val_ columns (they read 'NA').
            if self.keys and not any(k.startswith("val_") for k in self.keys):
                self.keys.extend([f"val_{k}" for k in self.keys])
        if self.writer is None:
            self.writer = csv.writer(self.csv_file, delimiter=self.sep, lineterminator="\r\n")
            if self.append_header:
                self.writer.writerow(["epoch"] + self.keys)
        self.writer.writerow([epoch] + [_csv_value(logs.get(k, "NA")) for k in self.keys])
        self.csv_file.flush()

    def on_train_end(self, logs=None):
        if self.csv_file is not None and not self.csv_file.closed:
            self.csv_file.close()
        self.writer = None


def _csv_value(value):
    if isinstance(value, str):
        return value
    if hasattr(value, "__iter__") and getattr(value, "ndim", 1) != 0:
        return f'"[{", ".join(map(str, value))}]"'
    return value


class TerminateOnNaN(Callback):
    """Stops training when a batch's loss is NaN or infinite (raises instead with
    ``raise_error=True``)."""

    def __init__(self, raise_error=False):
        super().__init__()
        self.raise_error = raise_error

    def on_batch_end(self, batch, logs=None):
        if callable(logs):
            logs = logs()
        loss = (logs or {}).get("loss")
        if loss is None:
            return
        loss = float(loss)
        if math.isnan(loss) or math.isinf(loss):
            if self.raise_error:
                raise RuntimeError(f"NaN or Inf loss encountered at batch {batch}. Loss value: "
                                   f"{loss}. Terminating training immediately.")
            _print(f"Batch {batch}: Invalid loss, terminating training")
            self.model.stop_training = True


class ReduceLROnPlateau(_MonitorCallback):
    """Multiplies the learning rate by ``factor`` once ``monitor`` has not improved for
    ``patience`` epochs, then waits ``cooldown`` epochs; never below ``min_lr``."""

    def __init__(self, monitor="val_loss", factor=0.1, patience=10, verbose=0, mode="auto",
                 min_delta=1e-4, cooldown=0, min_lr=0.0, **kwargs):
        super().__init__(monitor, mode, min_delta=min_delta)
        if factor >= 1.0:
            raise ValueError("ReduceLROnPlateau does not support a factor >= 1.0. "
                             f"Received factor={factor}")
        self.factor = factor
        self.min_lr = min_lr
        self.patience = patience
        self.verbose = verbose
        self.cooldown = cooldown
        self.cooldown_counter = 0
        self.wait = 0

    def _reset(self):
        self.best = None
        self.cooldown_counter = 0
        self.wait = 0

    def in_cooldown(self):
        return self.cooldown_counter > 0

    def on_train_begin(self, logs=None):
        self._reset()

    def on_epoch_end(self, epoch, logs=None):
        if self.monitor_op is None:
            self._set_monitor_op()
        logs = logs if logs is not None else {}
        optimizer = self.model.optimizer
        logs["learning_rate"] = float(optimizer.learning_rate)
        current = logs.get(self.monitor)
        if current is None:
            warnings.warn(f"Learning rate reduction is conditioned on metric `{self.monitor}` "
                          "which is not available. Available metrics are: "
                          f"{','.join(list(logs.keys()))}.", stacklevel=2)
            return
        if self.in_cooldown():
            self.cooldown_counter -= 1
            self.wait = 0
        if self._is_improvement(current, self.best):
            self.best = current
            self.wait = 0
        elif not self.in_cooldown():
            self.wait += 1
            if self.wait >= self.patience:
                old_lr = float(optimizer.learning_rate)
                # Compared in float32 as Keras does, so a float32-rounded min_lr stops it.
                if _float32(old_lr) > _float32(self.min_lr):
                    new_lr = max(old_lr * self.factor, self.min_lr)
                    optimizer.learning_rate = new_lr
                    if self.verbose > 0:
                        _print(f"\nEpoch {epoch + 1}: ReduceLROnPlateau reducing learning "
                               f"rate to {new_lr}.")
                    self.cooldown_counter = self.cooldown
                    self.wait = 0


def _float32(x):
    return float(np.float32(x))


class LambdaCallback(Callback):
    """A callback from plain functions: ``on_epoch_begin/end(epoch, logs)``,
    ``on_train_begin/end(logs)``, ``on_train_batch_begin/end(batch, logs)``."""

    def __init__(self, on_epoch_begin=None, on_epoch_end=None, on_train_begin=None,
                 on_train_end=None, on_train_batch_begin=None, on_train_batch_end=None,
                 **kwargs):
        super().__init__()
        self.__dict__.update(kwargs)
        for name, fn in (("on_epoch_begin", on_epoch_begin), ("on_epoch_end", on_epoch_end),
                         ("on_train_begin", on_train_begin), ("on_train_end", on_train_end),
                         ("on_train_batch_begin", on_train_batch_begin),
                         ("on_train_batch_end", on_train_batch_end)):
            if fn is not None:
                setattr(self, name, fn)
