"""``gpuaccel.profiler.analyze``: where each training step's time went, and what to try first.

TensorBoard's Profile tab answers this visually; a course notebook wants one call that prints
the breakdown and names the bottleneck. This module reads the newest profile run under a log
directory (or takes an EventTable) and splits every STEP event's wall time into categories.

How a step is split. The window is the STEP event's ``[start, end)``. Host events count when
they are on the step's thread (that is where the training loop runs; pipeline threads run in
parallel and only matter through the wait they cause). Device events count for the part of
them inside the window. All sums are interval *unions*, so nested events (a layer holding its
ops) and overlapping streams are counted once. Every nanosecond of the window gets exactly one
label, the first that applies in this order:

1. ``device_compute``: some device runs a kernel (DEVICE_KERNEL). Host waits or transfers
   hidden behind device work do not slow the step, so device work wins.
2. ``input``: the step thread waits for the input pipeline (INPUT_WAIT).
3. ``transfer``: a host copy (COPY_*) on the step thread or a device copy (DEVICE_COPY).
4. ``sync``: the step thread waits for a device or a collective (SYNCHRONIZE, COLLECTIVE).
5. ``host_compute``: a host op (a kernel: OP) runs on the step thread.
6. ``idle``: the rest: Python and framework time outside any kernel, including the parts of
   layer calls, backward nodes and optimizer updates (LAYER, BACKWARD, OPTIMIZER) spent on
   bookkeeping rather than in their kernels. For a tiny model this is most of the step, and
   it is what a larger batch amortizes.

The five bottleneck categories are ``input``, ``transfer``, ``sync``, ``compute`` and
``host-overhead``. On a CPU run (no DEVICE_KERNEL/DEVICE_COPY events) ``compute`` is
``host_compute`` and ``host-overhead`` is ``idle``. On a GPU run ``compute`` is
``device_compute``; host op time that is left after rule 1 is time the device sat idle while the
host was busy launching work, so it counts as ``host-overhead`` together with ``idle``.

The bottleneck is the category with the largest share of step time, except that ``input``
wins whenever it is at least 20% of step time (xprof calls a program with 20% or more input
time "highly input-bound": fix the pipeline first) and host-overhead is not larger still. A
step dominated by host overhead (a tiny model at batch 1) pays a fixed cost per batch, the
batch fetch included; a larger batch amortizes both, so that verdict is the more useful one.
"""
from __future__ import annotations

import glob
import os
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from . import _intervals as iv
from ._events import EventKind, EventTable

__all__ = ["analyze", "analyze_table", "find_profile", "ProfileReport", "StepBreakdown",
           "INPUT_BOUND_FRACTION", "CATEGORIES"]

#: Input time at or above this share of the step makes the run input-bound.
INPUT_BOUND_FRACTION = 0.20
#: Bottleneck categories, in tie-break order.
CATEGORIES = ("input", "compute", "transfer", "sync", "host-overhead")

# Kernels only: layer/backward/optimizer scopes hold their kernels plus framework bookkeeping,
# and that bookkeeping is overhead, not compute.
_HOST_COMPUTE_KINDS = (EventKind.OP,)
_COPY_KINDS = (EventKind.COPY_HOST_TO_DEVICE, EventKind.COPY_DEVICE_TO_HOST,
               EventKind.COPY_DEVICE_TO_DEVICE)
_SYNC_KINDS = (EventKind.SYNCHRONIZE, EventKind.COLLECTIVE)
_DETAIL_FIELDS = ("input_ms", "transfer_ms", "sync_ms", "device_compute_ms",
                  "host_compute_ms", "idle_ms")
_TIMELINE_POINTS = 100


@dataclass
class StepBreakdown:
    """One step's wall time split into exclusive categories (milliseconds)."""

    name: str
    step: int
    start_ms: float
    step_ms: float
    input_ms: float
    transfer_ms: float
    sync_ms: float
    device_compute_ms: float
    host_compute_ms: float
    idle_ms: float
    device_busy_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ProfileReport:
    """The result of :func:`analyze`; ``str(report)`` is a readable table."""

    steps: list[StepBreakdown]
    average_ms: dict[str, float]
    fractions: dict[str, float]
    device_utilization: float | None
    bottleneck: str
    suggestion: str
    memory: dict[str, Any]
    dropped_events: int
    gpu_run: bool
    source: str | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["steps"] = [s.to_dict() for s in self.steps]
        return d

    def __str__(self) -> str:
        return _format_report(self)


# ------------------------------------------------------------------------ finding a run
def find_profile(log_dir: str | os.PathLike, run: str | None = None) -> str:
    """The ``*.xplane.pb`` of the newest run (or of ``run``) under ``log_dir``.

    Looks in ``<log_dir>/plugins/profile/<run>/`` and, for the Keras TensorBoard callback's
    layout, ``<log_dir>/train/plugins/profile/<run>/``; run folders are named
    ``YYYY_MM_DD_HH_MM_SS`` so the newest sorts last. ``log_dir`` may also be a run folder or
    an ``.xplane.pb`` file. A run holding several hosts' files yields the first by name.
    """
    log_dir = os.fspath(log_dir)
    if os.path.isfile(log_dir):
        return log_dir
    if not os.path.isdir(log_dir):
        raise FileNotFoundError(f"profile log directory {log_dir!r} does not exist")
    here = sorted(glob.glob(os.path.join(glob.escape(log_dir), "*.xplane.pb")))
    if here and run is None:
        return here[0]
    bases = [os.path.join(log_dir, "plugins", "profile"),
             os.path.join(log_dir, "train", "plugins", "profile")]
    runs: list[tuple[str, float, str]] = []
    for base in bases:
        if not os.path.isdir(base):
            continue
        for entry in os.listdir(base):
            folder = os.path.join(base, entry)
            files = sorted(glob.glob(os.path.join(glob.escape(folder), "*.xplane.pb")))
            if files and (run is None or entry == run):
                runs.append((entry, os.path.getmtime(files[0]), files[0]))
    if not runs:
        what = f"run {run!r}" if run is not None else "a profile run"
        raise FileNotFoundError(
            f"found no {what} under {log_dir!r}: looked for "
            f"{os.path.join(bases[0], '<run>', '*.xplane.pb')} and "
            f"{os.path.join(bases[1], '<run>', '*.xplane.pb')}. Profile with "
            "gpuaccel.profiler.start(log_dir)/stop() or "
            "keras.callbacks.TensorBoard(log_dir, profile_batch=(5, 10)) first")
    runs.sort()
    return runs[-1][2]


def analyze(log_dir: str | os.PathLike, run: str | None = None,
            print_table: bool = True) -> ProfileReport:
    """Analyze the newest profile under ``log_dir`` (or the run named ``run``).

    Raises FileNotFoundError when no profile is found (naming the paths searched) and
    ValueError when the profile holds no training step. Prints the report unless
    ``print_table`` is false.
    """
    from ._xspace import read_xspace  # protobuf is only needed when reading files

    path = find_profile(log_dir, run)
    table = read_xspace(path)
    report = analyze_table(table, source=path)
    if print_table:
        print(report)
    return report


# ------------------------------------------------------------------------- the analysis
def _intervals_of(table: EventTable, mask: np.ndarray) -> np.ndarray:
    return iv.union(table.start_ns[mask], table.end_ns[mask])


def analyze_table(table: EventTable, *, source: str | None = None) -> ProfileReport:
    """The step-time report of one recorder session (see the module docstring for rules)."""
    if not isinstance(table, EventTable):
        raise TypeError(f"analyze_table expects an EventTable, got {type(table).__name__}")
    kind = table.kind
    step_rows = np.flatnonzero(kind == EventKind.STEP)
    if step_rows.size == 0:
        raise ValueError(
            "profile at least one training step: this profile has no STEP events. Profile "
            "inside model.fit (keras.callbacks.TensorBoard(log_dir, profile_batch=(5, 10))) "
            "or mark steps with gpuaccel.profiler.Trace('train', step_num=step, _r=1)")
    step_rows = step_rows[np.argsort(table.start_ns[step_rows], kind="stable")]

    device_mask = np.isin(kind, [EventKind.DEVICE_KERNEL, EventKind.DEVICE_COPY])
    gpu_run = bool(device_mask.any())
    kernels = _intervals_of(table, kind == EventKind.DEVICE_KERNEL)
    device_copies = _intervals_of(table, kind == EventKind.DEVICE_COPY)
    device_ids = sorted({int(d) for d in table.device[device_mask]} |
                        ({int(d["index"]) for d in table.devices} if gpu_run else set()))
    busy_per_device = {d: _intervals_of(table, device_mask & (table.device == d))
                       for d in device_ids}

    per_thread: dict[int, dict[str, np.ndarray]] = {}

    def thread_sets(thread: int) -> dict[str, np.ndarray]:
        sets = per_thread.get(thread)
        if sets is None:
            on = table.thread == thread
            sets = per_thread[thread] = {
                "input": _intervals_of(table, on & (kind == EventKind.INPUT_WAIT)),
                "copies": _intervals_of(table, on & np.isin(kind, _COPY_KINDS)),
                "sync": _intervals_of(table, on & np.isin(kind, _SYNC_KINDS)),
                "host": _intervals_of(table, on & np.isin(kind, _HOST_COMPUTE_KINDS)),
            }
        return sets

    steps: list[StepBreakdown] = []
    busy_total = {d: 0 for d in device_ids}
    for i in step_rows:
        lo, hi = int(table.start_ns[i]), int(table.end_ns[i])
        sets = thread_sets(int(table.thread[i]))
        taken = iv.clip(kernels, lo, hi)
        device_compute = iv.total(taken)
        parts = {}
        for label, raw in (("input", iv.clip(sets["input"], lo, hi)),
                           ("transfer", iv.merge(iv.clip(sets["copies"], lo, hi),
                                                 iv.clip(device_copies, lo, hi))),
                           ("sync", iv.clip(sets["sync"], lo, hi)),
                           ("host_compute", iv.clip(sets["host"], lo, hi))):
            own = iv.subtract(raw, taken)
            parts[label] = iv.total(own)
            taken = iv.merge(taken, own)
        idle = (hi - lo) - iv.total(taken)
        busy = None
        if gpu_run:
            per_dev = []
            for d, s in busy_per_device.items():
                t = iv.total(iv.clip(s, lo, hi))
                busy_total[d] += t
                per_dev.append(t)
            busy = float(np.mean(per_dev)) / 1e6 if per_dev else 0.0
        name = table.name_of(i)
        steps.append(StepBreakdown(
            name=f"{name} {int(table.value[i])}", step=int(table.value[i]),
            start_ms=lo / 1e6, step_ms=(hi - lo) / 1e6, input_ms=parts["input"] / 1e6,
            transfer_ms=parts["transfer"] / 1e6, sync_ms=parts["sync"] / 1e6,
            device_compute_ms=device_compute / 1e6,
            host_compute_ms=parts["host_compute"] / 1e6, idle_ms=idle / 1e6,
            device_busy_ms=busy))

    n = len(steps)
    average = {"step_ms": sum(s.step_ms for s in steps) / n}
    for f in _DETAIL_FIELDS:
        average[f] = sum(getattr(s, f) for s in steps) / n
    category_ms = {
        "input": average["input_ms"],
        "compute": average["device_compute_ms"] if gpu_run else average["host_compute_ms"],
        "transfer": average["transfer_ms"],
        "sync": average["sync_ms"],
        "host-overhead": average["idle_ms"] + (average["host_compute_ms"] if gpu_run else 0.0),
    }
    step_ms = average["step_ms"]
    fractions = {k: (v / step_ms if step_ms > 0 else 0.0) for k, v in category_ms.items()}
    if fractions["input"] >= INPUT_BOUND_FRACTION and \
            fractions["input"] >= fractions["host-overhead"]:
        bottleneck = "input"
    else:
        bottleneck = max(CATEGORIES, key=lambda c: (fractions[c], -CATEGORIES.index(c)))

    utilization = None
    if gpu_run:
        total_step_ns = sum(int(table.end_ns[i] - table.start_ns[i]) for i in step_rows)
        if total_step_ns > 0 and busy_total:
            utilization = float(np.mean([b / total_step_ns for b in busy_total.values()]))
        else:
            utilization = 0.0

    notes = []
    if table.dropped_events:
        notes.append(f"the recorder dropped {table.dropped_events} events; the breakdown "
                     "undercounts (profile fewer steps or raise max_events_per_thread)")
    return ProfileReport(
        steps=steps, average_ms=average, fractions=fractions,
        device_utilization=utilization, bottleneck=bottleneck,
        suggestion=_suggestion(bottleneck, fractions, gpu_run),
        memory=_memory_summary(table), dropped_events=int(table.dropped_events),
        gpu_run=gpu_run, source=source, notes=notes)


def _suggestion(bottleneck: str, fractions: dict[str, float], gpu_run: bool) -> str:
    pct = f"{100 * fractions[bottleneck]:.0f}% of step time"
    if bottleneck == "input":
        return (f"Input-bound: {pct} is spent waiting for the next batch. Overlap input with "
                "training: end the pipeline with .prefetch(gpuaccel.data.AUTOTUNE), "
                "parallelize preprocessing with .map(fn, num_parallel_calls="
                "gpuaccel.data.AUTOTUNE), and .cache() data that fits in memory (after the "
                "expensive map, before shuffle/batch).")
    if bottleneck == "compute":
        where = "the device" if gpu_run else "the CPU"
        return (f"Compute-bound: {pct} is spent computing on {where}. Use mixed precision: "
                "keras.mixed_precision.set_global_policy('mixed_float16') on GPUs with "
                "Tensor Cores (compute capability 7.0+), or 'mixed_bfloat16' on CPUs with "
                "AMX/AVX512-BF16 and Ampere+ GPUs; beyond that, a faster device (a GPU, or a "
                "larger one) or a smaller model.")
    if bottleneck == "transfer":
        return (f"Transfer-bound: {pct} is spent copying between host and device. Keep data "
                "on the device between steps (create tensors there, avoid .to('cpu') round "
                "trips), use pinned (page-locked) host memory for the batches you copy, and "
                "prefetch batches to the device so copies overlap compute.")
    if bottleneck == "sync":
        return (f"Sync-bound: {pct} is spent waiting for devices or collectives. Avoid "
                "reading results on the host every step (.numpy(), .item(), float(loss), "
                "printing metrics): read them every N steps; with a distribution strategy "
                "use a larger per-replica batch so each all-reduce carries more work.")
    return (f"Host-overhead-bound: {pct} goes to Python and framework work outside any "
            "kernel" + (" while the device sits idle" if gpu_run else "") + ". Use a larger "
            "batch size so each step does more work per launch, and fewer, larger ops "
            "(vectorize loops over tensors, avoid per-sample Python code in the step).")


def _memory_summary(table: EventTable) -> dict[str, Any]:
    rows = np.flatnonzero(table.kind == EventKind.MEMORY)
    if rows.size == 0:
        return {"peak_in_use_bytes": 0, "peak_reserved_bytes": 0, "peak_op": None,
                "peak_device": None, "peak_time_ms": None, "timeline": [], "by_device": {}}
    rows = rows[np.argsort(table.start_ns[rows], kind="stable")]
    by_device: dict[str, dict[str, Any]] = {}
    for dev in sorted({int(d) for d in table.device[rows]}):
        r = rows[table.device[rows] == dev]
        in_use = table.in_use_bytes[r]
        k = int(np.argmax(in_use))  # first event reaching the peak
        by_device["host" if dev < 0 else f"/device:GPU:{dev}"] = {
            "peak_in_use_bytes": int(in_use[k]),
            "peak_reserved_bytes": int(table.reserved_bytes[r].max()),
            "peak_op": table.stats_of(int(r[k])).get("op"),
            "peak_time_ms": int(table.start_ns[r[k]]) / 1e6,
            "timeline": _compact_timeline(table.start_ns[r], in_use),
        }
    peak_device = max(by_device, key=lambda d: by_device[d]["peak_in_use_bytes"])
    top = by_device[peak_device]
    return {"peak_in_use_bytes": top["peak_in_use_bytes"],
            "peak_reserved_bytes": max(d["peak_reserved_bytes"] for d in by_device.values()),
            "peak_op": top["peak_op"], "peak_device": peak_device,
            "peak_time_ms": top["peak_time_ms"], "timeline": top["timeline"],
            "by_device": by_device}


def _compact_timeline(times: np.ndarray, in_use: np.ndarray) -> list[tuple[float, int]]:
    """At most ~100 ``(time_ms, in_use_bytes)`` points; each bucket keeps its maximum."""
    if times.size <= _TIMELINE_POINTS:
        return [(int(t) / 1e6, int(b)) for t, b in zip(times, in_use)]
    edges = np.linspace(int(times[0]), int(times[-1]), _TIMELINE_POINTS + 1)
    bucket = np.clip(np.searchsorted(edges, times, side="right") - 1, 0, _TIMELINE_POINTS - 1)
    out = []
    for b in np.unique(bucket):
        idx = np.flatnonzero(bucket == b)
        k = idx[int(np.argmax(in_use[idx]))]
        out.append((int(times[k]) / 1e6, int(in_use[k])))
    return out


# ----------------------------------------------------------------------------- printing
def _bytes(n: int | None) -> str:
    if n is None:
        return "-"
    v = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(v) < 1024 or unit == "GiB":
            return f"{v:.0f} {unit}" if unit == "B" else f"{v:.1f} {unit}"
        v /= 1024
    return f"{v:.1f} GiB"


def _format_report(r: ProfileReport) -> str:
    cols = [("time", "step_ms"), ("input", "input_ms"), ("transfer", "transfer_ms"),
            ("sync", "sync_ms"), ("device", "device_compute_ms"),
            ("host", "host_compute_ms"), ("idle", "idle_ms")]
    width = max([len("average")] + [len(s.name) for s in r.steps])
    head = f"{'step':<{width}}  " + "  ".join(f"{c:>8}" for c, _ in cols)
    lines = [f"gpuaccel profile: {len(r.steps)} step(s), "
             f"{'GPU' if r.gpu_run else 'CPU only'}; times in ms"
             + (f" ({r.source})" if r.source else ""), head, "-" * len(head)]
    for s in r.steps:
        lines.append(f"{s.name:<{width}}  " +
                     "  ".join(f"{getattr(s, f):8.3f}" for _, f in cols))
    lines.append("-" * len(head))
    lines.append(f"{'average':<{width}}  " +
                 "  ".join(f"{r.average_ms[f]:8.3f}" for _, f in cols))
    lines.append("share of step time: " + ", ".join(
        f"{c} {100 * r.fractions[c]:.1f}%" for c in CATEGORIES))
    if r.device_utilization is not None:
        lines.append(f"device utilization: {100 * r.device_utilization:.1f}%")
    lines.append(f"bottleneck: {r.bottleneck}")
    lines.append(f"suggestion: {r.suggestion}")
    m = r.memory
    if m.get("peak_device") is not None:
        lines.append(f"memory: peak in use {_bytes(m['peak_in_use_bytes'])} on "
                     f"{m['peak_device']} (op {m['peak_op'] or '?'} at "
                     f"{m['peak_time_ms']:.3f} ms), peak reserved "
                     f"{_bytes(m['peak_reserved_bytes'])}")
    lines.append(f"dropped events: {r.dropped_events}")
    lines.extend(f"note: {n}" for n in r.notes)
    return "\n".join(lines)
