"""Profiler exporters: the XSpace schema against TensorFlow's, XSpace round trips, what xprof
(TensorBoard's Profile tab) makes of our files, and the Chrome trace.

Everything runs on synthetic EventTables, so no recorder build is needed; xprof itself judges
the files through ``xprof.convert.raw_to_tool_data``.
"""
import gzip
import json
import os

import numpy as np
import pytest

from gpuaccel.profiler import _xspace_schema as ours
from gpuaccel.profiler._chrome_trace import GPU_PID_BASE, HOST_PID, write_chrome_trace
from gpuaccel.profiler._events import EventKind as K
from gpuaccel.profiler._events import EventTable, format_stats, parse_stats
from gpuaccel.profiler._xspace import read_xspace, write_xspace, xprof_event_name

RUN = os.path.join("plugins", "profile", "2026_01_02_03_04_05")
GPU0 = {"index": 0, "name": "/device:GPU:0", "model": "Tesla T4", "compute_capability": "7.5",
        "memory_bytes": 15 << 30, "memory_bandwidth_bytes_per_s": 320_000_000_000,
        "core_count": 40, "clock_rate_khz": 1_590_000}
MS = 1_000_000


# --------------------------------------------------------------------------- profiles
def cpu_profile(steps=range(5, 11)):
    """Six CPU steps: 2 ms input wait, a 5 ms layer holding an op, 0.5 ms of Python."""
    ev, t = [], 1 * MS
    for s in steps:
        st = t
        ev.append(dict(kind=K.INPUT_WAIT, name="input_wait", start_ns=t, end_ns=t + 2 * MS))
        t += 2 * MS
        ev.append(dict(kind=K.LAYER, name="dense", start_ns=t, end_ns=t + 5 * MS))
        ev.append(dict(kind=K.OP, name="matmul", start_ns=t + 100, end_ns=t + 5 * MS - 100,
                       stats={"shape": "32x784"}))
        ev.append(dict(kind=K.MEMORY, name="allocate", start_ns=t + 200, value=4096,
                       in_use_bytes=4096 * s, reserved_bytes=1 << 20,
                       stats={"op": "matmul", "pool": "cpu"}))
        ev.append(dict(kind=K.MEMORY, name="free", start_ns=t + 300, value=-4096,
                       in_use_bytes=4096 * (s - 1), reserved_bytes=1 << 20,
                       stats={"op": "matmul", "pool": "cpu"}))
        # A user scope whose name would read as a step marker to xprof.
        ev.append(dict(kind=K.USER, name="training_detail", start_ns=t + 1000,
                       end_ns=t + 2000))
        t += 5 * MS + MS // 2
        ev.append(dict(kind=K.STEP, name="train", start_ns=st, end_ns=t, value=s,
                       stats={"step_num": s, "_r": 1}))
        t += MS // 10
    ev.append(dict(kind=K.INPUT_PRODUCE, name="produce_batch", start_ns=MS, end_ns=3 * MS,
                   thread=1))
    return EventTable.from_events(
        ev, threads=[{"name": "main", "os_tid": 4242}, {"name": "pipeline", "os_tid": 4243}],
        host={"hostname": "testhost", "cpu": "Test CPU"}, dropped_events=3)


def gpu_profile(steps=range(5, 11)):
    """Six GPU steps: 0.5 ms input, a 1 ms H2D copy, three 2 ms kernels, a final sync."""
    ev, t, corr = [], 1 * MS, 1
    for s in steps:
        st = t
        ev.append(dict(kind=K.INPUT_WAIT, name="input_wait", start_ns=t, end_ns=t + MS // 2))
        t += MS // 2
        ev.append(dict(kind=K.COPY_HOST_TO_DEVICE, name="to_device", start_ns=t,
                       end_ns=t + 100_000, correlation_id=corr, value=1 << 20, device=0))
        ev.append(dict(kind=K.DEVICE_COPY, name="copy", start_ns=t + 20_000,
                       end_ns=t + 1_020_000, device=0, stream=1, correlation_id=corr,
                       value=1 << 20))
        corr += 1
        t += 100_000
        for k in range(3):
            ev.append(dict(kind=K.OP, name="matmul", start_ns=t, end_ns=t + 50_000,
                           correlation_id=corr, device=0))
            k0 = st + 1_700_000 + k * 2 * MS
            ev.append(dict(kind=K.DEVICE_KERNEL, name="sgemm_128x64", start_ns=k0,
                           end_ns=k0 + 2 * MS - 10_000, device=0, stream=0,
                           correlation_id=corr))
            corr += 1
            t += 50_000
        ev.append(dict(kind=K.SYNCHRONIZE, name="synchronize", start_ns=t,
                       end_ns=st + 7_800_000))
        t = st + 8 * MS
        ev.append(dict(kind=K.STEP, name="train", start_ns=st, end_ns=t, value=s,
                       stats={"step_num": s, "_r": 1}))
        t += MS // 10
    return EventTable.from_events(ev, threads=["main"], devices=[GPU0])


@pytest.fixture(scope="module")
def cpu_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cpu") / RUN / "testhost.xplane.pb"
    write_xspace(cpu_profile(), path)
    return str(path)


@pytest.fixture(scope="module")
def gpu_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("gpu") / RUN / "testhost.xplane.pb"
    write_xspace(gpu_profile(), path)
    return str(path)


def xprof_tool(path, tool):
    from xprof.convert import raw_to_tool_data

    data, content_type = raw_to_tool_data.xspace_to_tool_data(
        [path], tool, {"use_saved_result": False})
    assert data, f"xprof returned nothing for {tool}"
    return json.loads(data)


def step_table(tables):
    for t in tables:
        if t.get("cols") and t["cols"][0]["id"] == "stepnum" and t.get("rows"):
            return t
    raise AssertionError("xprof produced no step-time table")


def step_rows(table):
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (c.get("v") for c in row["c"]))) for row in table["rows"]]


# ----------------------------------------------------------------------- event table
def test_event_kind_values():
    assert [(k.name, int(k)) for k in K] == [
        ("OP", 0), ("LAYER", 1), ("BACKWARD", 2), ("COPY_HOST_TO_DEVICE", 3),
        ("COPY_DEVICE_TO_HOST", 4), ("COPY_DEVICE_TO_DEVICE", 5), ("INPUT_WAIT", 6),
        ("INPUT_PRODUCE", 7), ("OPTIMIZER", 8), ("COLLECTIVE", 9), ("SYNCHRONIZE", 10),
        ("STEP", 11), ("USER", 12), ("MEMORY", 13), ("DEVICE_KERNEL", 14),
        ("DEVICE_COPY", 15)]


def test_stats_parse_and_format():
    assert parse_stats("") == {}
    assert parse_stats("step_num=7;_r=1;op=MatMul;pad=007;neg=-3") == {
        "step_num": 7, "_r": 1, "op": "MatMul", "pad": "007", "neg": -3}
    text = "step_num=7;_r=1;op=MatMul;pad=007"
    assert format_stats(parse_stats(text)) == text
    with pytest.raises(ValueError, match="malformed"):
        parse_stats("novalue")
    with pytest.raises(ValueError, match="cannot be stored"):
        format_stats({"a;b": 1})


def test_table_wraps_the_recorder_dict():
    table = cpu_profile()
    raw = table.to_dict()
    again = EventTable(raw)
    assert again.to_events() == table.to_events()
    assert again.start_ns.dtype == np.int64 and again.kind.dtype == np.uint8
    assert again.name.dtype == np.uint32 and again.thread.dtype == np.int32
    assert again.strings[0] == ""
    steps = np.flatnonzero(again.kind == K.STEP)
    assert again.name_of(steps[0]) == "train"
    assert again.stats_of(steps[0]) == {"step_num": 5, "_r": 1}
    assert again.threads[0] == {"index": 0, "name": "main", "os_tid": 4242}
    assert again.dropped_events == 3 and again.host["cpu"] == "Test CPU"
    # parents precede children: sorted by (thread, start, -end)
    order = np.lexsort((-again.end_ns, again.start_ns, again.thread))
    assert np.array_equal(order, np.arange(len(again)))


def test_table_rejects_bad_input():
    good = dict(kind=K.OP, name="x", start_ns=10, end_ns=20)
    with pytest.raises(ValueError, match="unknown event kind"):
        EventTable.from_events([dict(good, kind=99)])
    with pytest.raises(ValueError, match="ends before it starts"):
        EventTable.from_events([dict(good, end_ns=5)])
    with pytest.raises(ValueError, match="threads"):
        EventTable.from_events([dict(good, thread=3)], threads=["main"])
    with pytest.raises(ValueError, match="no 'start_ns'"):
        EventTable.from_events([{"kind": K.OP, "name": "x"}])
    with pytest.raises(ValueError, match="unknown fields"):
        EventTable.from_events([dict(good, colour="red")])
    with pytest.raises(TypeError, match="mapping"):
        EventTable.from_events([("x", 1)])
    raw = EventTable.from_events([good]).to_dict()
    raw["columns"]["end_ns"] = np.array([20, 30])
    with pytest.raises(ValueError, match="rows"):
        EventTable(raw)
    raw = EventTable.from_events([good]).to_dict()
    raw["strings"] = ["x"]
    with pytest.raises(ValueError, match="empty string"):
        EventTable(raw)
    raw = EventTable.from_events([good]).to_dict()
    del raw["columns"]["stream"]
    with pytest.raises(ValueError, match="missing columns"):
        EventTable(raw)
    with pytest.raises(TypeError):
        EventTable([1, 2])


# ------------------------------------------------------------------------ the schema
def _describe(desc):
    fields = []
    for f in desc.fields:
        fields.append((f.name, f.number, f.type, f.is_repeated,
                       f.containing_oneof.name if f.containing_oneof else None,
                       f.message_type.full_name if f.message_type else None))
    nested = {n.name: _describe(n) for n in desc.nested_types}
    maps = {n.name: n.GetOptions().map_entry for n in desc.nested_types}
    oneofs = [(o.name, [f.name for f in o.fields]) for o in desc.oneofs]
    return {"full_name": desc.full_name, "fields": sorted(fields), "oneofs": oneofs,
            "nested": nested, "map_entries": maps}


def test_descriptor_matches_tensorflow():
    from tensorflow.tsl.profiler.protobuf import xplane_pb2 as tf

    names = ["XSpace", "XPlane", "XLine", "XEvent", "XStat", "XEventMetadata", "XStatMetadata"]
    assert set(names) == set(tf.DESCRIPTOR.message_types_by_name)
    for name in names:
        mine = _describe(getattr(ours, name).DESCRIPTOR)
        theirs = _describe(getattr(tf, name).DESCRIPTOR)
        assert mine == theirs, name
    assert ours.XSpace.DESCRIPTOR.file.package == tf.DESCRIPTOR.package == "tensorflow.profiler"


def test_messages_cross_parse_with_tensorflow():
    from tensorflow.tsl.profiler.protobuf import xplane_pb2 as tf

    space = ours.XSpace(hostnames=["h"], warnings=["w"], errors=["e"])
    plane = space.planes.add(id=3, name="/host:CPU")
    plane.stat_metadata[1].name = "step_num"
    plane.event_metadata[7].name = "train"
    plane.event_metadata[7].display_name = "train"
    plane.event_metadata[7].child_id.extend([1, 2])
    plane.stats.add(metadata_id=1, uint64_value=2**63 + 5)
    line = plane.lines.add(id=1, display_id=2, name="main", display_name="Main",
                           timestamp_ns=123, duration_ps=456)
    ev = line.events.add(metadata_id=7, offset_ps=1000, duration_ps=2000)
    ev.stats.add(metadata_id=1, int64_value=-6)
    ev.stats.add(metadata_id=1, double_value=0.5)
    ev.stats.add(metadata_id=1, str_value="s")
    ev.stats.add(metadata_id=1, bytes_value=b"\x00\x01")
    ev.stats.add(metadata_id=1, ref_value=1)
    line.events.add(metadata_id=7, num_occurrences=4)
    blob = space.SerializeToString()
    theirs = tf.XSpace.FromString(blob)
    assert theirs.planes[0].lines[0].events[0].stats[0].int64_value == -6
    assert theirs.planes[0].lines[0].events[1].WhichOneof("data") == "num_occurrences"
    assert theirs.planes[0].event_metadata[7].child_id == [1, 2]
    assert theirs.planes[0].stats[0].uint64_value == 2**63 + 5
    back = ours.XSpace.FromString(theirs.SerializeToString())
    assert back == space
    assert back.SerializeToString(deterministic=True) == \
        theirs.SerializeToString(deterministic=True)


# ------------------------------------------------------------------------ round trips
@pytest.mark.parametrize("make", [cpu_profile, gpu_profile], ids=["cpu", "gpu"])
def test_xspace_round_trip(tmp_path, make):
    table = make()
    path = write_xspace(table, tmp_path / "a" / "h.xplane.pb")
    back = read_xspace(path)
    assert back.to_events() == table.to_events()
    assert back.threads == table.threads
    assert back.devices == table.devices
    assert back.host == table.host
    assert back.session_start_unix_ns == table.session_start_unix_ns
    assert back.session_stop_unix_ns == table.session_stop_unix_ns
    assert back.dropped_events == table.dropped_events
    assert os.listdir(tmp_path / "a") == ["h.xplane.pb"]  # no temp file left behind


def test_round_trip_edge_cases(tmp_path):
    table = EventTable.from_events([
        dict(kind=K.STEP, name="predict", start_ns=0, end_ns=100, value=0),  # no stats
        dict(kind=K.OP, name="", start_ns=10, end_ns=20),                    # empty name
        dict(kind=K.USER, name="test_scope", start_ns=30, end_ns=40,
             stats="note=a b;n=-1"),
        dict(kind=K.OP, name="orphan", start_ns=5, end_ns=6, thread=-1),     # no thread
        dict(kind=K.MEMORY, name="alloc", start_ns=50, value=64, in_use_bytes=64,
             reserved_bytes=128, device=0, stats="op=Add;addr=4096"),
    ], threads=["t0"], session_start_unix_ns=5)
    back = read_xspace(write_xspace(table, tmp_path / "e.xplane.pb"))
    assert back.to_events() == table.to_events()


def test_write_rejects_reserved_stats_and_bad_input(tmp_path):
    table = EventTable.from_events([dict(kind=K.OP, name="x", start_ns=0, end_ns=1,
                                         stats={"gpuaccel_kind": 3})])
    with pytest.raises(ValueError, match="reserved"):
        write_xspace(table, tmp_path / "x.xplane.pb")
    assert not os.path.exists(tmp_path / "x.xplane.pb")
    with pytest.raises(TypeError, match="EventTable"):
        write_xspace({"columns": {}}, tmp_path / "y.xplane.pb")
    (tmp_path / "junk.xplane.pb").write_bytes(b"\xff\xff\xff")
    with pytest.raises(ValueError, match="not a serialized XSpace"):
        read_xspace(tmp_path / "junk.xplane.pb")
    with pytest.raises(FileNotFoundError):
        read_xspace(tmp_path / "missing.xplane.pb")


def test_xprof_names():
    assert xprof_event_name(K.STEP, "train") == "train"
    assert xprof_event_name(K.STEP, "predict") == "test"
    assert xprof_event_name(K.INPUT_WAIT, "wait") == "IteratorGetNext"
    assert xprof_event_name(K.COPY_HOST_TO_DEVICE, "x") == "MemcpyHToD"
    assert xprof_event_name(K.COPY_DEVICE_TO_HOST, "x") == "MemcpyDToH"
    assert xprof_event_name(K.COPY_DEVICE_TO_DEVICE, "x") == "MemcpyDToD"
    assert xprof_event_name(K.DEVICE_COPY, "x", copy_kind=K.COPY_HOST_TO_DEVICE) == "MemcpyHToD"
    assert xprof_event_name(K.MEMORY, "a", value=8) == "MemoryAllocation"
    assert xprof_event_name(K.MEMORY, "a", value=-8) == "MemoryDeallocation"
    assert xprof_event_name(K.OP, "matmul") == "matmul"
    assert xprof_event_name(K.USER, "training") == "gpuaccel/training"
    assert xprof_event_name(K.OP, "memcpy_fast") == "gpuaccel/memcpy_fast"


def test_xspace_layout(gpu_file):
    space = ours.XSpace.FromString(open(gpu_file, "rb").read())
    names = [p.name for p in space.planes]
    assert names == ["/host:CPU", "/device:GPU:0", "Task Environment"]
    gpu = space.planes[1]
    stat_names = {k: v.name for k, v in gpu.stat_metadata.items()}
    caps = {stat_names[s.metadata_id]: s for s in gpu.stats}
    assert caps["compute_cap_major"].int64_value == 7
    assert caps["compute_cap_minor"].int64_value == 5
    assert caps["clock_rate"].uint64_value == 1_590_000
    assert caps["core_count"].uint64_value == 40
    assert caps["memory_bandwidth"].uint64_value == 320_000_000_000
    assert caps["memory_size"].uint64_value == 15 << 30
    assert sorted(line.name for line in gpu.lines) == ["Stream #0", "Stream #1"]
    env = space.planes[2]
    env_names = {k: v.name for k, v in env.stat_metadata.items()}
    env_stats = {env_names[s.metadata_id]: s.uint64_value for s in env.stats}
    assert env_stats["profile_start_time"] == gpu_profile().session_start_unix_ns
    assert env_stats["profile_stop_time"] == gpu_profile().session_stop_unix_ns
    copy_line = next(line for line in gpu.lines if line.name == "Stream #1")
    md = gpu.event_metadata[copy_line.events[0].metadata_id]
    assert md.name == "MemcpyHToD" and md.display_name == "copy"
    ev_stats = {stat_names[s.metadata_id]: s for s in copy_line.events[0].stats}
    assert ev_stats["memcpy_details"].str_value == f"num_bytes:{1 << 20}"
    assert ev_stats["correlation_id"].int64_value == 1


# ------------------------------------------------------------------ xprof judges the file
def test_xprof_overview_cpu(cpu_file):
    tables = xprof_tool(cpu_file, "overview_page")
    steps = step_table(tables)
    ids = [c["id"] for c in steps["cols"]]
    assert "infeedTimeMs" in ids and "hostComputeTimeMs" in ids
    rows = step_rows(steps)
    # xprof drops the first and last of more than 5 steps as possibly incomplete.
    assert [r["stepnum"] for r in rows] == ["train 6", "train 7", "train 8", "train 9"]
    for r in rows:
        assert r["infeedTimeMs"] == pytest.approx(2.0, abs=0.01)
        assert r["hostComputeTimeMs"] == pytest.approx(5.0, abs=0.01)
        assert r["stepTimeMs"] == pytest.approx(7.5, abs=0.01)
    assert steps["p"]["hardware_type"] == "CPU_ONLY"
    assert "input-bound" in steps["p"]["input_conclusion"]


def test_xprof_input_pipeline_cpu(cpu_file):
    tables = xprof_tool(cpu_file, "input_pipeline_analyzer")
    rows = step_rows(step_table(tables))
    assert len(rows) == 4
    assert all(r["infeedTimeMs"] == pytest.approx(2.0, abs=0.01) for r in rows)


def test_xprof_trace_viewer(cpu_file):
    trace = xprof_tool(cpu_file, "trace_viewer")
    events = trace["traceEvents"]
    thread_names = {e["args"]["name"] for e in events
                    if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert {"main", "pipeline"} <= thread_names
    complete = [e for e in events if e.get("ph") == "X"]
    count = {}
    for e in complete:
        count[e["name"]] = count.get(e["name"], 0) + 1
    # our names are shown; xprof names each step marker "train <step_num>"
    assert count["input_wait"] == 6 and count["dense"] == 6 and count["matmul"] == 6
    assert count["training_detail"] == 6 and count["produce_batch"] == 1
    assert sorted(n for n in count if n.startswith("train ")) == [
        f"train {s}" for s in sorted(range(5, 11), key=str)]


def test_xprof_memory_profile(cpu_file):
    mem = xprof_tool(cpu_file, "memory_profile")
    cpu = mem["memoryProfilePerAllocator"]["cpu"]
    peak = cpu["profileSummary"]["peakStats"]
    assert int(peak["heapAllocatedBytes"]) == 4096 * 10
    assert int(cpu["profileSummary"]["memoryCapacity"]) == 1 << 20
    ops = {s["activityMetadata"].get("tfOpName") for s in cpu["memoryProfileSnapshots"]}
    assert ops == {"matmul"}


def test_xprof_overview_gpu(gpu_file):
    tables = xprof_tool(gpu_file, "overview_page")
    steps = step_table(tables)
    assert steps["p"]["hardware_type"] == "GPU"
    rows = step_rows(steps)
    assert len(rows) == 4  # six steps grouped through correlation ids, first/last dropped
    for r in rows:
        # three 1.99 ms kernels per step, all grouped into the step
        assert r["deviceComputeTimeMs"] == pytest.approx(5.97, abs=0.01)
        # host input wait (0.5 ms) plus the 1 ms host-to-device copy
        assert r["infeedTimeMs"] == pytest.approx(1.0, abs=0.05)
    assert float(steps["p"]["device_compute_time_ms_avg"]) == pytest.approx(6.0, abs=0.05)


# ---------------------------------------------------------------------- chrome trace
def _load_trace(path):
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


@pytest.mark.parametrize("make", [cpu_profile, gpu_profile], ids=["cpu", "gpu"])
def test_chrome_trace(tmp_path, make):
    table = make()
    path = write_chrome_trace(table, tmp_path / "t" / "h.trace.json.gz")
    assert os.listdir(tmp_path / "t") == ["h.trace.json.gz"]
    doc = _load_trace(path)
    assert doc["displayTimeUnit"] == "ns"
    assert doc["otherData"]["host"] == table.host
    assert doc["otherData"]["devices"] == table.devices
    assert doc["otherData"]["dropped_events"] == table.dropped_events
    events = doc["traceEvents"]
    meta = [e for e in events if e["ph"] == "M"]
    procs = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    assert HOST_PID in procs
    assert any(e["name"] == "process_sort_index" for e in meta)
    threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in meta
               if e["name"] == "thread_name"}
    for t in table.threads:
        assert threads[(HOST_PID, t["index"])] == t["name"]
    complete = [e for e in events if e["ph"] == "X"]
    n_instant = int((table.kind == K.MEMORY).sum())
    assert len(complete) == len(table) - n_instant
    assert {e["args"]["kind"] for e in complete} >= {"STEP", "INPUT_WAIT"}
    # per track, events nest properly (no partial overlaps), checked in integer ns
    tracks = {}
    for e in complete:
        s = round(e["ts"] * 1000)
        tracks.setdefault((e["pid"], e["tid"]), []).append((s, s + round(e["dur"] * 1000)))
    for key, spans in tracks.items():
        spans.sort(key=lambda x: (x[0], -x[1]))
        stack = []
        for s, e in spans:
            while stack and stack[-1] <= s:
                stack.pop()
            assert not stack or e <= stack[-1], f"partial overlap on track {key}"
            stack.append(e)
    if table.devices:
        gpu_pid = GPU_PID_BASE + 0
        assert "Tesla T4" in procs[gpu_pid]
        assert threads[(gpu_pid, 0)] == "Stream #0"
        kernels = [e for e in complete if e["pid"] == gpu_pid and e["tid"] == 0]
        assert len(kernels) == 18 and all("correlation_id" in e["args"] for e in kernels)
    else:
        counters = [e for e in events if e["ph"] == "C"]
        assert len(counters) == n_instant
        assert max(c["args"]["in_use_bytes"] for c in counters) == 4096 * 10
        assert all(c["args"]["reserved_bytes"] == 1 << 20 for c in counters)
        step = next(e for e in complete if e["args"]["kind"] == "STEP")
        assert step["args"]["step_num"] == 5 and step["args"]["value"] == 5
