"""The C++ trace recorder through gpuaccel._C.profiler: the column contract the Python exporters
rely on (lengths, dtypes, string ids, parent-before-child order), Python begin/end scopes, and
the session errors."""
import numpy as np
import pytest

import gpuaccel
from gpuaccel import _C

P = _C.profiler

DTYPES = {
    "start_ns": np.int64, "end_ns": np.int64, "kind": np.uint8, "name": np.uint32,
    "stats": np.uint32, "thread": np.int32, "device": np.int32, "stream": np.int32,
    "correlation_id": np.int64, "value": np.int64, "in_use_bytes": np.int64,
    "reserved_bytes": np.int64,
}


@pytest.fixture(autouse=True)
def no_session_left_open():
    yield
    if P.is_active():
        P.stop()


def events(trace):
    """(kind name, event name, stats, thread, start, end, value) per event."""
    c, s = trace["columns"], trace["strings"]
    return [(P.EventKind(int(c["kind"][i])).name, s[c["name"][i]], s[c["stats"][i]],
             int(c["thread"][i]), int(c["start_ns"][i]), int(c["end_ns"][i]), int(c["value"][i]))
            for i in range(len(c["kind"]))]


def test_tensor_op_yields_consistent_columns():
    P.set_thread_name("pytest_main")
    a = gpuaccel.randn(16, 16)
    P.start()
    assert P.is_active()
    b = a @ a
    del b
    trace = P.stop()
    assert not P.is_active()
    cols = trace["columns"]
    assert set(cols) == set(DTYPES)
    n = len(cols["start_ns"])
    assert n > 0
    for key, dtype in DTYPES.items():
        assert cols[key].dtype == dtype, key
        assert cols[key].ndim == 1 and len(cols[key]) == n, key
    strings = trace["strings"]
    assert strings[0] == ""
    assert cols["name"].max() < len(strings) and cols["stats"].max() < len(strings)
    assert (cols["end_ns"] >= cols["start_ns"]).all()
    threads = trace["threads"]
    assert all(set(t) == {"index", "name", "os_tid"} for t in threads)
    assert cols["thread"].max() < len(threads)
    # Sorted by (thread, start, -end): parents before children.
    order = np.lexsort((-cols["end_ns"], cols["start_ns"], cols["thread"]))
    assert (order == np.arange(n)).all()
    evs = events(trace)
    matmul = [e for e in evs if e[0] == "OP" and e[1] == "matmul"]
    assert len(matmul) == 1
    assert threads[matmul[0][3]]["name"] == "pytest_main"
    memory = [e for e in evs if e[0] == "MEMORY"]
    assert any(e[1] == "allocate" and e[6] > 0 for e in memory)
    assert any(e[1] == "deallocate" and e[6] < 0 for e in memory)
    assert all("pool=" in e[2] for e in memory)
    assert trace["session_stop_unix_ns"] >= trace["session_start_unix_ns"] > 0
    assert trace["dropped_events"] == 0
    assert isinstance(trace["devices"], list)
    assert set(trace["host"]) == {"hostname", "cpu"}


def test_begin_end_nest_from_python():
    P.start()
    P.begin("outer")
    P.begin("inner", int(P.EventKind.LAYER), 5, "k=v;x=1")
    gpuaccel.randn(4, 4)
    P.end()
    P.end()
    P.end()  # empty stack: no-op
    P.instant("mark", int(P.EventKind.STEP), 3)
    assert P.now_ns() > 0
    trace = P.stop()
    assert P.now_ns() == 0
    evs = events(trace)
    names = [e[1] for e in evs]
    outer = evs[names.index("outer")]
    inner = evs[names.index("inner")]
    op = evs[names.index("random_normal")]
    assert names.index("outer") < names.index("inner") < names.index("random_normal")
    assert outer[0] == "USER" and inner[0] == "LAYER"
    assert inner[2] == "k=v;x=1" and inner[6] == 5
    assert outer[4] <= inner[4] <= op[4] and op[5] <= inner[5] <= outer[5]
    mark = evs[names.index("mark")]
    assert mark[0] == "STEP" and mark[4] == mark[5] and mark[6] == 3


def test_double_start_and_stop_are_runtime_errors():
    with pytest.raises(RuntimeError, match="no profiling session is active"):
        P.stop()
    P.start()
    with pytest.raises(RuntimeError, match=r"already active; call gpuaccel\.profiler\.stop\(\) first"):
        P.start()
    P.stop()
    with pytest.raises(RuntimeError):
        P.stop()
    with pytest.raises(ValueError):
        P.start(0)
    assert not P.is_active()


def test_begin_when_inactive_is_a_noop():
    assert not P.is_active()
    P.begin("ignored")
    P.end()
    P.instant("ignored_instant", int(P.EventKind.USER))
    P.begin(object(), kind="not even converted")  # no argument is looked at when inactive
    P.start()
    P.end()  # nothing was pushed before the session
    trace = P.stop()
    assert "ignored" not in trace["strings"]
    assert len(trace["columns"]["kind"]) == 0


def test_capacity_bound_counts_drops():
    P.start(max_events_per_thread=2)
    for _ in range(5):
        P.begin("s")
        P.end()
    trace = P.stop()
    assert len(trace["columns"]["kind"]) == 2
    assert trace["dropped_events"] == 3


def test_event_kind_numbering():
    expected = ["OP", "LAYER", "BACKWARD", "COPY_HOST_TO_DEVICE", "COPY_DEVICE_TO_HOST",
                "COPY_DEVICE_TO_DEVICE", "INPUT_WAIT", "INPUT_PRODUCE", "OPTIMIZER", "COLLECTIVE",
                "SYNCHRONIZE", "STEP", "USER", "MEMORY", "DEVICE_KERNEL", "DEVICE_COPY"]
    for i, name in enumerate(expected):
        assert int(getattr(P.EventKind, name)) == i
