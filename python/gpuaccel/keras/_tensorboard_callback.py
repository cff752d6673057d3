"""``keras.callbacks.TensorBoard``: scalars, histograms and a profile of chosen batches.

Follows Keras 3's callback where the course touches it:

- scalars: ``epoch_<metric>`` (and ``epoch_learning_rate``) in ``<log_dir>/train``, the
  ``val_`` metrics as ``epoch_<metric>`` in ``<log_dir>/validation``,
  ``evaluation_<metric>_vs_iterations`` at the end of each evaluation, ``batch_<metric>``
  every ``update_freq`` batches when ``update_freq`` is ``'batch'`` or an int, and the
  ``steps_per_second`` pair when ``write_steps_per_second``. We add ``epoch_time_seconds`` and
  ``epoch_memory_peak_bytes`` (the training device's peak allocated bytes during the epoch),
  which the course asks students to compare;
- ``histogram_freq``: weight histograms every N epochs (tags ``<layer>/<weight>/histogram``);
- ``profile_batch``: ``0`` (off), ``N``, ``(start, stop)`` or ``"start,stop"``; batches are
  counted from 1 across epochs, the range is inclusive, the trace stops at the end of batch
  ``stop`` or when training ends, and the profile goes to ``<log_dir>/train/plugins/profile``.
  Invalid values raise Keras's ``ValueError``; profiler failures are logged, never raised.
  When it profiled, the callback prints :func:`gpuaccel.profiler.analyze`'s verdict at the end
  of training.

The profiler is switched on just before the first profiled batch is fetched (at the end of
the previous batch, or at train begin), so the first profiled step includes its input wait.
``write_graph`` is accepted and ignored (there is no graph to draw: layers run eagerly in
C++); ``write_images`` and ``embeddings_freq`` raise NotImplementedError.
"""
import logging
import os
import time

from ._callback import Callback

__all__ = ["TensorBoard"]

_log = logging.getLogger("gpuaccel")


def parse_profile_batch(profile_batch):
    """``(start, stop)`` from Keras's accepted forms; (0, 0) means off. ValueError otherwise."""
    message = ("profile_batch must be a non-negative integer or 2-tuple of positive integers. "
               "A pair of positive integers signifies a range of batches to profile. "
               f"Found: {profile_batch}")
    value = profile_batch
    if isinstance(value, str):
        try:
            value = [int(part) for part in value.split(",")]
        except ValueError:
            raise ValueError(message) from None
    if isinstance(value, bool):
        raise ValueError(message)
    if isinstance(value, int):
        start = stop = value
    elif isinstance(value, (tuple, list)) and len(value) == 2 and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        start, stop = value
    else:
        raise ValueError(message)
    if start < 0 or stop < start:
        raise ValueError(message)
    return start, stop


def _parse_update_freq(update_freq):
    if update_freq == "epoch":
        return "epoch"
    if update_freq == "batch":
        return 1
    if isinstance(update_freq, int) and not isinstance(update_freq, bool) and update_freq > 0:
        return update_freq
    raise ValueError("update_freq must be 'epoch', 'batch' or a positive integer, got "
                     f"{update_freq!r}")


class TensorBoard(Callback):
    """Writes TensorBoard logs under ``log_dir`` (see the module docstring for what)."""

    _accepts_lazy_logs = True  # batch logs are read only when a batch scalar is due

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None):
        super().__init__()
        if write_images:
            raise NotImplementedError("TensorBoard(write_images=True) is not supported by "
                                      "gpuaccel yet; use histogram_freq for weights")
        if embeddings_freq:
            raise NotImplementedError("TensorBoard(embeddings_freq=...) is not supported by "
                                      "gpuaccel yet")
        if not isinstance(histogram_freq, int) or isinstance(histogram_freq, bool) or \
                histogram_freq < 0:
            raise ValueError(f"histogram_freq must be a non-negative integer, got "
                             f"{histogram_freq!r}")
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = histogram_freq
        self.write_graph = write_graph
        self.write_steps_per_second = bool(write_steps_per_second)
        self.update_freq = _parse_update_freq(update_freq)
        self._start_batch, self._stop_batch = parse_profile_batch(profile_batch)
        self._should_trace = not (self._start_batch == 0 and self._stop_batch == 0)
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}
        self._global_train_batch = 0
        self._profiler_started = False
        self._profile_run_dir = None
        self._epoch_start = None
        self._epoch_start_iterations = 0
        self._batch_start = None
        self.report = None  # the profile verdict, once a profile was taken

    # -- writers ---------------------------------------------------------------------------

    def _writer(self, which):
        if which not in self._writers:
            from ..profiler._summary_writer import SummaryWriter
            self._writers[which] = SummaryWriter(self._train_dir if which == "train"
                                                 else self._val_dir)
        return self._writers[which]

    def _flush_writers(self):
        for writer in self._writers.values():
            writer.flush()

    def _close_writers(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    # -- profiler --------------------------------------------------------------------------

    def _start_profiler(self):
        from .. import profiler
        if self._profiler_started:
            return
        try:
            profiler.start(self._train_dir)
            self._profiler_started = True
        except Exception as e:  # profiler errors must not stop training
            _log.error("Failed to start profiler: %s", e)

    def _stop_profiler(self):
        from .. import profiler
        if not self._profiler_started:
            return
        try:
            self._profile_run_dir = profiler.stop()
        except Exception as e:
            _log.error("Failed to stop profiler: %s", e)
        finally:
            self._profiler_started = False

    def _start_if_next_is_first_profiled(self):
        if self._should_trace and not self._profiler_started and \
                self._global_train_batch + 1 == self._start_batch:
            self._start_profiler()

    # -- hooks -----------------------------------------------------------------------------

    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._profile_run_dir = None
        self.report = None
        self._start_if_next_is_first_profiled()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self.write_steps_per_second:
            self._batch_start = time.perf_counter()
        # Normally already started at the end of the previous batch; this covers a fit whose
        # first profiled batch could not be anticipated.
        if self._should_trace and self._global_train_batch == self._start_batch:
            self._start_profiler()

    def on_train_batch_end(self, batch, logs=None):
        step = self._global_train_batch
        if self.update_freq != "epoch" and step % self.update_freq == 0:
            writer = self._writer("train")
            if self.write_steps_per_second and self._batch_start is not None:
                elapsed = time.perf_counter() - self._batch_start
                if elapsed > 0:
                    writer.scalar("batch_steps_per_second", 1.0 / elapsed, step)
            logs = logs() if callable(logs) else logs
            for name, value in (logs or {}).items():
                writer.scalar(f"batch_{name}", value, step)
        if self._profiler_started and step >= self._stop_batch:
            self._stop_profiler()
        self._start_if_next_is_first_profiled()

    def on_epoch_begin(self, epoch, logs=None):
        from .. import memory
        self._epoch_start = time.perf_counter()
        self._epoch_start_iterations = self._optimizer_iterations()
        try:
            memory.reset_peak_memory_stats(None)  # None: the device training runs on
        except Exception as e:  # a device without stats: no memory scalar, never a failure
            _log.debug("no memory statistics for the training device: %s", e)

    def on_epoch_end(self, epoch, logs=None):
        logs = dict(logs or {})
        train_logs = {k: v for k, v in logs.items() if not k.startswith("val_")}
        val_logs = {k[4:]: v for k, v in logs.items() if k.startswith("val_")}
        learning_rate = self._learning_rate()
        if learning_rate is not None:
            train_logs["learning_rate"] = learning_rate
        if self._epoch_start is not None:
            elapsed = time.perf_counter() - self._epoch_start
            train_logs["time_seconds"] = elapsed
            if self.write_steps_per_second and elapsed > 0:
                done = self._optimizer_iterations() - self._epoch_start_iterations
                train_logs["steps_per_second"] = done / elapsed
        peak = self._memory_peak()
        if peak is not None:
            train_logs["memory_peak_bytes"] = peak
        writer = self._writer("train")
        for name, value in train_logs.items():
            writer.scalar(f"epoch_{name}", value, epoch)
        if val_logs:
            val_writer = self._writer("val")
            for name, value in val_logs.items():
                val_writer.scalar(f"epoch_{name}", value, epoch)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)
        self._flush_writers()

    def on_test_end(self, logs=None):
        optimizer = getattr(self.model, "optimizer", None)
        if optimizer is None or not hasattr(optimizer, "iterations") or not logs:
            return
        writer = self._writer("val")
        for name, value in logs.items():
            writer.scalar(f"evaluation_{name}_vs_iterations", value, int(optimizer.iterations))
        writer.flush()

    def on_train_end(self, logs=None):
        if self._profiler_started:
            self._stop_profiler()
        self._close_writers()
        if self._profile_run_dir is not None:
            self._print_verdict()

    # -- helpers ---------------------------------------------------------------------------

    def _print_verdict(self):
        from .. import profiler
        try:
            self.report = profiler.analyze(self._profile_run_dir, print_table=True)
        except Exception as e:  # the profile is on disk either way
            _log.error("Could not analyze the profile in %s: %s", self._profile_run_dir, e)

    def _optimizer(self):
        optimizer = getattr(self.model, "optimizer", None)
        return getattr(optimizer, "inner_optimizer", optimizer)

    def _optimizer_iterations(self):
        optimizer = getattr(self.model, "optimizer", None)
        return int(getattr(optimizer, "iterations", 0) or 0)

    def _learning_rate(self):
        optimizer = self._optimizer()
        if optimizer is None or not hasattr(optimizer, "learning_rate"):
            return None
        return float(optimizer.learning_rate)

    def _memory_peak(self):
        from .. import memory
        try:
            return memory.max_memory_allocated(None)
        except Exception:
            return None

    def _log_weights(self, epoch):
        writer = self._writer("train")
        for layer in getattr(self.model, "layers", []):
            for name, weight in zip(layer._weight_names(), layer.weights):
                tag = f"{layer.name}/{name}".replace(":", "_")
                writer.histogram(f"{tag}/histogram", weight.detach().numpy(), epoch)
