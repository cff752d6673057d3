"""Profiles recorded on a real GPU, read back where CI runs (no GPU).

``data/h100_course_cnn_*.xplane.pb`` were written by gpuaccel itself on an NVIDIA H100
(2026-11-23): the course CNN (batch 64, Adam, random inputs) trained with
``keras.callbacks.TensorBoard(profile_batch=(3, 8))``, once from NumPy arrays and once from a
Dataset whose ``map`` sleeps 10 ms per batch (``data/record_gpu_profiles.py`` re-records them
on any GPU machine). They are inputs, not expected outputs: the checks below are the
properties any such profile must have, judged by our reader, ``analyze`` and xprof.
"""
import pathlib

import pytest

from gpuaccel import profiler
from gpuaccel.profiler._events import EventKind
from gpuaccel.profiler._xspace import read_xspace

DATA = pathlib.Path(__file__).resolve().parent / "data"
ARRAYS = DATA / "h100_course_cnn_arrays.xplane.pb"
SLOW_INPUT = DATA / "h100_course_cnn_slow_input.xplane.pb"


@pytest.mark.parametrize("path", [ARRAYS, SLOW_INPUT], ids=["arrays", "slow_input"])
def test_recorded_gpu_profile_has_both_timelines_correlated(path):
    table = read_xspace(str(path))
    kinds = [table.kind_of(i) for i in range(len(table))]
    assert [d["name"] for d in table.devices] == ["/device:GPU:0"]
    assert table.devices[0]["compute_capability"] == "9.0"
    steps = sorted(int(table.value[i]) for i, k in enumerate(kinds) if k == EventKind.STEP)
    assert steps == [3, 4, 5, 6, 7, 8]
    host_ids = {int(table.correlation_id[i]) for i in range(len(table))
                if table.thread[i] >= 0 and table.correlation_id[i]}
    device_ids = {int(table.correlation_id[i]) for i, k in enumerate(kinds)
                  if k in (EventKind.DEVICE_KERNEL, EventKind.DEVICE_COPY)}
    assert device_ids and device_ids <= host_ids  # every device interval has its launch
    for i, k in enumerate(kinds):
        if k == EventKind.DEVICE_KERNEL:
            assert table.device[i] == 0 and table.thread[i] == -1
            assert table.end_ns[i] >= table.start_ns[i]


def test_analyze_names_compute_for_arrays_and_input_for_the_slow_pipeline():
    fast = profiler.analyze(str(ARRAYS), print_table=False)
    slow = profiler.analyze(str(SLOW_INPUT), print_table=False)
    assert fast.gpu_run and slow.gpu_run
    assert fast.bottleneck == "compute"
    assert slow.bottleneck == "input"
    # The 10 ms sleep per batch is waited for on the host while the GPU idles.
    assert slow.average_ms["input_ms"] >= 9.0
    assert slow.device_utilization < fast.device_utilization
    assert fast.memory["peak_device"] == "/device:GPU:0"


def test_xprof_reads_the_recorded_gpu_profile(tmp_path):
    import shutil
    from test_profiler_keras import xprof_tool
    # xprof caches what it derives next to the file it reads: give it a copy.
    copy = tmp_path / ARRAYS.name
    shutil.copy(ARRAYS, copy)
    overview = xprof_tool(str(copy), "overview_page")
    environment = [t["p"] for t in overview if "device_type" in t.get("p", {})]
    assert environment and "Nvidia GPU" in environment[0]["device_type"]
    for table in overview:
        cols = [c["id"] for c in table.get("cols", [])]
        if "deviceComputeTimeMs" in cols:
            i = cols.index("deviceComputeTimeMs")
            device_ms = [row["c"][i]["v"] for row in table["rows"]]
            break
    else:
        raise AssertionError("no step-time table in xprof's overview page")
    # Six profiled steps, the first and last dropped by xprof; device kernels fill each step.
    assert len(device_ms) == 4 and all(ms > 1.0 for ms in device_ms)
