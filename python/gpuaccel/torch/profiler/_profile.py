"""``torch.profiler.profile`` and ``record_function`` over gpuaccel's own recorder.

PyTorch code profiles a block or a loop with ``torch.profiler.profile(...)``; gpuaccel already
records every op, layer, backward node, copy and device kernel (``gpuaccel.profiler``), so this
class only drives that recorder with PyTorch's controls (a context manager, ``start/stop/step``
and a ``schedule``) and presents what it recorded PyTorch's way (``_function_events.py``).
``record_function`` is a user range in the trace; ``prof.step()`` with a schedule marks each
step as ``ProfilerStep#N``, recorded as a step marker, so ``gpuaccel.profiler.analyze`` and
TensorBoard's Profile tab group the trace by these steps.
"""
import enum
import functools
import os
import warnings

from ... import cuda
from ...profiler import _session
from ...profiler._chrome_trace import write_chrome_trace
from ._function_events import EventList, function_events
from ._schedule import ProfilerAction, record_every_step

__all__ = ["ProfilerActivity", "profile", "record_function", "supported_activities",
           "tensorboard_trace_handler"]


class ProfilerActivity(enum.Enum):
    """What to record: host (CPU) events, device (CUDA) kernels."""

    CPU = 0
    CUDA = 1


def supported_activities():
    """The activities this machine can record: CPU, and CUDA when a GPU is usable."""
    return {ProfilerActivity.CPU, ProfilerActivity.CUDA} if cuda.is_available() else \
        {ProfilerActivity.CPU}


class record_function:
    """A named range in the trace around a block (``with record_function("name"):``) or a
    function (``@record_function("name")``); ``args`` is recorded with it. Costs one call when
    no profiler records."""

    def __init__(self, name, args=None):
        if not isinstance(name, str):
            raise TypeError(f"record_function's name must be a str, got {type(name).__name__}")
        self.name, self.args = name, args
        self._trace = None

    def __enter__(self):
        stats = {} if self.args is None else {"args": self.args}
        self._trace = _session.Trace(self.name, **stats)
        self._trace.__enter__()
        return self

    def __exit__(self, exc_type, exc, tb):
        trace, self._trace = self._trace, None
        if trace is not None:
            trace.__exit__(exc_type, exc, tb)
        return False

    def __call__(self, function):
        @functools.wraps(function)
        def wrapped(*args, **kwargs):
            with record_function(self.name, self.args):
                return function(*args, **kwargs)
        return wrapped


class _StepMarker:
    """``ProfilerStep#N``: a step marker around each step a schedule drives."""

    def __init__(self, step_num):
        self._trace = _session.Trace(f"ProfilerStep#{step_num}", step_num=step_num, _r=1)
        self._trace.__enter__()

    def close(self):
        self._trace.__exit__(None, None, None)


def _activities(activities):
    if activities is None:
        return supported_activities()
    chosen = set()
    for activity in activities:
        if not isinstance(activity, ProfilerActivity):
            raise TypeError("activities must be torch.profiler.ProfilerActivity values "
                            f"(CPU, CUDA), got {activity!r}")
        chosen.add(activity)
    if ProfilerActivity.CUDA in chosen and not cuda.is_available():
        warnings.warn("CUDA is not available, disabling CUDA profiling")
        chosen.discard(ProfilerActivity.CUDA)
    return chosen


class profile:
    """Profiles a block or the steps of a loop (PyTorch's ``torch.profiler.profile``).

    Without a ``schedule`` everything between ``start()`` (or ``with``) and ``stop()`` is one
    trace and ``on_trace_ready(prof)`` is called once at the end. With one, each ``step()``
    advances the schedule: recording starts and stops as its actions say, and every completed
    active cycle is handed to ``on_trace_ready``. ``events()``, ``key_averages()`` and
    ``export_chrome_trace()`` read the latest trace. ``record_shapes``, ``with_stack`` and
    ``with_flops`` are accepted; gpuaccel's recorder keeps no shapes, stacks or FLOP counts, so
    those stay empty.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, use_cuda=None):
        activities = set(activities) if activities is not None else None
        if use_cuda:
            activities = (activities or {ProfilerActivity.CPU}) | {ProfilerActivity.CUDA}
        self.activities = _activities(activities)
        if schedule is not None and not callable(schedule):
            raise TypeError("schedule must be a function of the step number, such as "
                            f"torch.profiler.schedule(...), got {type(schedule).__name__}")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError("on_trace_ready must be callable with the profiler, got "
                            f"{type(on_trace_ready).__name__}")
        self.schedule = schedule or record_every_step
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self._recording = False
        self._table = None
        self._events = None
        self._step_marker = None

    # -- PyTorch's controls ---------------------------------------------------------------
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc, tb):
        self.stop()
        return False

    def start(self):
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step_marker()

    def stop(self):
        self._close_step_marker()
        self._transit(self.current_action, None)

    def step(self):
        """Ends the current step and starts the next one."""
        self._close_step_marker()
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        self._open_step_marker()

    # -- what was recorded ----------------------------------------------------------------
    def events(self):
        """The latest trace's events (EventList of FunctionEvent)."""
        if self._events is None:
            self._events = EventList(
                function_events(self._latest_table(), profile_memory=self.profile_memory,
                                with_cuda=ProfilerActivity.CUDA in self.activities),
                profile_memory=self.profile_memory)
        return self._events

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """The latest trace's events averaged per name (EventList of FunctionEventAvg)."""
        return self.events().key_averages(group_by_input_shape, group_by_stack_n)

    def export_chrome_trace(self, path):
        """Writes the latest trace as Chrome trace-event JSON (gzip'd when ``path`` ends in
        ``.gz``); opens in Perfetto and chrome://tracing."""
        path = os.fspath(path)
        return write_chrome_trace(self._latest_table(), path, compress=path.endswith(".gz"))

    @property
    def trace_table(self):
        """The latest trace as gpuaccel's EventTable (for ``gpuaccel.profiler.analyze``)."""
        return self._latest_table()

    def _latest_table(self):
        if self._table is None:
            raise RuntimeError("the profiler has recorded no trace yet: profile a block "
                               "(with profile(...) as prof:) or, with a schedule, step past "
                               "an active cycle before reading events")
        return self._table

    # -- the schedule's transitions -------------------------------------------------------
    def _transit(self, previous, current):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if previous == ProfilerAction.RECORD_AND_SAVE or (
                previous == ProfilerAction.RECORD and current is None):
            self._stop_trace()
            self._trace_ready()
        elif previous in recording and current not in recording:
            warnings.warn(f"Incorrect schedule: RECORD followed by {current.name}")
            self._stop_trace()
        elif previous == ProfilerAction.WARMUP and current in (ProfilerAction.NONE, None):
            # PyTorch records an empty trace here (and hands it to no one)
            if current is not None:
                warnings.warn("Incorrect schedule: WARMUP followed by NONE")
            self._start_trace()
            self._stop_trace()
        if current in recording and not self._recording:
            self._start_trace()

    def _start_trace(self):
        _session.start("")
        self._recording = True

    def _stop_trace(self):
        self._recording = False
        self._table, _ = _session.stop_recording()
        self._events = None

    def _trace_ready(self):
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _open_step_marker(self):
        if self.record_steps:
            self._step_marker = _StepMarker(self.step_num)

    def _close_step_marker(self):
        marker, self._step_marker = self._step_marker, None
        if marker is not None:
            marker.close()


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """An ``on_trace_ready`` that writes each trace as a TensorBoard profile run under
    ``dir_name`` (``plugins/profile/<run>/<worker>.xplane.pb`` for the Profile tab and
    ``<worker>.trace.json.gz`` for Perfetto), readable by ``gpuaccel.profiler.analyze`` too.
    ``use_gzip`` is accepted: the Chrome trace is always gzip'd."""
    dir_name = os.fspath(dir_name)

    def handler(prof):
        os.makedirs(dir_name, exist_ok=True)
        return _session.write_run(prof.trace_table, dir_name, file_stem=worker_name)

    return handler
