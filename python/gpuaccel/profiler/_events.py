"""The recorder's event table, validated once, so every exporter and the analysis read one shape.

``gpuaccel._C.profiler.stop()`` hands back a dict of NumPy columns plus string, thread, device
and host tables. Exporters (XSpace, Chrome trace) and the step-time analysis all need the same
checks and the same lookups (event name, parsed ``k=v;k=v`` stats), so they live here, in
pure Python: this module must import without the compiled extension. ``EventTable.from_events``
builds a table from plain records, which is how the tests make synthetic profiles and how the
XSpace reader rebuilds one.
"""
from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["EventKind", "EventTable", "COLUMN_DTYPES", "format_stats", "parse_stats"]


class EventKind(enum.IntEnum):
    """What an event is; the values are the recorder's ``kind`` column (uint8)."""

    OP = 0
    LAYER = 1
    BACKWARD = 2
    COPY_HOST_TO_DEVICE = 3
    COPY_DEVICE_TO_HOST = 4
    COPY_DEVICE_TO_DEVICE = 5
    INPUT_WAIT = 6
    INPUT_PRODUCE = 7
    OPTIMIZER = 8
    COLLECTIVE = 9
    SYNCHRONIZE = 10
    STEP = 11
    USER = 12
    MEMORY = 13
    DEVICE_KERNEL = 14
    DEVICE_COPY = 15


#: Column name -> dtype, in the recorder's order.
COLUMN_DTYPES: dict[str, type] = {
    "start_ns": np.int64,
    "end_ns": np.int64,
    "kind": np.uint8,
    "name": np.uint32,
    "stats": np.uint32,
    "thread": np.int32,
    "device": np.int32,
    "stream": np.int32,
    "correlation_id": np.int64,
    "value": np.int64,
    "in_use_bytes": np.int64,
    "reserved_bytes": np.int64,
}

_DEVICE_PLANE_KINDS = (EventKind.DEVICE_KERNEL, EventKind.DEVICE_COPY)
_RECORD_DEFAULTS = {"device": -1, "stream": -1, "correlation_id": 0, "value": 0,
                    "in_use_bytes": 0, "reserved_bytes": 0}


def parse_stats(text: str) -> dict[str, int | str]:
    """``"a=1;b=x"`` -> ``{"a": 1, "b": "x"}``.

    A value becomes an int only when it is the canonical text of one (``"7"``, ``"-3"``; not
    ``"007"`` or ``"+1"``), so ``format_stats(parse_stats(s)) == s`` for well-formed input.
    """
    out: dict[str, int | str] = {}
    if not text:
        return out
    for part in text.split(";"):
        if not part:
            continue
        key, sep, raw = part.partition("=")
        if not sep or not key:
            raise ValueError(f"malformed profiler stats entry {part!r} in {text!r}; "
                             "expected key=value pairs separated by ';'")
        value: int | str = raw
        try:
            as_int = int(raw)
        except ValueError:
            pass
        else:
            if str(as_int) == raw:
                value = as_int
        out[key] = value
    return out


def format_stats(stats: Mapping[str, Any]) -> str:
    """The inverse of :func:`parse_stats`; keys and text values must not hold ``;`` or ``=``."""
    parts = []
    for key, value in stats.items():
        key = str(key)
        text = str(int(value)) if isinstance(value, (bool, np.integer)) else str(value)
        if not key or any(c in key for c in ";=") or ";" in text:
            raise ValueError(f"profiler stat {key!r}={text!r} cannot be stored: keys must be "
                             "non-empty without ';' or '=', values without ';'")
        parts.append(f"{key}={text}")
    return ";".join(parts)


def _kind_of(value: Any) -> EventKind:
    if isinstance(value, str):
        try:
            return EventKind[value.upper()]
        except KeyError:
            raise ValueError(f"unknown event kind {value!r}; expected one of "
                             f"{[k.name for k in EventKind]}") from None
    try:
        return EventKind(int(value))
    except (ValueError, TypeError):
        raise ValueError(f"unknown event kind {value!r}; expected an EventKind") from None


class EventTable:
    """A validated view of one recorder session.

    Columns are attributes (``table.start_ns``, ``table.kind`` ...), each a 1-D NumPy array of
    the documented dtype; ``strings``, ``threads``, ``devices``, ``host``,
    ``session_start_unix_ns``, ``session_stop_unix_ns`` and ``dropped_events`` mirror the dict.
    Rows are kept sorted by (thread, start, -end, device, stream) so a parent precedes its
    children; an unsorted input is sorted (stably) rather than rejected.
    """

    def __init__(self, data: Mapping[str, Any]):
        if not isinstance(data, Mapping):
            raise TypeError(f"EventTable expects the recorder's dict, got {type(data).__name__}")
        columns = data.get("columns")
        if not isinstance(columns, Mapping):
            raise ValueError("profiler data has no 'columns' dict")
        missing = [c for c in COLUMN_DTYPES if c not in columns]
        if missing:
            raise ValueError(f"profiler data is missing columns {missing}")
        n = None
        cols: dict[str, np.ndarray] = {}
        for cname, dtype in COLUMN_DTYPES.items():
            arr = np.asarray(columns[cname])
            if arr.ndim != 1:
                raise ValueError(f"column {cname!r} must be 1-D, got shape {arr.shape}")
            if n is None:
                n = arr.shape[0]
            elif arr.shape[0] != n:
                raise ValueError(f"column {cname!r} has {arr.shape[0]} rows, expected {n}")
            if arr.size and arr.dtype != dtype:
                if arr.dtype.kind not in "iub":
                    raise TypeError(f"column {cname!r} must hold integers, got {arr.dtype}")
                info = np.iinfo(dtype)
                if arr.min() < info.min or arr.max() > info.max:
                    raise ValueError(f"column {cname!r} has values outside {np.dtype(dtype)}")
            cols[cname] = np.ascontiguousarray(arr, dtype=dtype)

        strings = list(data.get("strings", [""]))
        if not strings or strings[0] != "":
            raise ValueError("profiler strings must start with the empty string at index 0")
        if not all(isinstance(s, str) for s in strings):
            raise TypeError("profiler strings must all be str")
        self.strings: list[str] = strings
        self.threads: list[dict] = [dict(t) for t in data.get("threads", [])]
        for i, t in enumerate(self.threads):
            t.setdefault("index", i)
            t.setdefault("name", f"thread {i}")
            t.setdefault("os_tid", 0)
            if t["index"] != i:
                raise ValueError(f"threads[{i}] has index {t['index']}; indices must be 0..n-1")
        self.devices: list[dict] = [dict(d) for d in data.get("devices", [])]
        for i, d in enumerate(self.devices):
            d.setdefault("index", i)
            d.setdefault("name", f"/device:GPU:{d['index']}")
        self.host: dict = dict(data.get("host", {}))
        self.host.setdefault("hostname", "localhost")
        self.host.setdefault("cpu", "")
        self.session_start_unix_ns = int(data.get("session_start_unix_ns", 0))
        self.session_stop_unix_ns = int(data.get("session_stop_unix_ns",
                                             self.session_start_unix_ns))
        self.dropped_events = int(data.get("dropped_events", 0))

        if n:
            if (cols["end_ns"] < cols["start_ns"]).any():
                bad = int(np.argmax(cols["end_ns"] < cols["start_ns"]))
                raise ValueError(f"event {bad} ends before it starts")
            if int(cols["kind"].max()) > max(EventKind):
                raise ValueError(f"unknown event kind {int(cols['kind'].max())}")
            for cname in ("name", "stats"):
                if int(cols[cname].max()) >= len(strings):
                    raise ValueError(f"column {cname!r} indexes past the {len(strings)} strings")
            t = cols["thread"]
            if int(t.min()) < -1 or int(t.max()) >= len(self.threads):
                raise ValueError(f"column 'thread' holds values in [{int(t.min())}, "
                                 f"{int(t.max())}] but there are {len(self.threads)} threads "
                                 "(-1 marks device events)")
            order = np.lexsort((cols["stream"], cols["device"], -cols["end_ns"],
                               cols["start_ns"], cols["thread"]))
            if not np.array_equal(order, np.arange(n)):
                cols = {k: v[order] for k, v in cols.items()}
        self._columns = cols
        self._stats_cache: dict[int, dict] = {}

    # -- columns -------------------------------------------------------------------------
    def __getattr__(self, name: str) -> np.ndarray:
        cols = self.__dict__.get("_columns")
        if cols is not None and name in cols:
            return cols[name]
        raise AttributeError(f"{type(self).__name__} has no attribute {name!r}")

    @property
    def columns(self) -> dict[str, np.ndarray]:
        return dict(self._columns)

    def __len__(self) -> int:
        return int(self._columns["start_ns"].shape[0])

    def __repr__(self) -> str:
        return (f"EventTable({len(self)} events, {len(self.threads)} threads, "
                f"{len(self.devices)} devices)")

    # -- lookups -------------------------------------------------------------------------
    def name_of(self, i: int) -> str:
        """The name of event ``i``."""
        return self.strings[int(self._columns["name"][i])]

    def stats_of(self, i: int) -> dict[str, int | str]:
        """The stats of event ``i`` as a dict (ints converted); empty when it has none."""
        idx = int(self._columns["stats"][i])
        if idx == 0:
            return {}
        cached = self._stats_cache.get(idx)
        if cached is None:
            cached = self._stats_cache[idx] = parse_stats(self.strings[idx])
        return dict(cached)

    def kind_of(self, i: int) -> EventKind:
        return EventKind(int(self._columns["kind"][i]))

    def event(self, i: int) -> dict[str, Any]:
        """Event ``i`` as a plain record, the shape :meth:`from_events` accepts."""
        c = self._columns
        return {"kind": self.kind_of(i), "name": self.name_of(i),
                "start_ns": int(c["start_ns"][i]), "end_ns": int(c["end_ns"][i]),
                "thread": int(c["thread"][i]), "stats": self.stats_of(i),
                **{k: int(c[k][i]) for k in _RECORD_DEFAULTS}}

    def to_events(self) -> list[dict[str, Any]]:
        return [self.event(i) for i in range(len(self))]

    def to_dict(self) -> dict[str, Any]:
        """The recorder-shaped dict (copies), e.g. to rebuild or to pickle."""
        return {"columns": {k: v.copy() for k, v in self._columns.items()},
                "strings": list(self.strings), "threads": [dict(t) for t in self.threads],
                "devices": [dict(d) for d in self.devices], "host": dict(self.host),
                "session_start_unix_ns": self.session_start_unix_ns,
                "session_stop_unix_ns": self.session_stop_unix_ns,
                "dropped_events": self.dropped_events}

    # -- construction --------------------------------------------------------------------
    @classmethod
    def from_events(cls, events: Sequence[Mapping[str, Any]], *,
                    threads: Sequence[Any] | None = None,
                    devices: Sequence[Mapping[str, Any]] = (),
                    host: Mapping[str, Any] | None = None,
                    session_start_unix_ns: int = 1_700_000_000_000_000_000,
                    session_stop_unix_ns: int | None = None,
                    dropped_events: int = 0) -> "EventTable":
        """Build a table from plain records.

        Each record is a mapping with ``kind`` (EventKind, int or name), ``name`` (str) and
        ``start_ns``; optional ``end_ns`` (default: start, an instant), ``thread`` (default 0
        for host kinds, -1 for DEVICE_KERNEL/DEVICE_COPY), ``stats`` (dict or ``k=v;..`` str),
        ``device``, ``stream``, ``correlation_id``, ``value``, ``in_use_bytes``,
        ``reserved_bytes`` (default -1, -1, then 0). ``threads`` is a list of names or of
        ``{"name", "os_tid"}`` dicts; by default one thread per index used, named
        ``"thread N"``. ``session_stop_unix_ns`` defaults to start + the last event end.
        """
        strings: list[str] = [""]
        index: dict[str, int] = {"": 0}

        def intern(s: str) -> int:
            i = index.get(s)
            if i is None:
                i = index[s] = len(strings)
                strings.append(s)
            return i

        rows = {c: [] for c in COLUMN_DTYPES}
        for n, rec in enumerate(events):
            if not isinstance(rec, Mapping):
                raise TypeError(f"event {n} must be a mapping, got {type(rec).__name__}")
            for key in ("kind", "name", "start_ns"):
                if key not in rec:
                    raise ValueError(f"event {n} has no {key!r}: {dict(rec)!r}")
            unknown = set(rec) - set(COLUMN_DTYPES)
            if unknown:
                raise ValueError(f"event {n} has unknown fields {sorted(unknown)}")
            kind = _kind_of(rec["kind"])
            if not isinstance(rec["name"], str):
                raise TypeError(f"event {n}: name must be str, got {type(rec['name']).__name__}")
            stats = rec.get("stats") or ""
            if not isinstance(stats, str):
                stats = format_stats(stats)
            else:
                parse_stats(stats)  # validates
            start = int(rec["start_ns"])
            rows["start_ns"].append(start)
            rows["end_ns"].append(int(rec.get("end_ns", start)))
            rows["kind"].append(int(kind))
            rows["name"].append(intern(rec["name"]))
            rows["stats"].append(intern(stats) if stats else 0)
            default_thread = -1 if kind in _DEVICE_PLANE_KINDS else 0
            rows["thread"].append(int(rec.get("thread", default_thread)))
            for key, default in _RECORD_DEFAULTS.items():
                rows[key].append(int(rec.get(key, default)))

        max_thread = max(rows["thread"], default=-1)
        if threads is None:
            threads = [f"thread {i}" for i in range(max_thread + 1)]
        thread_dicts = []
        for i, t in enumerate(threads):
            if isinstance(t, str):
                t = {"name": t}
            elif not isinstance(t, Mapping):
                raise TypeError(f"threads[{i}] must be a name or a dict, got {type(t).__name__}")
            thread_dicts.append({"index": i, "name": str(t.get("name", f"thread {i}")),
                                 "os_tid": int(t.get("os_tid", 0))})
        if session_stop_unix_ns is None:
            session_stop_unix_ns = session_start_unix_ns + max(rows["end_ns"], default=0)
        return cls({
            "columns": {c: np.asarray(v, dtype=d) for (c, d), v in
                        zip(COLUMN_DTYPES.items(), rows.values())},
            "strings": strings, "threads": thread_dicts,
            "devices": [dict(d) for d in devices],
            "host": dict(host or {"hostname": "localhost", "cpu": ""}),
            "session_start_unix_ns": int(session_start_unix_ns),
            "session_stop_unix_ns": int(session_stop_unix_ns),
            "dropped_events": int(dropped_events),
        })
