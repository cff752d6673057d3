"""Step-time analysis (``gpuaccel.profiler.analyze``): categories from interval unions, the
bottleneck rule, memory peaks, and finding runs on disk, on synthetic EventTables."""
import json
import os

import numpy as np
import pytest

from gpuaccel.profiler import _intervals as iv
from gpuaccel.profiler._analysis import analyze, analyze_table, find_profile
from gpuaccel.profiler._events import EventKind as K
from gpuaccel.profiler._events import EventTable
from gpuaccel.profiler._xspace import write_xspace

MS = 1_000_000
GPU0 = {"index": 0, "name": "/device:GPU:0", "model": "Tesla T4", "compute_capability": "7.5",
        "memory_bytes": 15 << 30, "memory_bandwidth_bytes_per_s": 320_000_000_000,
        "core_count": 40, "clock_rate_khz": 1_590_000}


def cpu_steps(n, input_ms, compute_ms, gap_ms, *, op_ms=None, ops=1):
    """``n`` CPU steps: an input wait, ``ops`` layers each holding an op, then a gap."""
    ev, t = [], MS
    for s in range(n):
        st = t
        if input_ms:
            ev.append(dict(kind=K.INPUT_WAIT, name="wait", start_ns=t,
                           end_ns=t + int(input_ms * MS)))
            t += int(input_ms * MS)
        each = int(compute_ms * MS / ops)
        for _ in range(ops):
            ev.append(dict(kind=K.LAYER, name="dense", start_ns=t, end_ns=t + each))
            ev.append(dict(kind=K.OP, name="matmul", start_ns=t,
                           end_ns=t + int((op_ms or compute_ms / ops) * MS)))
            t += each
            t += int(gap_ms * MS / ops)
        ev.append(dict(kind=K.STEP, name="train", start_ns=st, end_ns=t, value=s,
                       stats={"step_num": s, "_r": 1}))
        t += MS // 10
    return ev


def table(ev, **kw):
    return EventTable.from_events(ev, **kw)


def test_intervals():
    u = iv.union([0, 5, 2, 20], [3, 10, 6, 25])
    assert u.tolist() == [[0, 10], [20, 25]]
    assert iv.total(u) == 15
    assert iv.subtract(u, iv.union([2, 22], [4, 30])).tolist() == [[0, 2], [4, 10], [20, 22]]
    assert iv.intersect(u, iv.union([8], [21])).tolist() == [[8, 10], [20, 21]]
    assert iv.clip(u, 5, 22).tolist() == [[5, 10], [20, 22]]
    assert iv.union([], []).shape == (0, 2)
    assert iv.total(iv.merge(u, iv.union([9], [12]))) == 17


def test_input_bound():
    r = analyze_table(table(cpu_steps(4, input_ms=3, compute_ms=5, gap_ms=0.5)))
    assert r.bottleneck == "input"
    assert r.average_ms["input_ms"] == pytest.approx(3.0)
    assert r.average_ms["host_compute_ms"] == pytest.approx(5.0)
    assert r.average_ms["idle_ms"] == pytest.approx(0.5)
    assert r.fractions["input"] == pytest.approx(3 / 8.5)
    assert "prefetch(gpuaccel.data.AUTOTUNE)" in r.suggestion
    assert "num_parallel_calls" in r.suggestion and "cache" in r.suggestion
    assert r.device_utilization is None and not r.gpu_run


def test_input_wins_at_twenty_percent_even_when_compute_is_larger():
    r = analyze_table(table(cpu_steps(3, input_ms=2, compute_ms=7.5, gap_ms=0.5)))
    assert r.fractions["input"] == pytest.approx(0.2)
    assert r.fractions["compute"] > r.fractions["input"]
    assert r.bottleneck == "input"
    r = analyze_table(table(cpu_steps(3, input_ms=1.9, compute_ms=7.6, gap_ms=0.5)))
    assert r.bottleneck == "compute"


def test_host_overhead_larger_than_input_wins_over_the_input_rule():
    # A tiny model at batch 1: the batch fetch is 30% of the step, framework time 50%.
    r = analyze_table(table(cpu_steps(3, input_ms=3, compute_ms=2, gap_ms=5)))
    assert r.fractions["input"] >= 0.2
    assert r.bottleneck == "host-overhead"


def test_compute_bound():
    r = analyze_table(table(cpu_steps(5, input_ms=0.2, compute_ms=9, gap_ms=0.3)))
    assert r.bottleneck == "compute"
    assert "mixed_float16" in r.suggestion and "mixed_bfloat16" in r.suggestion
    assert "set_global_policy" in r.suggestion


def test_host_overhead_bound():
    # Many tiny ops with Python time between them.
    r = analyze_table(table(cpu_steps(5, input_ms=0.1, compute_ms=4, gap_ms=6, ops=20)))
    assert r.bottleneck == "host-overhead"
    assert r.average_ms["idle_ms"] == pytest.approx(6.0, rel=1e-3)
    assert "batch size" in r.suggestion


def test_nested_and_overlapping_events_counted_once():
    ev = [
        dict(kind=K.STEP, name="train", start_ns=0, end_ns=10 * MS, value=1),
        dict(kind=K.LAYER, name="block", start_ns=1 * MS, end_ns=6 * MS),
        dict(kind=K.OP, name="conv", start_ns=1 * MS, end_ns=4 * MS),
        dict(kind=K.OP, name="relu", start_ns=4 * MS, end_ns=6 * MS),
        dict(kind=K.BACKWARD, name="conv_grad", start_ns=5 * MS, end_ns=8 * MS),
        dict(kind=K.OPTIMIZER, name="adam", start_ns=7 * MS, end_ns=9 * MS),
        # an input wait nested in an op is input, not compute
        dict(kind=K.INPUT_WAIT, name="wait", start_ns=2 * MS, end_ns=3 * MS),
        # another thread's work does not count toward this step's host time
        dict(kind=K.OP, name="worker", start_ns=0, end_ns=10 * MS, thread=1),
    ]
    r = analyze_table(table(ev, threads=["main", "worker"]))
    s = r.steps[0]
    assert s.input_ms == pytest.approx(1.0)
    # kernels [1, 6) minus the 1 ms input wait; the backward/optimizer scopes outside kernels
    # ([6, 9)) are framework bookkeeping, counted with the idle time as host overhead
    assert s.host_compute_ms == pytest.approx(4.0)
    assert s.idle_ms == pytest.approx(5.0)
    assert s.step_ms == pytest.approx(10.0)
    total = s.input_ms + s.transfer_ms + s.sync_ms + s.device_compute_ms + s.host_compute_ms \
        + s.idle_ms
    assert total == pytest.approx(s.step_ms)


def test_transfer_and_sync_categories_on_cpu():
    ev = [
        dict(kind=K.STEP, name="train", start_ns=0, end_ns=10 * MS, value=0),
        dict(kind=K.OP, name="step_fn", start_ns=0, end_ns=9 * MS),
        dict(kind=K.COPY_HOST_TO_DEVICE, name="h2d", start_ns=1 * MS, end_ns=5 * MS),
        dict(kind=K.COPY_DEVICE_TO_HOST, name="d2h", start_ns=4 * MS, end_ns=6 * MS),
        dict(kind=K.SYNCHRONIZE, name="sync", start_ns=5 * MS, end_ns=7 * MS),
    ]
    r = analyze_table(table(ev))
    s = r.steps[0]
    assert s.transfer_ms == pytest.approx(5.0)  # union of [1,5) and [4,6)
    assert s.sync_ms == pytest.approx(1.0)      # [6,7): [5,6) is already transfer
    assert s.host_compute_ms == pytest.approx(3.0)
    assert r.bottleneck == "transfer"
    assert "pinned" in r.suggestion
    ev[2:4] = []
    ev.append(dict(kind=K.COLLECTIVE, name="all_reduce", start_ns=1 * MS, end_ns=6 * MS))
    r = analyze_table(table(ev))
    assert r.bottleneck == "sync" and r.steps[0].sync_ms == pytest.approx(6.0)
    assert ".numpy()" in r.suggestion and "per-replica batch" in r.suggestion


def gpu_events(n=4, kernel_ms=2.0, kernels=3, copy_ms=1.0):
    ev, t, corr = [], MS, 1
    for s in range(n):
        st = t
        ev.append(dict(kind=K.INPUT_WAIT, name="wait", start_ns=t, end_ns=t + MS // 2))
        t += MS // 2
        ev.append(dict(kind=K.COPY_HOST_TO_DEVICE, name="h2d", start_ns=t, end_ns=t + 100_000,
                       correlation_id=corr, device=0, value=1 << 20))
        ev.append(dict(kind=K.DEVICE_COPY, name="copy", start_ns=t + 20_000,
                       end_ns=t + 20_000 + int(copy_ms * MS), device=0, stream=1,
                       correlation_id=corr, value=1 << 20))
        corr += 1
        t += 100_000
        k0 = t + int(copy_ms * MS)
        for k in range(kernels):
            ev.append(dict(kind=K.OP, name="matmul", start_ns=t, end_ns=t + 50_000,
                           correlation_id=corr, device=0))
            ev.append(dict(kind=K.DEVICE_KERNEL, name="gemm", start_ns=k0,
                           end_ns=k0 + int(kernel_ms * MS), device=0, stream=0,
                           correlation_id=corr))
            k0 += int(kernel_ms * MS)
            corr += 1
            t += 50_000
        ev.append(dict(kind=K.SYNCHRONIZE, name="sync", start_ns=t, end_ns=k0))
        t = k0 + 200_000
        ev.append(dict(kind=K.STEP, name="train", start_ns=st, end_ns=t, value=s,
                       stats={"step_num": s, "_r": 1}))
        t += 100_000
    return ev


def test_gpu_profile_compute_and_transfers():
    r = analyze_table(table(gpu_events(), devices=[GPU0]))
    assert r.gpu_run
    s = r.steps[0]
    assert s.device_compute_ms == pytest.approx(6.0)
    assert s.transfer_ms == pytest.approx(1.02, abs=1e-6)  # host copy start .. device copy end
    assert s.input_ms == pytest.approx(0.5)
    # the host waits from its last launch to the last kernel's end; only the 0.08 ms gap
    # between the device copy and the first kernel is not hidden behind device work
    assert s.sync_ms == pytest.approx(0.08, abs=1e-6)
    total = s.input_ms + s.transfer_ms + s.sync_ms + s.device_compute_ms + s.host_compute_ms \
        + s.idle_ms
    assert total == pytest.approx(s.step_ms)
    assert r.bottleneck == "compute"
    step_ns = s.step_ms
    assert r.device_utilization == pytest.approx((6.0 + 1.0) / step_ns, rel=1e-6)
    assert "mixed_float16" in r.suggestion


def test_gpu_host_overhead_when_device_waits_for_launches():
    # 60 tiny kernels, each launched by a 0.1 ms host op: the device idles between them.
    ev, t, corr = [], 0, 1
    st = t
    for k in range(60):
        ev.append(dict(kind=K.OP, name="add", start_ns=t, end_ns=t + 100_000,
                       correlation_id=corr, device=0))
        ev.append(dict(kind=K.DEVICE_KERNEL, name="add_kernel", start_ns=t + 90_000,
                       end_ns=t + 100_000, device=0, stream=0, correlation_id=corr))
        corr += 1
        t += 120_000
    ev.append(dict(kind=K.STEP, name="train", start_ns=st, end_ns=t, value=0))
    r = analyze_table(table(ev, devices=[GPU0]))
    assert r.bottleneck == "host-overhead"
    assert r.fractions["host-overhead"] > 0.8
    assert r.device_utilization == pytest.approx(10 / 120, rel=1e-6)


def test_memory_peak_op():
    ev = cpu_steps(1, input_ms=0, compute_ms=5, gap_ms=1)
    allocs = [("conv", 100, 100), ("matmul", 400, 500), ("free", -400, 100),
              ("softmax", 200, 300)]
    t = 2 * MS
    for op, delta, in_use in allocs:
        ev.append(dict(kind=K.MEMORY, name="alloc" if delta > 0 else "free", start_ns=t,
                       value=delta, in_use_bytes=in_use, reserved_bytes=1024,
                       stats={"op": op, "pool": "cpu"}))
        t += 1000
    ev.append(dict(kind=K.MEMORY, name="alloc", start_ns=t, value=4096, in_use_bytes=4096,
                   reserved_bytes=8192, device=0, stats={"op": "gpu_big", "pool": "gpu"}))
    r = analyze_table(table(ev))
    m = r.memory
    assert m["peak_in_use_bytes"] == 4096 and m["peak_op"] == "gpu_big"
    assert m["peak_device"] == "/device:GPU:0"
    assert m["peak_reserved_bytes"] == 8192
    host = m["by_device"]["host"]
    assert host["peak_in_use_bytes"] == 500 and host["peak_op"] == "matmul"
    assert [b for _, b in host["timeline"]] == [100, 500, 100, 300]


def test_memory_timeline_is_compact():
    ev = cpu_steps(1, input_ms=0, compute_ms=5, gap_ms=1)
    for k in range(5000):
        ev.append(dict(kind=K.MEMORY, name="alloc", start_ns=MS + k * 100, value=8,
                       in_use_bytes=8 * (k % 977), reserved_bytes=1 << 16,
                       stats={"op": f"op{k % 977}"}))
    m = analyze_table(table(ev)).memory
    assert len(m["timeline"]) <= 100
    assert max(b for _, b in m["timeline"]) == m["peak_in_use_bytes"] == 8 * 976
    assert m["peak_op"] == "op976"


def test_report_text_and_dict(capsys, tmp_path):
    t = table(cpu_steps(3, input_ms=3, compute_ms=5, gap_ms=0.5), dropped_events=7)
    write_xspace(t, tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00" / "h.xplane.pb")
    r = analyze(tmp_path)
    out = capsys.readouterr().out
    assert out.strip() == str(r)
    assert "bottleneck: input" in out and "train 2" in out and "dropped events: 7" in out
    d = r.to_dict()
    json.dumps(d)
    assert d["bottleneck"] == "input" and len(d["steps"]) == 3
    assert d["steps"][0]["name"] == "train 0"
    assert any("dropped 7 events" in n for n in r.notes)
    analyze(tmp_path, print_table=False)
    assert capsys.readouterr().out == ""


def test_no_steps_is_a_value_error():
    t = table([dict(kind=K.OP, name="x", start_ns=0, end_ns=10)])
    with pytest.raises(ValueError, match="profile at least one training step"):
        analyze_table(t)
    with pytest.raises(TypeError):
        analyze_table({"columns": {}})


def test_finding_runs(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        analyze(tmp_path / "nope")
    with pytest.raises(FileNotFoundError) as info:
        analyze(tmp_path, print_table=False)
    msg = str(info.value)
    assert os.path.join("plugins", "profile") in msg
    assert os.path.join("train", "plugins", "profile") in msg

    old = table(cpu_steps(2, input_ms=3, compute_ms=5, gap_ms=0.5))
    new = table(cpu_steps(3, input_ms=0.1, compute_ms=9, gap_ms=0.1))
    write_xspace(old, tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00" / "h.xplane.pb")
    # the Keras callback's layout: <log_dir>/train/plugins/profile/<run>
    write_xspace(new, tmp_path / "train" / "plugins" / "profile" / "2026_02_01_00_00_00" /
                 "h.xplane.pb")
    assert "2026_02_01" in find_profile(tmp_path)
    r = analyze(tmp_path, print_table=False)
    assert len(r.steps) == 3 and r.bottleneck == "compute"
    r = analyze(tmp_path, run="2026_01_01_00_00_00", print_table=False)
    assert len(r.steps) == 2 and r.bottleneck == "input"
    with pytest.raises(FileNotFoundError, match="run '1999"):
        analyze(tmp_path, run="1999_01_01_00_00_00", print_table=False)
    # a run folder or a file works too
    run_dir = tmp_path / "plugins" / "profile" / "2026_01_01_00_00_00"
    assert len(analyze(run_dir, print_table=False).steps) == 2
    assert len(analyze(run_dir / "h.xplane.pb", print_table=False).steps) == 2


def test_steps_are_sorted_and_named():
    ev = cpu_steps(3, input_ms=1, compute_ms=5, gap_ms=1)
    r = analyze_table(table(ev))
    assert [s.name for s in r.steps] == ["train 0", "train 1", "train 2"]
    assert np.all(np.diff([s.start_ms for s in r.steps]) > 0)
