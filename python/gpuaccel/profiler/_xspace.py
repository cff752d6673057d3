"""Writes an EventTable as a TensorBoard profile (``*.xplane.pb``) and reads one back.

xprof, the engine behind TensorBoard's Profile tab, classifies host events by *name*, not by
any type field, and builds training steps from the events' stats. So this module translates
our event kinds into the names and stats xprof recognises, keeps our own name in the event
metadata's ``display_name`` and our kind in a metadata stat, and stores every other column
in ``gpuaccel_*`` stats, so :func:`read_xspace` rebuilds the same table.

Naming rules (xprof 2.24; sources: openxla/xprof ``xprof/convert/xplane_to_step_events.cc``,
openxla/xla ``xla/tsl/profiler/utils/tf_op_utils.cc``, ``xplane_schema.cc``,
``group_events.cc``):

* STEP -> ``"train"`` (or ``"test"`` for evaluate/predict steps): a name starting with
  ``train``/``test`` and holding no ``/`` is an explicit host step marker. With int64 stats
  ``step_num`` and ``_r`` = 1 it is a grouping root: every event nested in it on the same
  thread gets its ``group_id`` (the step), and xprof names the step ``"train <step_num>"``.
* INPUT_WAIT -> ``"IteratorGetNext"``: counted as host wait-for-input time.
* host and device copies -> ``"MemcpyHToD"`` / ``"MemcpyDToH"`` / ``"MemcpyDToD"`` (the
  prefixes ``ParseTfOpFullname`` accepts for memcpy ops); device copies also carry a
  ``memcpy_details`` stat with ``num_bytes``.
* MEMORY -> ``"MemoryAllocation"`` / ``"MemoryDeallocation"`` with the stats xprof's memory
  profile reads (``allocator_name``, ``bytes_allocated``, ``bytes_reserved``,
  ``bytes_available``, ``peak_bytes_in_use``, ``requested_bytes``, ``allocation_bytes``,
  ``tf_op``, ``region_type``; ``addr`` when the recorder gives one).
* Host events and device events sharing a ``correlation_id`` stat are linked by xprof's
  grouping (KernelLaunch -> KernelExecute), which puts device work into the host's steps.
* Any other event keeps its name, unless that name would be mistaken for one of the above
  (e.g. a user scope called ``"training"``): then it is written as ``"gpuaccel/<name>"``.

Planes: ``/host:CPU`` (one line per recorder thread, id = thread index + 1), one
``/device:GPU:N`` per device (device-capability stats; one line per stream, ``"Stream #S"``)
and ``"Task Environment"`` (``profile_start_time`` / ``profile_stop_time``, unix ns).
"""
from __future__ import annotations

import json
import os
import re
from typing import Any

import numpy as np

from . import _xspace_schema as pb
from .._atomic_file import atomic_write_bytes
from ._events import EventKind, EventTable, format_stats

__all__ = ["write_xspace", "read_xspace", "xprof_event_name", "HOST_PLANE_NAME",
           "GPU_PLANE_PREFIX", "TASK_ENV_PLANE_NAME"]

HOST_PLANE_NAME = "/host:CPU"
GPU_PLANE_PREFIX = "/device:GPU:"
TASK_ENV_PLANE_NAME = "Task Environment"

# Our bookkeeping stats (never read by xprof).
_KIND = "gpuaccel_kind"            # event metadata: EventKind value
_VALUE = "gpuaccel_value"
_IN_USE = "gpuaccel_in_use_bytes"
_RESERVED = "gpuaccel_reserved_bytes"
_DEVICE = "gpuaccel_device"        # host-plane events that name a device
_STREAM = "gpuaccel_stream"
_ADDED = "gpuaccel_added"          # comma list of xprof-only stats the writer added
_THREADS = "gpuaccel_threads"      # host plane: JSON of the thread table
_HOST = "gpuaccel_host"            # host plane: JSON of the host dict
_DROPPED = "gpuaccel_dropped_events"
_DEVICE_JSON = "gpuaccel_device_info"  # device plane: JSON of the device dict
_CORRELATION = "correlation_id"

_COPY_NAMES = {EventKind.COPY_HOST_TO_DEVICE: "MemcpyHToD",
               EventKind.COPY_DEVICE_TO_HOST: "MemcpyDToH",
               EventKind.COPY_DEVICE_TO_DEVICE: "MemcpyDToD"}
_DIRECTION_WORDS = {"htod": EventKind.COPY_HOST_TO_DEVICE, "h2d": EventKind.COPY_HOST_TO_DEVICE,
                    "dtoh": EventKind.COPY_DEVICE_TO_HOST, "d2h": EventKind.COPY_DEVICE_TO_HOST,
                    "dtod": EventKind.COPY_DEVICE_TO_DEVICE,
                    "d2d": EventKind.COPY_DEVICE_TO_DEVICE}
_UNATTRIBUTED_LINE = "unattributed"


def _looks_special(name: str) -> bool:
    """Would xprof give this name a meaning we did not intend?"""
    lower = name.lower()
    return ((name.startswith(("train", "test", "TraceContext")) and "/" not in name)
            or lower.startswith(("iteratorgetnext", "memcpy", "nccl"))
            or name in ("MemoryAllocation", "MemoryDeallocation")
            or name.startswith(("EagerExecute", "EagerLocalExecute", "EagerKernelExecute",
                                "FunctionRun", "ExecutorState::Process")))


def _copy_direction(table: EventTable, i: int, launch_kind: dict[int, EventKind]) -> EventKind:
    stats = table.stats_of(i)
    for key in ("direction", "kind", "copy"):
        word = str(stats.get(key, "")).lower().replace("_", "")
        if word in _DIRECTION_WORDS:
            return _DIRECTION_WORDS[word]
    return launch_kind.get(int(table.correlation_id[i]), EventKind.COPY_DEVICE_TO_DEVICE)


def xprof_event_name(kind: EventKind, name: str, *, value: int = 0,
                     copy_kind: EventKind | None = None) -> str:
    """The XEvent name xprof needs to classify an event of ``kind`` called ``name``."""
    if kind == EventKind.STEP:
        return "train" if name.startswith("train") else "test"
    if kind == EventKind.INPUT_WAIT:
        return name if name.startswith("IteratorGetNext") and "/" not in name else "IteratorGetNext"
    if kind in _COPY_NAMES:
        return _COPY_NAMES[kind]
    if kind == EventKind.DEVICE_COPY:
        return _COPY_NAMES[copy_kind or EventKind.COPY_DEVICE_TO_DEVICE]
    if kind == EventKind.MEMORY:
        return "MemoryAllocation" if value >= 0 else "MemoryDeallocation"
    if _looks_special(name) or not name:
        return "gpuaccel/" + name
    return name


class _PlaneBuilder:
    """Interns event and stat metadata for one XPlane."""

    def __init__(self, plane):
        self.plane = plane
        self._events: dict[tuple, int] = {}
        self._stats: dict[str, int] = {}

    def stat_id(self, name: str) -> int:
        sid = self._stats.get(name)
        if sid is None:
            sid = self._stats[name] = len(self._stats) + 1
            md = self.plane.stat_metadata[sid]
            md.id = sid
            md.name = name
        return sid

    def event_id(self, xname: str, display: str, kind: int | None) -> int:
        key = (xname, display, kind)
        eid = self._events.get(key)
        if eid is None:
            eid = self._events[key] = len(self._events) + 1
            md = self.plane.event_metadata[eid]
            md.id = eid
            md.name = xname
            md.display_name = display
            if kind is not None:
                self.add_stat(md.stats, _KIND, int(kind))
        return eid

    def add_stat(self, stats, name: str, value: Any, *, unsigned: bool = False) -> None:
        st = stats.add()
        st.metadata_id = self.stat_id(name)
        if isinstance(value, (bool, int, np.integer)):
            value = int(value)
            if unsigned and value >= 0:
                st.uint64_value = value
            elif -(1 << 63) <= value < (1 << 63):
                st.int64_value = value
            else:
                st.str_value = str(value)
        elif isinstance(value, float):
            st.double_value = value
        else:
            st.str_value = str(value)


def _check_own_stats(stats: dict, what: str) -> None:
    for key in stats:
        if key == _CORRELATION or key.startswith("gpuaccel_"):
            raise ValueError(f"{what} has a stat named {key!r}; 'correlation_id' and "
                             "'gpuaccel_*' are reserved for the XSpace exporter")


def _build_space(table: EventTable):
    if not isinstance(table, EventTable):
        raise TypeError(f"write_xspace expects an EventTable, got {type(table).__name__}")
    space = pb.XSpace()
    space.hostnames.append(str(table.host.get("hostname", "localhost")))
    if table.dropped_events:
        space.warnings.append(f"the gpuaccel profiler dropped {table.dropped_events} events "
                              "(its buffer was full); the trace is incomplete")
    t0 = table.session_start_unix_ns
    span_ps = max(table.session_stop_unix_ns - t0, 0) * 1000
    kinds = table.kind

    # Host copies launched with a correlation id tell the direction of their device copy.
    launch_kind: dict[int, EventKind] = {}
    for i in np.flatnonzero((table.correlation_id != 0) & (table.thread >= 0)):
        k = EventKind(int(kinds[i]))
        if k in _COPY_NAMES:
            launch_kind[int(table.correlation_id[i])] = k

    on_device = np.isin(kinds, [EventKind.DEVICE_KERNEL, EventKind.DEVICE_COPY]) & \
        (table.device >= 0) & (table.thread == -1)

    # ---- host plane
    host = space.planes.add(id=0, name=HOST_PLANE_NAME)
    hb = _PlaneBuilder(host)
    hb.add_stat(host.stats, _THREADS, json.dumps(table.threads))
    hb.add_stat(host.stats, _HOST, json.dumps(table.host))
    hb.add_stat(host.stats, _DROPPED, table.dropped_events)
    lines: dict[int, Any] = {}
    for t in table.threads:
        lines[t["index"]] = host.lines.add(id=t["index"] + 1, name=t["name"],
                                           display_name=t["name"], timestamp_ns=t0,
                                           duration_ps=span_ps)
    peak: dict[str, int] = {}
    for i in np.flatnonzero(~on_device):
        thread = int(table.thread[i])
        line = lines.get(thread)
        if line is None:  # thread -1 host events
            line = lines[thread] = host.lines.add(id=0, name=_UNATTRIBUTED_LINE,
                                                  timestamp_ns=t0, duration_ps=span_ps)
        _add_event(hb, line, table, i, launch_kind, peak)

    # ---- device planes
    device_ids = sorted({int(d["index"]) for d in table.devices} |
                        {int(d) for d in np.unique(table.device[on_device])})
    info = {int(d["index"]): d for d in table.devices}
    for dev in device_ids:
        plane = space.planes.add(id=dev + 1, name=f"{GPU_PLANE_PREFIX}{dev}")
        db = _PlaneBuilder(plane)
        d = info.get(dev, {})
        _device_stats(db, plane, d)
        rows = np.flatnonzero(on_device & (table.device == dev))
        streams: dict[int, Any] = {}
        for s in sorted({int(s) for s in table.stream[rows]}):
            streams[s] = plane.lines.add(id=s, name=f"Stream #{s}", display_name=f"Stream #{s}",
                                         timestamp_ns=t0, duration_ps=span_ps)
        for i in rows:
            _add_event(db, streams[int(table.stream[i])], table, i, launch_kind, peak)

    # ---- task environment
    env = space.planes.add(id=len(device_ids) + 1, name=TASK_ENV_PLANE_NAME)
    eb = _PlaneBuilder(env)
    eb.add_stat(env.stats, "profile_start_time", table.session_start_unix_ns, unsigned=True)
    eb.add_stat(env.stats, "profile_stop_time", table.session_stop_unix_ns, unsigned=True)
    return space


def _device_stats(db: _PlaneBuilder, plane, d: dict) -> None:
    if not d:
        return
    cc = str(d.get("compute_capability", "") or "")
    m = re.fullmatch(r"(\d+)\.(\d+)", cc)
    if m:
        db.add_stat(plane.stats, "compute_cap_major", int(m.group(1)))
        db.add_stat(plane.stats, "compute_cap_minor", int(m.group(2)))
    for ours, theirs in (("clock_rate_khz", "clock_rate"), ("core_count", "core_count"),
                         ("memory_bandwidth_bytes_per_s", "memory_bandwidth"),
                         ("memory_bytes", "memory_size")):
        if d.get(ours) is not None:
            db.add_stat(plane.stats, theirs, int(d[ours]), unsigned=True)
    db.add_stat(plane.stats, "device_vendor", "Nvidia")  # our GPU backend is CUDA only
    db.add_stat(plane.stats, _DEVICE_JSON, json.dumps(d))


def _add_event(b: _PlaneBuilder, line, table: EventTable, i: int,
               launch_kind: dict[int, EventKind], peak: dict[str, int]) -> None:
    kind = EventKind(int(table.kind[i]))
    name = table.name_of(i)
    stats = table.stats_of(i)
    _check_own_stats(stats, f"event {i} ({name!r})")
    value = int(table.value[i])
    copy_kind = _copy_direction(table, i, launch_kind) if kind == EventKind.DEVICE_COPY else None
    xname = xprof_event_name(kind, name, value=value, copy_kind=copy_kind)
    start, end = int(table.start_ns[i]), int(table.end_ns[i])
    ev = line.events.add(metadata_id=b.event_id(xname, name, kind),
                         offset_ps=start * 1000, duration_ps=(end - start) * 1000)
    for key, val in stats.items():
        b.add_stat(ev.stats, key, val)
    added: dict[str, Any] = {}
    if kind == EventKind.STEP:
        added.setdefault("step_num", value)
        added.setdefault("_r", 1)
    elif kind == EventKind.DEVICE_COPY or (kind in _COPY_NAMES and int(table.device[i]) >= 0):
        added["memcpy_details"] = f"num_bytes:{abs(value)}"
    elif kind == EventKind.MEMORY:
        dev = int(table.device[i])
        allocator = str(stats.get("pool", "")) or (f"GPU_{dev}_bfc" if dev >= 0 else "cpu")
        in_use, reserved = int(table.in_use_bytes[i]), int(table.reserved_bytes[i])
        peak[allocator] = max(peak.get(allocator, 0), in_use)
        added.update(allocator_name=allocator, bytes_allocated=in_use, bytes_reserved=0,
                     bytes_available=max(reserved - in_use, 0),
                     peak_bytes_in_use=peak[allocator], requested_bytes=abs(value),
                     allocation_bytes=abs(value))
        if "op" in stats:
            added["tf_op"] = str(stats["op"])
        if "addr" not in stats and "address" in stats:
            added["addr"] = stats["address"]
        added.setdefault("region_type", "output" if dev >= 0 else "host")
    added = {k: v for k, v in added.items() if k not in stats}
    for key, val in added.items():
        b.add_stat(ev.stats, key, val)
    if added:
        b.add_stat(ev.stats, _ADDED, ",".join(added))
    corr = int(table.correlation_id[i])
    if corr:
        b.add_stat(ev.stats, _CORRELATION, corr)
    for key, col in ((_VALUE, "value"), (_IN_USE, "in_use_bytes"),
                     (_RESERVED, "reserved_bytes")):
        v = int(getattr(table, col)[i])
        if v:
            b.add_stat(ev.stats, key, v)
    if int(table.thread[i]) >= 0:
        if int(table.device[i]) != -1:
            b.add_stat(ev.stats, _DEVICE, int(table.device[i]))
        if int(table.stream[i]) != -1:
            b.add_stat(ev.stats, _STREAM, int(table.stream[i]))


def write_xspace(table: EventTable, path: str | os.PathLike) -> str:
    """Write ``table`` as a serialized XSpace to ``path`` (atomically); returns the path.

    TensorBoard expects ``<logdir>/plugins/profile/<run>/<host>.xplane.pb``; the caller
    picks that path. Raises TypeError for a non-EventTable and ValueError when an event's
    stats use a name reserved for the exporter (``correlation_id``, ``gpuaccel_*``).
    """
    space = _build_space(table)
    return atomic_write_bytes(path, space.SerializeToString())


# ----------------------------------------------------------------------------- reading
def _stat_value(st, stat_names: dict[int, str]) -> Any:
    which = st.WhichOneof("value")
    if which in ("int64_value", "uint64_value"):
        return int(getattr(st, which))
    if which == "double_value":
        return repr(st.double_value)
    if which == "ref_value":
        return stat_names.get(int(st.ref_value), "")
    if which == "bytes_value":
        return st.bytes_value.hex()
    if which == "str_value":
        return st.str_value
    return ""


def _plane_stats(plane) -> dict[str, Any]:
    names = {k: v.name for k, v in plane.stat_metadata.items()}
    return {names.get(s.metadata_id, ""): _stat_value(s, names) for s in plane.stats}


def read_xspace(path: str | os.PathLike) -> EventTable:
    """Read an ``.xplane.pb`` written by :func:`write_xspace` back into an EventTable.

    Files from other profilers are read on a best-effort basis: host events become OP
    events (or STEP / INPUT_WAIT / copies / MEMORY by their xprof names) and device events
    DEVICE_KERNEL or DEVICE_COPY.
    """
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise FileNotFoundError(f"no XSpace file at {path!r}") from None
    space = pb.XSpace()
    try:
        space.ParseFromString(data)
    except Exception as e:  # protobuf's DecodeError
        raise ValueError(f"{path!r} is not a serialized XSpace: {e}") from None
    try:
        return _event_table(space)
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as e:
        # A file that parses but whose stats or events are damaged (or from a profiler that
        # writes other things under our stat names) fails deep inside; name the file instead.
        raise ValueError(f"{path!r} holds an XSpace whose contents gpuaccel cannot read "
                         f"({type(e).__name__}: {e}); the file may be damaged") from None


def _event_table(space) -> EventTable:
    """The EventTable of a parsed XSpace (see read_xspace)."""
    session_start = session_stop = None
    for plane in space.planes:
        if plane.name == TASK_ENV_PLANE_NAME:
            st = _plane_stats(plane)
            session_start = st.get("profile_start_time")
            session_stop = st.get("profile_stop_time")
    if session_start is None:
        stamps = [ln.timestamp_ns for p in space.planes for ln in p.lines]
        session_start = min(stamps, default=0)

    events: list[dict[str, Any]] = []
    threads: list[dict] | None = None
    host: dict = {"hostname": space.hostnames[0] if space.hostnames else "localhost", "cpu": ""}
    devices: list[dict] = []
    dropped = 0
    for plane in space.planes:
        is_host = plane.name == HOST_PLANE_NAME
        is_gpu = plane.name.startswith(GPU_PLANE_PREFIX)
        if not (is_host or is_gpu):
            continue
        pstats = _plane_stats(plane)
        if is_host:
            if _THREADS in pstats:
                threads = json.loads(pstats[_THREADS])
            else:
                threads = [{"index": k, "name": ln.name, "os_tid": ln.id}
                           for k, ln in enumerate(plane.lines)]
            if _HOST in pstats:
                host = json.loads(pstats[_HOST])
            dropped = int(pstats.get(_DROPPED, 0))
            line_thread = [(ln.id - 1 if _THREADS in pstats else
                            (-1 if ln.name == _UNATTRIBUTED_LINE else k))
                           for k, ln in enumerate(plane.lines)]
        else:
            try:
                dev = int(plane.name[len(GPU_PLANE_PREFIX):])
            except ValueError:
                continue
            if _DEVICE_JSON in pstats:
                devices.append(json.loads(pstats[_DEVICE_JSON]))
            else:
                devices.append({"index": dev, "name": plane.name, "model": "",
                                "compute_capability":
                                    f"{pstats.get('compute_cap_major', 0)}."
                                    f"{pstats.get('compute_cap_minor', 0)}",
                                "memory_bytes": pstats.get("memory_size", 0),
                                "memory_bandwidth_bytes_per_s": pstats.get("memory_bandwidth", 0),
                                "core_count": pstats.get("core_count", 0),
                                "clock_rate_khz": pstats.get("clock_rate", 0)})
        stat_names = {k: v.name for k, v in plane.stat_metadata.items()}
        metas = {}
        for mid, md in plane.event_metadata.items():
            mstats = {stat_names.get(s.metadata_id): _stat_value(s, stat_names)
                      for s in md.stats}
            if _KIND in mstats:
                metas[mid] = (md.display_name, EventKind(int(mstats[_KIND])), True)
            else:
                metas[mid] = (md.display_name or md.name,
                              _guess_kind(md.name, is_host), False)
        for line_no, ln in enumerate(plane.lines):
            base = ln.timestamp_ns - session_start
            for ev in ln.events:
                name, kind, ours = metas.get(ev.metadata_id, ("", EventKind.OP, False))
                start = base + ev.offset_ps // 1000
                rec: dict[str, Any] = {"kind": kind, "name": name, "start_ns": start,
                                       "end_ns": start + ev.duration_ps // 1000}
                raw = [(stat_names.get(s.metadata_id, ""), _stat_value(s, stat_names))
                       for s in ev.stats]
                added = set()
                for key, val in raw:
                    if key == _ADDED:
                        added = set(str(val).split(","))
                stats: dict[str, Any] = {}
                for key, val in raw:
                    if key == _CORRELATION:
                        rec["correlation_id"] = int(val)
                    elif key == _VALUE:
                        rec["value"] = int(val)
                    elif key == _IN_USE:
                        rec["in_use_bytes"] = int(val)
                    elif key == _RESERVED:
                        rec["reserved_bytes"] = int(val)
                    elif key == _DEVICE:
                        rec["device"] = int(val)
                    elif key == _STREAM:
                        rec["stream"] = int(val)
                    elif key == _ADDED or key in added or key == "group_id" and not ours:
                        continue
                    else:
                        stats[key] = val
                if kind == EventKind.STEP and "value" not in rec and "step_num" in stats:
                    rec["value"] = int(stats["step_num"])
                rec["stats"] = format_stats(stats) if stats else ""
                if is_host:
                    rec["thread"] = line_thread[line_no]
                else:
                    rec.update(thread=-1, device=dev, stream=int(ln.id))
                events.append(rec)
    if threads is None:
        threads = []
    kw: dict[str, Any] = {}
    if session_stop is not None:
        kw["session_stop_unix_ns"] = int(session_stop)
    return EventTable.from_events(events, threads=threads, devices=devices, host=host,
                                  session_start_unix_ns=int(session_start),
                                  dropped_events=dropped, **kw)


def _guess_kind(xname: str, is_host: bool) -> EventKind:
    """Our kind for an event of a foreign profile, from its xprof name."""
    lower = xname.lower()
    if not is_host:
        return EventKind.DEVICE_COPY if lower.startswith("memcpy") else EventKind.DEVICE_KERNEL
    if xname.startswith(("train", "test")) and "/" not in xname:
        return EventKind.STEP
    if lower.startswith("iteratorgetnext"):
        return EventKind.INPUT_WAIT
    for kind, prefix in _COPY_NAMES.items():
        if lower.startswith(prefix.lower()):
            return kind
    if xname in ("MemoryAllocation", "MemoryDeallocation"):
        return EventKind.MEMORY
    return EventKind.OP

