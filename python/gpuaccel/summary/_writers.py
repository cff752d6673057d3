"""``tf.summary``'s writers and the per-thread state every summary function reads: the default
writer, the default step and the ``record_if`` condition.

Why its own file: TF keeps this state apart from the summary kinds (scalar, image...), and the
rules are TF's own: ``as_default`` is a stack (each exit flushes its writer and restores the
writer and step it found), a step given to ``as_default``/``set_as_default`` replaces the
default step, and no default writer means nothing is recorded. The event file itself is written
by gpuaccel's one event-file writer (profiler/_summary_writer.py).
"""
import abc
import contextlib
import os
import threading
import time
import weakref

from ..profiler._summary_writer import SummaryWriter as _EventFile

__all__ = ["SummaryWriter", "create_file_writer", "create_noop_writer", "flush", "record_if",
           "should_record_summaries", "get_step", "set_step", "default_writer", "step_value"]

# TF's defaults of create_file_writer.
_DEFAULT_MAX_QUEUE = 10
_DEFAULT_FLUSH_MILLIS = 2 * 60 * 1000


class _SummaryState(threading.local):
    def __init__(self):
        super().__init__()
        self.writer = None
        self.step = None
        self.is_recording = None  # None: record (TF's default), else a bool or a callable


_state = _SummaryState()


def default_writer():
    """The current thread's default writer, or None."""
    return _state.writer


def get_step():
    """``tf.summary.experimental.get_step``: the default step (as set), or None."""
    return _state.step


def set_step(step):
    """``tf.summary.experimental.set_step``: the default step of this thread; None unsets it. A
    Variable (an optimizer's ``iterations``) is read each time a summary is written."""
    _state.step = step


def step_value(step):
    """``step`` as the int an event stores: a Python or NumPy integer, or a one-element tensor or
    Variable. ValueError for anything with more than one element, as TF says."""
    import numpy as np
    value = step.numpy() if hasattr(step, "numpy") else step
    array = np.asarray(value)
    if array.size != 1:
        raise ValueError(f"Argument `step` must be a scalar. Received step with shape "
                         f"{list(array.shape)}.")
    if array.dtype.kind not in "iub":
        raise TypeError(f"Argument `step` must be an integer (TF casts it to int64), got "
                        f"{array.dtype} value {array.reshape(()).item()!r}")
    return int(array.reshape(()))


def _condition_value(condition):
    condition = condition() if callable(condition) else condition
    return bool(condition.numpy()) if hasattr(condition, "numpy") else bool(condition)


def should_record_summaries():
    """``tf.summary.should_record_summaries``: False without a default writer, else the
    ``record_if`` condition (True when none is set). A Python bool where TF returns a bool
    tensor; both work in ``if``."""
    if _state.writer is None:
        return False
    if _state.is_recording is None:
        return True
    return _condition_value(_state.is_recording)


@contextlib.contextmanager
def record_if(condition):
    """``tf.summary.record_if``: summaries are recorded only while ``condition`` (a bool, a bool
    tensor, or a callable giving one, evaluated at each summary) holds."""
    old = _state.is_recording
    try:
        _state.is_recording = condition
        yield
    finally:
        _state.is_recording = old


class _SummaryContextManager:
    """``writer.as_default(step)``: a class (not a generator) so that ``set_as_default`` can
    enter it without ever leaving, as TF does."""

    def __init__(self, writer, step=None):
        self._writer, self._step = writer, step
        self._old_writer = self._old_step = None

    def __enter__(self):
        self._old_writer, _state.writer = _state.writer, self._writer
        if self._step is not None:
            self._old_step, _state.step = _state.step, self._step
        return self._writer

    def __exit__(self, *exc):
        _state.writer.flush()
        _state.writer = self._old_writer
        if self._step is not None:
            _state.step = self._old_step
        return False


class SummaryWriter(metaclass=abc.ABCMeta):
    """``tf.summary.SummaryWriter``: the interface of the writers ``create_file_writer`` and
    ``create_noop_writer`` return."""

    def set_as_default(self, step=None):
        """Makes this writer the thread's default (and ``step``, when given, its default step)
        until another one is set."""
        self.as_default(step).__enter__()

    def as_default(self, step=None):
        """A context manager in which this writer is the default (and ``step``, when given, the
        default step); leaving it flushes this writer and restores the previous ones."""
        return _SummaryContextManager(self, step)

    def init(self):
        """Nothing to initialize in eager mode (TF's graph-mode hook)."""

    @abc.abstractmethod
    def flush(self):
        """Writes everything recorded so far."""

    @abc.abstractmethod
    def close(self):
        """Flushes and closes the writer."""


class _FileWriter(SummaryWriter):
    """Writes one event file in ``logdir``; flushes once more than ``max_queue`` summaries wait
    or ``flush_millis`` passed since the last flush, on ``flush``/``close``, when a context of
    ``as_default`` ends, and when the writer is garbage-collected or the program exits."""

    def __init__(self, logdir, max_queue, flush_millis, filename_suffix):
        self._events = _EventFile(logdir, filename_suffix=filename_suffix)
        self._max_queue, self._flush_s = max_queue, flush_millis / 1000.0
        self._queued = 0
        self._closed = False
        self._events.flush()  # the file exists from the start, header only, as TF's does
        self._last_flush = time.monotonic()
        self._finalizer = weakref.finalize(self, self._events.close)

    @property
    def path(self):
        """The event file's path."""
        return self._events.path

    def _refuse_closed(self):
        if self._closed:
            raise RuntimeError(f"SummaryWriter {self!r} is already closed")

    def set_as_default(self, step=None):
        self._refuse_closed()
        super().set_as_default(step)

    def as_default(self, step=None):
        self._refuse_closed()
        return super().as_default(step)

    def add_summary(self, summary, step):
        """Queues a ``Summary`` proto at ``step`` (an int); flushes when the queue or the time
        since the last flush is over its limit."""
        self._refuse_closed()
        self._events.add_summary(summary, step)
        self._queued += 1
        if self._queued > self._max_queue or \
                time.monotonic() - self._last_flush > self._flush_s:
            self.flush()

    def flush(self):
        if self._closed:
            return
        self._events.flush()
        self._queued = 0
        self._last_flush = time.monotonic()

    def close(self):
        if self._closed:
            return
        self._events.close()
        self._closed = True


class _NoopSummaryWriter(SummaryWriter):
    """``create_noop_writer()``: a default writer that records nothing."""

    def set_as_default(self, step=None):
        pass

    @contextlib.contextmanager
    def as_default(self, step=None):
        yield

    def flush(self):
        pass

    def close(self):
        pass


def _check_non_negative_int(name, value, default):
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"Argument `{name}` must be a non-negative integer, got {value!r}")
    return value


def create_file_writer(logdir, max_queue=None, flush_millis=None, filename_suffix=None,
                       name=None, experimental_trackable=False, experimental_mesh=None):
    """``tf.summary.create_file_writer``: a writer of one event file in ``logdir`` (created when
    missing). ``max_queue`` (10) summaries wait at most, ``flush_millis`` (120000) bounds the time
    between flushes, ``filename_suffix`` ('.v2') ends the file name. ``name`` and
    ``experimental_trackable`` change nothing eagerly; ``experimental_mesh`` (DTensor) is
    refused."""
    if logdir is None:
        raise ValueError("Argument `logdir` cannot be None")
    if experimental_mesh is not None:
        raise NotImplementedError("create_file_writer(experimental_mesh=...) is DTensor's; "
                                  "gpuaccel has no DTensor meshes: leave it None")
    max_queue = _check_non_negative_int("max_queue", max_queue, _DEFAULT_MAX_QUEUE)
    flush_millis = _check_non_negative_int("flush_millis", flush_millis, _DEFAULT_FLUSH_MILLIS)
    if filename_suffix is None:
        filename_suffix = ".v2"
    if not isinstance(filename_suffix, str):
        raise TypeError(f"Argument `filename_suffix` must be a string, got "
                        f"{type(filename_suffix).__name__}")
    return _FileWriter(os.fspath(logdir), max_queue, flush_millis, filename_suffix)


def create_noop_writer():
    """``tf.summary.create_noop_writer``: a writer that does nothing."""
    return _NoopSummaryWriter()


def flush(writer=None, name=None):
    """``tf.summary.flush``: flushes ``writer``, or the default writer (nothing without one)."""
    if writer is None:
        writer = _state.writer
        if writer is None:
            return None
    if isinstance(writer, SummaryWriter):
        return writer.flush()
    raise ValueError("Invalid argument to flush(): %r" % (writer,))
