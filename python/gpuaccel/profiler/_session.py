"""One profiling session at a time: start the C++ recorder, stop it, write what it saw.

``start(logdir)`` switches the recorder on (every op, copy, input wait, optimizer update and
allocation is then recorded by the core); ``stop()`` collects the events and writes one run
directory in TensorBoard's layout::

    <logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.xplane.pb       Profile tab (xprof)
    <logdir>/plugins/profile/<YYYY_MM_DD_HH_MM_SS>/<host>.trace.json.gz   Perfetto / chrome://tracing

``Trace`` marks a region of Python code (TF's ``tf.profiler.experimental.Trace``); with
``step_num=N`` and ``_r=1`` it is a training-step marker, which is how the Profile tab and
``analyze`` group events into steps. When no session is active a ``Trace`` costs one call.
"""
import datetime
import os
import socket
import threading

from .. import _C
from ._events import EventKind, EventTable

__all__ = ["start", "stop", "stop_recording", "is_active", "Profile", "Trace", "ProfilerOptions",
           "step_marker", "input_wait", "write_run"]

_recorder = _C.profiler
_lock = threading.Lock()
_logdir = None  # the active session's log directory; None when no session is active


class ProfilerOptions:
    """TF's ``tf.profiler.experimental.ProfilerOptions``, reduced to what we record.

    ``max_events_per_thread`` bounds each thread's event buffer (events beyond it are counted as
    dropped, never recorded). TF's ``host_tracer_level``, ``python_tracer_level``,
    ``device_tracer_level`` and ``delay_ms`` are accepted so TF code runs unchanged; they have
    no effect (we always record the runtime's own events, never Python function calls).
    """

    def __init__(self, host_tracer_level=2, python_tracer_level=0, device_tracer_level=1,
                 delay_ms=None, max_events_per_thread=1 << 20):
        if int(max_events_per_thread) < 1:
            raise ValueError("max_events_per_thread must be a positive integer, got "
                             f"{max_events_per_thread!r}")
        self.host_tracer_level = host_tracer_level
        self.python_tracer_level = python_tracer_level
        self.device_tracer_level = device_tracer_level
        self.delay_ms = delay_ms
        self.max_events_per_thread = int(max_events_per_thread)


def is_active():
    """True while a profiling session records."""
    return bool(_recorder.is_active())


def start(logdir, options=None):
    """Starts recording; the trace is written under ``logdir`` by :func:`stop`.

    Raises RuntimeError if a session is already active (TF raises its AlreadyExistsError, a
    subclass of nothing we share; the message says what to do).
    """
    global _logdir
    if logdir is None or str(logdir) == "":
        # Keras starts and stops once with an empty logdir to warm the profiler up; we have
        # nothing to warm, but an empty logdir is still a valid session that saves nothing.
        logdir = ""
    options = options or ProfilerOptions()
    if not isinstance(options, ProfilerOptions):
        raise TypeError("options must be a gpuaccel.profiler.ProfilerOptions, got "
                        f"{type(options).__name__}")
    with _lock:
        if _logdir is not None or is_active():
            raise RuntimeError("[profiler] a profiling session is already active; call "
                               "gpuaccel.profiler.stop() before starting another")
        _recorder.start(options.max_events_per_thread)
        _recorder.set_thread_name(threading.current_thread().name)
        _logdir = (os.fspath(logdir), options)


def stop(save=True):
    """Stops recording; with ``save`` writes the run directory and returns its path.

    Returns None when nothing was saved (``save=False`` or an empty logdir). Raises
    RuntimeError when no session is active.
    """
    table, logdir = stop_recording()
    if not save or not logdir:
        return None
    return write_run(table, logdir)


def stop_recording():
    """Stops the active session and returns ``(EventTable, logdir)`` without writing anything:
    for callers that present the events themselves (the PyTorch face's ``torch.profiler``).
    Raises RuntimeError when no session is active."""
    global _logdir
    with _lock:
        if _logdir is None:
            raise RuntimeError("[profiler] no profiling session is active; call "
                               "gpuaccel.profiler.start(logdir) first")
        (logdir, _options), _logdir = _logdir, None
        raw = _recorder.stop()
    return EventTable(raw), logdir


def write_run(table, logdir, file_stem=None):
    """Writes ``table`` as a new run under ``<logdir>/plugins/profile``; returns the run dir.
    The files are named after the host unless ``file_stem`` names them."""
    from ._chrome_trace import write_chrome_trace
    from ._xspace import write_xspace
    run_dir = _new_run_dir(os.path.join(logdir, "plugins", "profile"))
    host = _file_stem(file_stem) if file_stem else _host_file_stem(table)
    write_xspace(table, os.path.join(run_dir, f"{host}.xplane.pb"))
    write_chrome_trace(table, os.path.join(run_dir, f"{host}.trace.json.gz"))
    return run_dir


def _host_file_stem(table):
    return _file_stem((table.host or {}).get("hostname") or socket.gethostname() or "localhost")


def _file_stem(name):
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in str(name))


def _new_run_dir(profile_root):
    """A fresh ``YYYY_MM_DD_HH_MM_SS`` directory (TensorBoard's run naming); a suffix keeps two
    sessions stopped within the same second apart instead of mixing their files."""
    os.makedirs(profile_root, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y_%m_%d_%H_%M_%S")
    candidate, n = stamp, 1
    while True:
        path = os.path.join(profile_root, candidate)
        try:
            os.mkdir(path)
            return path
        except FileExistsError:
            candidate = f"{stamp}_{n}"
            n += 1


class Profile:
    """``with gpuaccel.profiler.Profile(logdir):`` profiles the block (TF's name)."""

    def __init__(self, logdir, options=None):
        self._logdir = logdir
        self._options = options
        self.run_dir = None

    def __enter__(self):
        start(self._logdir, self._options)
        return self

    def __exit__(self, exc_type, exc, tb):
        self.run_dir = stop()
        return False


def _stats_text(stats):
    """``key=value;key=value`` for the recorder; separators inside values become spaces."""
    parts = []
    for key, value in stats.items():
        if isinstance(value, bool):
            value = int(value)
        text = str(value).replace(";", " ").replace("=", " ")
        parts.append(f"{str(key).replace(';', ' ').replace('=', ' ')}={text}")
    return ";".join(parts)


class Trace:
    """Marks a region of Python code in the trace (TF's ``tf.profiler.experimental.Trace``).

    ``Trace("train", step_num=step, _r=1)`` marks a training step: the Profile tab's overview
    and input-pipeline pages, and :func:`gpuaccel.profiler.analyze`, group events by these.
    Other keyword arguments are recorded as the event's stats.
    """

    __slots__ = ("_name", "_stats", "_recording")

    def __init__(self, name, **kwargs):
        for key in kwargs:
            if key == "correlation_id" or key.startswith("gpuaccel_"):
                raise ValueError(f"Trace stat name {key!r} is reserved for the profiler's own "
                                 "fields; rename it (e.g. 'my_" + key + "')")
        self._name = str(name)
        self._stats = kwargs
        self._recording = False

    def __enter__(self):
        if _recorder.is_active():
            is_step = "step_num" in self._stats and self._stats.get("_r")
            kind = EventKind.STEP if is_step else EventKind.USER
            value = int(self._stats["step_num"]) if is_step else 0
            _recorder.begin(self._name, int(kind), value, _stats_text(self._stats))
            self._recording = True
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._recording:
            self._recording = False
            _recorder.end()
        return False


class step_marker:
    """The training loop's step marker: from before the batch is fetched to the end of the step.

    The loop does not know whether a batch exists until it asks for one, so the marker is
    recorded when the step completes (:meth:`commit`), spanning from when the fetch began; a
    fetch that finds the data exhausted leaves no empty step behind. Costs one call when no
    session is active.
    """

    __slots__ = ("_name", "_step", "_start_ns")

    def __init__(self, name, step_num):
        self._name = name
        self._step = int(step_num)
        self._start_ns = _recorder.now_ns() if _recorder.is_active() else None

    def commit(self):
        if self._start_ns is None or not _recorder.is_active():
            return
        _recorder.record(self._name, int(EventKind.STEP), self._start_ns, _recorder.now_ns(),
                         self._step, f"step_num={self._step};_r=1")


class input_wait:
    """Marks the training loop waiting for its next batch (counted as input time)."""

    __slots__ = ("_recording",)

    def __enter__(self):
        self._recording = bool(_recorder.is_active())
        if self._recording:
            _recorder.begin("next_batch", int(EventKind.INPUT_WAIT), 0, "")
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._recording:
            _recorder.end()
        return False
