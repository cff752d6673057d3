"""``torch.cuda``'s Stream and Event over gpuaccel's one compute stream per GPU.

Why this shape: gpuaccel queues every op of a GPU on one compute stream (batch uploads go on a
copy stream it orders itself), and its bindings hand out no stream or event handles. So a
``Stream`` here names that compute stream, and an ``Event`` marks a point in it by waiting for
the GPU to reach the point (a device synchronize) and reading the host's clock there.

What PyTorch code observes stays true: work queued under different ``Stream`` objects runs in
program order, which is one of the orders torch's waits allow; ``query()`` answers whether the
work is done; ``elapsed_time`` is the milliseconds between two points of the GPU's work. What
differs (docs/devices.md): nothing overlaps, ``record()`` blocks the host until the GPU is idle,
and ``Stream.query()`` waits for the GPU before it answers True.
"""
import time

from . import _cuda_devices


class Stream:
    """``torch.cuda.Stream(device=None, priority=0)``: the compute stream of a GPU.

    Every ``Stream`` of a GPU is that GPU's one compute stream, so ``wait_stream`` and
    ``wait_event`` have nothing to wait for: what was queued before them already runs first.
    """

    def __init__(self, device=None, priority=0):
        index = _cuda_devices._checked_index(device, "Stream")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"Stream: priority must be an int (0 or negative: higher), "
                            f"got {priority!r}")
        self.device_index = index
        self.priority = priority

    @property
    def device(self):
        from ._placement import device
        return device(f"cuda:{self.device_index}")

    def synchronize(self):
        """Waits until the work queued on this stream has finished."""
        _cuda_devices.synchronize(self.device_index)

    def query(self):
        """Whether the queued work has finished: it waits for the GPU, so always True."""
        self.synchronize()
        return True

    def wait_event(self, event):
        """Work queued later on this stream runs after ``event``: already so (one stream)."""
        _check_event(event, "Stream.wait_event")

    def wait_stream(self, stream):
        """Work queued later runs after ``stream``'s queued work: already so (one stream)."""
        if not isinstance(stream, Stream):
            raise TypeError(f"Stream.wait_stream expects a torch.cuda.Stream, got {stream!r}")

    def record_event(self, event=None):
        """Records ``event`` (a new Event when None) on this stream and returns it."""
        event = Event() if event is None else _check_event(event, "Stream.record_event")
        event.record(self)
        return event

    def __repr__(self):
        return f"<torch.cuda.Stream device=cuda:{self.device_index} priority={self.priority}>"


def _check_event(event, what):
    if not isinstance(event, Event):
        raise TypeError(f"{what} expects a torch.cuda.Event, got {event!r}")
    return event


class Event:
    """``torch.cuda.Event(enable_timing=False, blocking=False, interprocess=False)``.

    ``record()`` waits until the GPU has finished the work queued so far and notes the time,
    so ``start.elapsed_time(end)`` is the GPU time between the two records in milliseconds.
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise ValueError("Event(interprocess=True): gpuaccel does not share events or GPU "
                             "memory between processes; use interprocess=False")
        self.enable_timing = bool(enable_timing)
        self.blocking = bool(blocking)
        self._recorded_at = None
        self._device_index = None

    def record(self, stream=None):
        """Marks the point after the work queued so far on ``stream`` (the current stream)."""
        stream = current_stream() if stream is None else stream
        if not isinstance(stream, Stream):
            raise TypeError(f"Event.record expects a torch.cuda.Stream or None, got {stream!r}")
        stream.synchronize()
        self._recorded_at = time.perf_counter()
        self._device_index = stream.device_index

    def wait(self, stream=None):
        """Work queued later on ``stream`` runs after this event: already so (one stream)."""

    def query(self):
        """Whether the work before the event has finished: True (``record`` waited for it)."""
        return True

    def synchronize(self):
        """Waits for the event: ``record`` already did."""

    def elapsed_time(self, end_event):
        """Milliseconds from this event to ``end_event`` (both timed and recorded)."""
        _check_event(end_event, "Event.elapsed_time")
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Both events must be created with argument 'enable_timing=True'.")
        if self._recorded_at is None or end_event._recorded_at is None:
            raise RuntimeError("Both events must be recorded before calculating elapsed time.")
        if self._device_index != end_event._device_index:
            raise RuntimeError(f"Both events must be recorded on the same device (cuda:"
                               f"{self._device_index} and cuda:{end_event._device_index})")
        return (end_event._recorded_at - self._recorded_at) * 1000.0

    def __repr__(self):
        if self._recorded_at is None:
            return "<torch.cuda.Event uninitialized>"
        return f"<torch.cuda.Event recorded on cuda:{self._device_index}>"


# The per-GPU default streams, and the stream each GPU's `with stream(s):` blocks made current.
_default_streams = {}
_current_streams = {}


def default_stream(device=None):
    """The GPU's default stream (its compute stream)."""
    index = _cuda_devices._checked_index(device, "default_stream")
    if index not in _default_streams:
        _default_streams[index] = Stream(index)
    return _default_streams[index]


def current_stream(device=None):
    """The stream of the innermost ``with torch.cuda.stream(s):`` on the GPU, else its default."""
    index = _cuda_devices._checked_index(device, "current_stream")
    return _current_streams.get(index) or default_stream(index)


class StreamContext:
    """``with torch.cuda.stream(s):`` makes ``s`` current (and its GPU the current device);
    ``None`` does nothing, as in torch."""

    def __init__(self, stream):
        if stream is not None and not isinstance(stream, Stream):
            raise TypeError(f"torch.cuda.stream expects a torch.cuda.Stream or None, "
                            f"got {stream!r}")
        self.stream = stream
        self._device = None
        self._previous = None

    def __enter__(self):
        if self.stream is None:
            return self.stream
        index = self.stream.device_index
        self._device = _cuda_devices.device(index)
        self._device.__enter__()
        self._previous = _current_streams.get(index)
        _current_streams[index] = self.stream
        return self.stream

    def __exit__(self, *exc_info):
        if self.stream is None:
            return False
        index = self.stream.device_index
        if self._previous is None:
            _current_streams.pop(index, None)
        else:
            _current_streams[index] = self._previous
        self._device.__exit__(*exc_info)
        return False


def stream(stream):
    """``with torch.cuda.stream(s):`` (see StreamContext)."""
    return StreamContext(stream)


def set_stream(stream):
    """``torch.cuda.set_stream(s)``: ``s`` becomes its GPU's current stream until another is
    set (a ``with stream(...)`` block that ends restores what was current at its start); None
    does nothing, as in torch."""
    if stream is None:
        return
    if not isinstance(stream, Stream):
        raise TypeError(f"torch.cuda.set_stream expects a torch.cuda.Stream or None, "
                        f"got {stream!r}")
    _current_streams[stream.device_index] = stream
