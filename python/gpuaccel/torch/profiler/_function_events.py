"""PyTorch's view of a recorded trace: ``prof.events()``, ``prof.key_averages()`` and ``.table()``.

gpuaccel's recorder gives one EventTable per session (``gpuaccel.profiler._events``); PyTorch's
API presents it as FunctionEvents (one per op or range, nested by thread, with self and total
CPU time and the CUDA time of the kernels each launched), their per-name averages, and the text
table PyTorch prints (its column headers and time formats, gpuaccel's op names). Times are
microseconds from the start of the trace, as in PyTorch.
"""
import bisect
import enum

from ...profiler._events import EventKind

__all__ = ["DeviceType", "Interval", "FunctionEvent", "FunctionEventAvg", "EventList",
           "function_events"]

_US_PER_NS = 1e-3
_DEVICE_KINDS = (EventKind.DEVICE_KERNEL, EventKind.DEVICE_COPY)
SORT_KEYS = ("cpu_time", "cuda_time", "cpu_time_total", "cuda_time_total",
             "self_cpu_time_total", "self_cuda_time_total", "count", "cpu_memory_usage",
             "self_cpu_memory_usage", "cuda_memory_usage", "self_cuda_memory_usage")


class DeviceType(enum.Enum):
    """Where an event ran (PyTorch's ``torch.autograd.DeviceType``, the two gpuaccel has)."""

    CPU = 0
    CUDA = 1


class Interval:
    """``event.time_range``: start and end in microseconds."""

    __slots__ = ("start", "end")

    def __init__(self, start, end):
        self.start, self.end = start, end

    def elapsed_us(self):
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start}, end={self.end})"


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(time_us, total_us):
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("Gb", 1 << 30), ("Mb", 1 << 20), ("Kb", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} b"


class _TimeStrings:
    """The ``*_str`` forms PyTorch's events offer, from the numeric attributes."""

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def cuda_time_str(self):
        return _format_time(self.cuda_time)

    @property
    def cuda_time_total_str(self):
        return _format_time(self.cuda_time_total)

    @property
    def self_cuda_time_total_str(self):
        return _format_time(self.self_cuda_time_total)

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def cuda_time(self):
        return self.cuda_time_total / self.count if self.count else 0.0


class FunctionEvent(_TimeStrings):
    """One recorded op, layer, backward node or ``record_function`` range (or, with
    ``device_type == DeviceType.CUDA``, one device kernel or copy)."""

    def __init__(self, id, name, thread, start_us, end_us, device_type=DeviceType.CPU,
                 device_index=0, kind=EventKind.OP):
        # PyTorch names every step marker ProfilerStep* so the table sums them in one row;
        # trace_name keeps the step's own number (the Chrome trace shows that one).
        self.trace_name = name
        if name.startswith("ProfilerStep#"):
            name = "ProfilerStep*"
        self.id, self.name, self.key, self.thread = id, name, name, thread
        self.time_range = Interval(start_us, end_us)
        self.device_type, self.device_index, self.kind = device_type, device_index, kind
        self.cpu_parent = None
        self.cpu_children = []
        self.kernels = []  # the device events this op launched
        self.count = 1
        self.input_shapes = []  # shapes are not recorded by gpuaccel's recorder
        self.stack = []
        self.node_id = -1
        self.is_async = False
        self.is_legacy = False
        self.is_remote = False
        self.flops = 0
        self.self_cpu_memory_usage = 0
        self.cpu_memory_usage = 0
        self.self_cuda_memory_usage = 0
        self.cuda_memory_usage = 0
        self.cuda_time_total = 0.0

    @property
    def cpu_time_total(self):
        return 0.0 if self.device_type == DeviceType.CUDA else self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cuda_time_total(self):
        if self.device_type == DeviceType.CUDA:
            return self.cuda_time_total
        return sum(k.cuda_time_total for k in self.kernels)

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} device_type={self.device_type} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"cuda_time_total={self.cuda_time_total:.3f}us>")


class FunctionEventAvg(_TimeStrings):
    """The events of one name summed (``key_averages()``'s rows)."""

    def __init__(self, key, device_type):
        self.key, self.device_type = key, device_type
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cuda_time_total = self.self_cuda_time_total = 0.0
        self.cpu_memory_usage = self.self_cpu_memory_usage = 0
        self.cuda_memory_usage = self.self_cuda_memory_usage = 0
        self.input_shapes = []
        self.stack = []
        self.node_id = -1
        self.is_async = self.is_legacy = self.is_remote = False
        self.cpu_parent = None
        self.flops = 0

    def add(self, event):
        self.count += event.count
        for name in ("cpu_time_total", "self_cpu_time_total", "cuda_time_total",
                     "self_cuda_time_total", "cpu_memory_usage", "self_cpu_memory_usage",
                     "cuda_memory_usage", "self_cuda_memory_usage"):
            setattr(self, name, getattr(self, name) + getattr(event, name))
        return self

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us "
                f"cuda_time_total={self.cuda_time_total:.3f}us>")


class EventList(list):
    """A list of events (or of averages) with PyTorch's ``table`` and ``key_averages``."""

    def __init__(self, events=(), profile_memory=False):
        super().__init__(events)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0):
        """One FunctionEventAvg per event name (and device), in first-seen order.
        ``group_by_input_shape`` and ``group_by_stack_n`` group as without them: shapes and
        stacks are not recorded."""
        averages = {}
        for event in self:
            key = (event.key, event.device_type)
            if key not in averages:
                averages[key] = FunctionEventAvg(event.key, event.device_type)
            averages[key].add(event)
        return EventList(averages.values(), profile_memory=self._profile_memory)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False):
        """PyTorch's text table of these events, sorted by the attribute ``sort_by``
        (descending) and cut after ``row_limit`` rows."""
        return _build_table(self, sort_by, row_limit, max_name_column_width, header,
                            top_level_events_only, self._profile_memory)


def _build_table(events, sort_by, row_limit, max_name_width, header, top_level_only,
                 profile_memory):
    if not events:
        return ""
    if sort_by is not None:
        if sort_by not in SORT_KEYS:
            raise AttributeError(f"cannot sort the profiler table by {sort_by!r}; sort_by is "
                                 f"one of {', '.join(SORT_KEYS)}")
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    has_cuda_time = any(e.self_cuda_time_total > 0 for e in events)
    has_cuda_memory = any(e.self_cuda_memory_usage > 0 for e in events)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if has_cuda_time:
        headers += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if has_cuda_memory:
            headers += ["CUDA Mem", "Self CUDA Mem"]
    headers.append("# of Calls")

    name_width = max(len(e.key) for e in events) + 4
    if max_name_width is not None:
        name_width = min(name_width, max_name_width)
    widths = [name_width] + [12] * (len(headers) - 1)
    row_format = "".join("{:>%d}  " % w for w in widths)
    separator = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2

    total_self_cpu = sum(e.self_cpu_time_total for e in events)
    total_self_cuda = sum(e.self_cuda_time_total for e in events
                          if e.device_type == DeviceType.CUDA)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_width is not None and len(name) >= max_name_width - 3:
            name = name[:max_name_width - 3] + "..."
        row = [name, _format_share(e.self_cpu_time_total, total_self_cpu),
               e.self_cpu_time_total_str, _format_share(e.cpu_time_total, total_self_cpu),
               e.cpu_time_total_str, e.cpu_time_str]
        if has_cuda_time:
            row += [e.self_cuda_time_total_str,
                    _format_share(e.self_cuda_time_total, total_self_cuda),
                    e.cuda_time_total_str, e.cuda_time_str]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
            if has_cuda_memory:
                row += [_format_memory(e.cuda_memory_usage),
                        _format_memory(e.self_cuda_memory_usage)]
        row.append(e.count)
        lines.append(row_format.format(*row))
    lines.append(separator)
    lines.append(f"Self CPU time total: {_format_time(total_self_cpu)}")
    if has_cuda_time:
        lines.append(f"Self CUDA time total: {_format_time(total_self_cuda)}")
    return "".join(line + "\n" for line in lines)


def function_events(table, profile_memory=False, with_cuda=True):
    """The EventTable's host events as nested FunctionEvents (with the device events they
    launched as CUDA events when ``with_cuda``), in (thread, start) order."""
    origin = int(table.start_ns.min()) if len(table) else 0
    events, by_correlation = [], {}
    open_by_thread = {}  # thread -> stack of enclosing events
    memory = []  # (thread, time_ns, bytes, device)
    for i in range(len(table)):
        kind = table.kind_of(i)
        thread = int(table.thread[i])
        if kind == EventKind.MEMORY:
            memory.append((thread, int(table.start_ns[i]), int(table.value[i]),
                           int(table.device[i])))
            continue
        if kind in _DEVICE_KINDS:
            continue
        start_ns, end_ns = int(table.start_ns[i]), int(table.end_ns[i])
        event = FunctionEvent(len(events), table.name_of(i), thread,
                              (start_ns - origin) * _US_PER_NS, (end_ns - origin) * _US_PER_NS,
                              kind=kind)
        stack = open_by_thread.setdefault(thread, [])
        while stack and stack[-1][1] < end_ns:  # rows come by start, longest first
            stack.pop()
        if stack:
            parent = stack[-1][0]
            event.cpu_parent = parent
            parent.cpu_children.append(event)
        stack.append((event, end_ns))
        events.append(event)
        correlation = int(table.correlation_id[i])
        if correlation:
            by_correlation[correlation] = event
    if with_cuda:
        _attach_device_events(table, events, by_correlation, origin)
    if profile_memory:
        _attach_memory(events, memory, origin)
    return events


def _attach_device_events(table, events, by_correlation, origin):
    for i in range(len(table)):
        if table.kind_of(i) not in _DEVICE_KINDS:
            continue
        start_ns, end_ns = int(table.start_ns[i]), int(table.end_ns[i])
        kernel = FunctionEvent(len(events), table.name_of(i), -1,
                               (start_ns - origin) * _US_PER_NS, (end_ns - origin) * _US_PER_NS,
                               device_type=DeviceType.CUDA, device_index=int(table.device[i]),
                               kind=table.kind_of(i))
        kernel.cuda_time_total = kernel.time_range.elapsed_us()
        events.append(kernel)
        launcher = by_correlation.get(int(table.correlation_id[i]))
        if launcher is not None:
            launcher.kernels.append(kernel)
            while launcher is not None:  # the kernel's time is in every enclosing range's total
                launcher.cuda_time_total += kernel.cuda_time_total
                launcher = launcher.cpu_parent


def _attach_memory(events, memory, origin):
    """Each allocation (bytes > 0) and free (< 0) counts for the innermost event on its thread
    that encloses it (self) and for every range around that one (total)."""
    by_thread = {}
    for event in events:  # in start order per thread
        if event.device_type == DeviceType.CPU:
            by_thread.setdefault(event.thread, []).append(event)
    starts = {thread: [e.time_range.start for e in row] for thread, row in by_thread.items()}
    for thread, time_ns, nbytes, device in memory:
        at_us = (time_ns - origin) * _US_PER_NS
        last_started = bisect.bisect_right(starts.get(thread, []), at_us) - 1
        if last_started < 0:
            continue
        # the innermost enclosing event is the last one started, or one of its enclosing ranges
        inner = by_thread[thread][last_started]
        while inner is not None and inner.time_range.end < at_us:
            inner = inner.cpu_parent
        if inner is None:
            continue
        self_name, total_name = (("self_cpu_memory_usage", "cpu_memory_usage") if device < 0
                                 else ("self_cuda_memory_usage", "cuda_memory_usage"))
        setattr(inner, self_name, getattr(inner, self_name) + nbytes)
        while inner is not None:
            setattr(inner, total_name, getattr(inner, total_name) + nbytes)
            inner = inner.cpu_parent
