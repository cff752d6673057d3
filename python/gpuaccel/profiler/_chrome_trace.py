"""Writes an EventTable as a gzip'd Chrome trace, the format Perfetto and chrome://tracing open.

TensorBoard's Profile tab needs TensorBoard; a Chrome trace (``*.trace.json.gz``) opens by
drag-and-drop in https://ui.perfetto.dev or chrome://tracing, which is what students reach for
on Colab. Layout: process 1 is the host (one track per recorder thread), process ``100 + N``
is GPU N (one track per stream). Durations are ``"X"`` complete events (ts and dur in
microseconds, as floats, so nanoseconds survive), memory is ``"C"`` counters (bytes in use
and reserved per device), names come from ``"M"`` metadata events, and ``otherData`` carries
the host, devices and the dropped-event count.
"""
from __future__ import annotations

import gzip
import json
import os
from typing import Any

import numpy as np

from .._atomic_file import atomic_write_bytes
from ._events import EventKind, EventTable

__all__ = ["write_chrome_trace", "chrome_trace_document", "chrome_trace_events", "HOST_PID", "GPU_PID_BASE"]

HOST_PID = 1
GPU_PID_BASE = 100
_US = 1000.0  # ns per microsecond


def _pid(device: int, on_device: bool) -> int:
    return GPU_PID_BASE + device if on_device else HOST_PID


def chrome_trace_events(table: EventTable) -> list[dict[str, Any]]:
    """The trace events (metadata first, then complete events, then counters)."""
    if not isinstance(table, EventTable):
        raise TypeError(f"expected an EventTable, got {type(table).__name__}")
    out: list[dict[str, Any]] = []
    host_name = str(table.host.get("hostname", "host"))
    out.append({"ph": "M", "name": "process_name", "pid": HOST_PID, "tid": 0,
                "args": {"name": f"Host ({host_name})"}})
    out.append({"ph": "M", "name": "process_sort_index", "pid": HOST_PID, "tid": 0,
                "args": {"sort_index": 0}})
    for t in table.threads:
        out.append({"ph": "M", "name": "thread_name", "pid": HOST_PID, "tid": int(t["index"]),
                    "args": {"name": str(t["name"])}})
        out.append({"ph": "M", "name": "thread_sort_index", "pid": HOST_PID,
                    "tid": int(t["index"]), "args": {"sort_index": int(t["index"])}})

    kinds = table.kind
    on_device = np.isin(kinds, [EventKind.DEVICE_KERNEL, EventKind.DEVICE_COPY]) & \
        (table.device >= 0)
    devices = {int(d["index"]): d for d in table.devices}
    for dev in sorted(set(devices) | {int(d) for d in np.unique(table.device[on_device])}):
        d = devices.get(dev, {})
        label = str(d.get("name", f"/device:GPU:{dev}"))
        if d.get("model"):
            label += f" ({d['model']})"
        pid = _pid(dev, True)
        out.append({"ph": "M", "name": "process_name", "pid": pid, "tid": 0,
                    "args": {"name": label}})
        out.append({"ph": "M", "name": "process_sort_index", "pid": pid, "tid": 0,
                    "args": {"sort_index": pid}})
        rows = on_device & (table.device == dev)
        for s in sorted({int(s) for s in table.stream[rows]}):
            out.append({"ph": "M", "name": "thread_name", "pid": pid, "tid": s,
                        "args": {"name": f"Stream #{s}"}})
    if (table.thread[~on_device] == -1).any():
        out.append({"ph": "M", "name": "thread_name", "pid": HOST_PID, "tid": -1,
                    "args": {"name": "unattributed"}})

    start, end = table.start_ns, table.end_ns
    counters: list[dict[str, Any]] = []
    for i in range(len(table)):
        kind = EventKind(int(kinds[i]))
        dev_event = bool(on_device[i])
        pid = _pid(int(table.device[i]), dev_event)
        tid = int(table.stream[i]) if dev_event else int(table.thread[i])
        args: dict[str, Any] = {"kind": kind.name}
        args.update(table.stats_of(i))
        for col in ("correlation_id", "value"):
            v = int(getattr(table, col)[i])
            if v:
                args[col] = v
        if kind == EventKind.MEMORY:
            in_use, reserved = int(table.in_use_bytes[i]), int(table.reserved_bytes[i])
            args.update(bytes=int(table.value[i]), in_use_bytes=in_use,
                        reserved_bytes=reserved)
            mem_dev = int(table.device[i])
            counters.append({"ph": "C", "name": "Memory " + ("(host)" if mem_dev < 0 else
                                                             f"(GPU:{mem_dev})"),
                             "pid": _pid(mem_dev, mem_dev >= 0), "tid": 0,
                             "ts": int(start[i]) / _US,
                             "args": {"in_use_bytes": in_use, "reserved_bytes": reserved}})
            out.append({"ph": "i", "s": "t", "name": table.name_of(i), "cat": kind.name,
                        "pid": pid, "tid": tid, "ts": int(start[i]) / _US, "args": args})
            continue
        out.append({"ph": "X", "name": table.name_of(i), "cat": kind.name, "pid": pid,
                    "tid": tid, "ts": int(start[i]) / _US,
                    "dur": (int(end[i]) - int(start[i])) / _US, "args": args})
    return out + counters


def write_chrome_trace(table: EventTable, path: str | os.PathLike, compress: bool = True) -> str:
    """Write ``table`` as Chrome Trace Event JSON to ``path`` (atomically), gzip'd unless
    ``compress`` is false."""
    data = json.dumps(chrome_trace_document(table), separators=(",", ":"),
                      default=_json_default).encode("utf-8")
    if compress:
        data = gzip.compress(data, compresslevel=6, mtime=0)
    return atomic_write_bytes(path, data)


def chrome_trace_document(table: EventTable) -> dict[str, Any]:
    """The trace in the Trace Event Format's JSON object form: ``traceEvents`` and metadata."""
    return {
        "displayTimeUnit": "ns",
        "traceEvents": chrome_trace_events(table),
        "otherData": {
            "producer": "gpuaccel.profiler",
            "host": dict(table.host),
            "devices": [dict(d) for d in table.devices],
            "dropped_events": int(table.dropped_events),
            "session_start_unix_ns": int(table.session_start_unix_ns),
            "session_stop_unix_ns": int(table.session_stop_unix_ns),
        },
    }


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    raise TypeError(f"cannot write {type(obj).__name__} into a Chrome trace")
