"""torch.profiler of the PyTorch face against PyTorch 1.13 (one torch_reference subprocess for
the module): one script runs with both torches and compares what is comparable between two
runtimes: which steps a schedule records and how often on_trace_ready is called, the table's
header and column set, the key_averages fields, record_function ranges with their names and
nesting, the Chrome trace's required fields, and the CUDA activity on a machine without CUDA.
Times are never compared (only > 0 and enclosure); op names are each runtime's own."""
import gzip
import json
import os

import pytest

import torch_reference

import gpuaccel
import gpuaccel.torch as torch

SCRIPT = r'''
import json, os, re, tempfile, warnings
P = torch.profiler
SCHEDULES = [dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=1, active=2, repeat=2),
             dict(wait=0, warmup=2, active=1, repeat=1, skip_first=2),
             dict(wait=2, warmup=0, active=3, repeat=1), dict(wait=0, warmup=0, active=1)]

def work():
    a = torch.ones(8, 8)
    return torch.mm(a, a).relu() + 1

def step_names(prof):
    return sorted({int(e.trace_name.split("#")[1]) for e in prof.events()
                   if e.name == "ProfilerStep*"})

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for k, kw in enumerate(SCHEDULES):
        fn = P.schedule(**kw)
        out[f"actions_{k}"] = [fn(s).name for s in range(14)]
        ready = []
        with P.profile(activities=[P.ProfilerActivity.CPU], schedule=fn,
                       on_trace_ready=lambda p: ready.append(step_names(p))) as prof:
            for _ in range(10):
                work()
                prof.step()
        out[f"ready_{k}"] = ready
    calls = []
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   on_trace_ready=lambda p: calls.append(len(p.events()) > 0)) as prof:
        for _ in range(3):
            work()
            prof.step()
    out["ready_without_schedule"] = calls
    out["steps_without_schedule"] = step_names(prof)
    with P.profile(activities=[P.ProfilerActivity.CPU],
                   schedule=P.schedule(wait=0, warmup=3, active=1),
                   on_trace_ready=lambda p: calls.append("ready")) as prof:
        work()
        prof.step()
    out["stopped_in_warmup"] = [calls[1:], type(prof.events()).__name__]

@P.record_function("decorated")
def decorated():
    return work()

with P.profile(activities=[P.ProfilerActivity.CPU]) as prof:
    with P.record_function("outer"):
        work()
        with P.record_function("inner"):
            work()
    decorated()
events = prof.events()
first = {}
for e in events:
    first.setdefault(e.name, e)
out["inner_parent"] = first["inner"].cpu_parent.name
out["outer_is_top"] = first["outer"].cpu_parent is None
out["decorated_is_top"] = first["decorated"].cpu_parent is None
out["ranges_have_ops"] = [len(first[n].cpu_children) > 0 for n in ("outer", "inner", "decorated")]

def inside(child, parent):
    return (parent.time_range.start <= child.time_range.start
            and child.time_range.end <= parent.time_range.end)

def ancestors(e):
    while e.cpu_parent is not None:
        e = e.cpu_parent
        yield e

out["children_inside"] = all(inside(e, p) for e in events for p in ancestors(e))
averages = prof.key_averages()
FIELDS = ["key", "count", "cpu_time_total", "self_cpu_time_total", "cuda_time_total",
          "self_cuda_time_total", "cpu_time", "cuda_time", "cpu_time_total_str",
          "self_cpu_time_total_str", "cuda_time_total_str", "input_shapes"]
out["fields"] = [f for f in FIELDS if all(hasattr(a, f) for a in averages)]
outer = next(a for a in averages if a.key == "outer")
out["outer_count"] = outer.count
out["outer_times"] = [outer.cpu_time_total > 0, 0 < outer.self_cpu_time_total < outer.cpu_time_total,
                      outer.cuda_time_total == 0, outer.cpu_time == outer.cpu_time_total]
out["key_counts_match_events"] = all(
    a.count == sum(1 for e in events if e.name == a.key) for a in averages)

def table_shape(text):
    lines = text.splitlines()
    return {"header": re.split(r"\s{2,}", lines[1].strip()),
            "rules": lines[0] == lines[2] == lines[-2] and set(lines[0]) == {"-", " "},
            "rows": len(lines) - 5, "footer": lines[-1].split(":")[0]}

out["table"] = table_shape(averages.table(sort_by="cpu_time_total", row_limit=10))
out["table_2_rows"] = table_shape(averages.table(sort_by="self_cpu_time_total", row_limit=2))
out["enough_rows"] = len(averages) >= 4
with P.profile(activities=[P.ProfilerActivity.CPU], profile_memory=True,
               record_shapes=True, with_stack=True) as memory_prof:
    work()
out["memory_table"] = table_shape(memory_prof.key_averages().table(sort_by="cpu_time_total"))
try:
    averages.table(sort_by="no_such_column")
    out["bad_sort"] = "no error"
except Exception as error:
    out["bad_sort"] = type(error).__name__

folder = tempfile.mkdtemp()
prof.export_chrome_trace(os.path.join(folder, "trace.json"))
doc = json.load(open(os.path.join(folder, "trace.json")))
trace = doc["traceEvents"] if isinstance(doc, dict) else doc
complete = [e for e in trace if e.get("ph") == "X"]
out["trace_required_fields"] = all({"name", "ph", "ts", "dur", "pid", "tid"} <= set(e)
                                   for e in complete)
by_name = {e["name"]: e for e in complete}
out["trace_ranges"] = [n in by_name for n in ("outer", "inner", "decorated")]
o, i = by_name["outer"], by_name["inner"]
out["trace_outer_holds_inner"] = o["ts"] <= i["ts"] and i["ts"] + i["dur"] <= o["ts"] + o["dur"]

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with P.profile(activities=[P.ProfilerActivity.CPU, P.ProfilerActivity.CUDA]) as cuda_prof:
        work()
out["cuda_warnings"] = [str(w.message) for w in caught if "CUDA" in str(w.message)]
out["cuda_table"] = table_shape(cuda_prof.key_averages().table(sort_by="cuda_time_total"))
out["cuda_times"] = sorted({a.cuda_time_total for a in cuda_prof.key_averages()})

with torch.autograd.profiler.profile() as legacy:
    with torch.autograd.profiler.record_function("legacy_range"):
        work()
out["legacy_names"] = "legacy_range" in {e.name for e in legacy.function_events}
out["legacy_table"] = table_shape(legacy.table(sort_by="cpu_time_total"))
with torch.autograd.profiler.profile(enabled=False) as disabled:
    work()
try:
    disabled.key_averages()
    out["disabled"] = "no error"
except Exception as error:
    out["disabled"] = "error"
'''


@pytest.fixture(scope="module")
def both():
    # Without a GPU both runtimes must turn the CUDA activity off; on a GPU machine ours would
    # record it (test_cuda_kernels_on_a_gpu), so the comparison runs as on a CPU-only machine.
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(gpuaccel.cuda, "is_available", lambda: False)
        return torch_reference.run_script_both(SCRIPT, torch)


def as_pytorch_1_13_labels(steps):
    """PyTorch 1.13 labels the step that ``prof.step()`` opens with the previous step's number
    (ProfilerStep#0 twice, then #1 for step 2...); PyTorch fixed it in 2024 (pytorch/pytorch
    issue 121126, pull 121127) and gpuaccel labels each step with its schedule number, as
    PyTorch does now."""
    return sorted({max(step - 1, 0) for step in steps})


@pytest.mark.parametrize("k", range(5))
def test_schedule_records_pytorchs_steps(both, k):
    ours, theirs = both
    assert ours[f"actions_{k}"] == theirs[f"actions_{k}"]
    # one list per on_trace_ready call, holding the steps that trace recorded
    assert [as_pytorch_1_13_labels(steps) for steps in ours[f"ready_{k}"]] == \
        theirs[f"ready_{k}"]
    assert theirs[f"ready_{k}"], "the schedule should hand over at least one trace"


def test_schedule_step_numbers():
    """wait=1, warmup=1, active=2 over 10 steps: steps 2-3 and 6-7 make a trace each, and the
    step still open at stop() (10, the first of an active cycle) makes a third."""
    ready = []
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=2)
    with torch.profiler.profile(schedule=schedule, on_trace_ready=lambda p: ready.append(
            [e.trace_name for e in p.events() if e.name == "ProfilerStep*"])) as prof:
        for _ in range(10):
            torch.ones(2, 2).sum()
            prof.step()
    assert ready == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"],
                     ["ProfilerStep#10"]]


def test_without_schedule_one_trace_at_the_end(both):
    ours, theirs = both
    assert ours["ready_without_schedule"] == theirs["ready_without_schedule"] == [True]
    assert ours["steps_without_schedule"] == theirs["steps_without_schedule"] == []
    # stopped during warmup: no trace handed over, but an (empty) trace to read
    assert ours["stopped_in_warmup"] == theirs["stopped_in_warmup"] == [[], "EventList"]


def test_record_function_ranges_and_nesting(both):
    ours, theirs = both
    for key in ("inner_parent", "outer_is_top", "decorated_is_top", "ranges_have_ops",
                "children_inside", "trace_ranges", "trace_outer_holds_inner"):
        assert ours[key] == theirs[key], key
    assert ours["inner_parent"] == "outer"
    assert ours["ranges_have_ops"] == [True, True, True]
    assert ours["children_inside"] is True


def test_key_averages_fields(both):
    ours, theirs = both
    assert ours["fields"] == theirs["fields"]
    assert "cuda_time_total" in ours["fields"] and "self_cpu_time_total" in ours["fields"]
    assert ours["outer_count"] == theirs["outer_count"] == 1
    assert ours["outer_times"] == theirs["outer_times"] == [True, True, True, True]
    assert ours["key_counts_match_events"] and theirs["key_counts_match_events"]


def test_table_header_and_columns(both):
    ours, theirs = both
    for key in ("table", "memory_table", "legacy_table", "cuda_table"):
        assert ours[key]["header"] == theirs[key]["header"], key
        assert ours[key]["rules"] and theirs[key]["rules"], key
        assert ours[key]["footer"] == theirs[key]["footer"] == "Self CPU time total", key
    assert ours["table"]["header"] == ["Name", "Self CPU %", "Self CPU", "CPU total %",
                                       "CPU total", "CPU time avg", "# of Calls"]
    assert "Self CPU Mem" in ours["memory_table"]["header"]
    assert ours["enough_rows"] and theirs["enough_rows"]
    assert ours["table_2_rows"]["rows"] == theirs["table_2_rows"]["rows"] == 2
    assert ours["bad_sort"] == theirs["bad_sort"] == "AttributeError"


def test_chrome_trace_fields(both):
    ours, theirs = both
    assert ours["trace_required_fields"] is theirs["trace_required_fields"] is True


def test_cuda_activity_without_cuda(both):
    ours, theirs = both
    assert ours["cuda_warnings"] == theirs["cuda_warnings"] == [
        "CUDA is not available, disabling CUDA profiling"]
    assert ours["cuda_times"] == theirs["cuda_times"] == [0]


def test_autograd_profiler_alias(both):
    ours, theirs = both
    assert ours["legacy_names"] is theirs["legacy_names"] is True
    assert ours["disabled"] == theirs["disabled"] == "error"


# ---- gpuaccel's side only: its files, its errors, its GPU events ----------------------------

def test_tensorboard_trace_handler_writes_a_run_analyze_reads(tmp_path):
    """Each active cycle becomes one TensorBoard profile run (gpuaccel's XSpace and Chrome trace
    writer) whose ProfilerStep#N markers are the steps gpuaccel.profiler.analyze splits."""
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1)
    with torch.profiler.profile(schedule=schedule, on_trace_ready=torch.profiler.
                                tensorboard_trace_handler(tmp_path, worker_name="w0")) as prof:
        for _ in range(5):
            torch.mm(torch.ones(16, 16), torch.ones(16, 16)).relu()
            prof.step()
    runs = sorted((tmp_path / "plugins" / "profile").iterdir())
    assert len(runs) == 1
    assert sorted(p.name for p in runs[0].iterdir()) == ["w0.trace.json.gz", "w0.xplane.pb"]
    report = gpuaccel.profiler.analyze(str(tmp_path))
    assert [s.step for s in report.steps] == [2, 3]
    assert all(s.step_ms > 0 for s in report.steps)
    trace = json.loads(gzip.decompress((runs[0] / "w0.trace.json.gz").read_bytes()))
    assert {"matmul", "relu"} <= {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"}


def test_export_chrome_trace_gz_and_ops_inside_their_range(tmp_path):
    with torch.profiler.profile() as prof:
        with torch.profiler.record_function("forward"):
            torch.mm(torch.ones(4, 4), torch.ones(4, 4))
    prof.export_chrome_trace(tmp_path / "t.json.gz")
    doc = json.loads(gzip.decompress((tmp_path / "t.json.gz").read_bytes()))
    complete = {e["name"]: e for e in doc["traceEvents"] if e["ph"] == "X"}
    forward, matmul = complete["forward"], complete["matmul"]
    assert forward["ts"] <= matmul["ts"] and \
        matmul["ts"] + matmul["dur"] <= forward["ts"] + forward["dur"]
    assert (forward["pid"], forward["tid"]) == (matmul["pid"], matmul["tid"])
    events = {e.name: e for e in prof.events()}
    assert events["matmul"].cpu_parent is events["forward"]
    assert events["forward"].self_cpu_time_total < events["forward"].cpu_time_total


def test_profile_memory_counts_allocations_in_their_range():
    with torch.profiler.profile(profile_memory=True) as prof:
        with torch.profiler.record_function("allocate"):
            kept = torch.ones(64, 64)
    allocate = next(a for a in prof.key_averages() if a.key == "allocate")
    assert allocate.cpu_memory_usage >= kept.numel() * 4
    assert "Self CPU Mem" in prof.key_averages().table()


def test_bad_input_errors():
    with pytest.raises(ValueError, match="active"):
        torch.profiler.schedule(wait=1, warmup=1, active=0)
    with pytest.raises(TypeError, match="ProfilerActivity"):
        torch.profiler.profile(activities=["cpu"])
    with pytest.raises(TypeError, match="schedule"):
        torch.profiler.profile(schedule=3)
    with pytest.raises(TypeError, match="name"):
        torch.profiler.record_function(7)
    with pytest.raises(RuntimeError, match="no trace"):
        torch.profiler.profile().events()


def test_record_function_outside_a_profile_records_nothing():
    @torch.profiler.record_function("quiet")
    def double(x):
        return x * 2
    assert double(torch.ones(2)).numpy().tolist() == [2.0, 2.0]
    assert not gpuaccel.profiler.is_active()


# Run on a real GPU (test_cuda_kernels_on_a_gpu) and on the tests' fake CUDA library, whose
# device clock gives each kernel a fixed length (test_cuda_kernels_on_the_fake_gpu).
CUDA_PROBE = r"""
import gpuaccel.torch as torch
a = torch.ones(64, 64, device="cuda")
activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
with torch.profiler.profile(activities=activities) as prof:
    with torch.profiler.record_function("on_gpu"):
        torch.mm(a, a).relu()
    torch.cuda.synchronize()
events = prof.events()
kernels = [e for e in events if e.device_type == torch.profiler.DeviceType.CUDA]
assert {k.name for k in kernels} >= {"matmul", "relu"}, kernels
assert sum(k.cuda_time_total for k in kernels) > 0
host = {e.name: e for e in events if e.device_type == torch.profiler.DeviceType.CPU}
matmul, relu, on_gpu = host["matmul"], host["relu"], host["on_gpu"]
assert [k.name for k in matmul.kernels] == ["matmul"] and matmul.cuda_time_total > 0
assert matmul.self_cuda_time_total == matmul.cuda_time_total
assert abs(on_gpu.cuda_time_total - matmul.cuda_time_total - relu.cuda_time_total) < 1e-6
assert on_gpu.self_cuda_time_total == 0
header = prof.key_averages().table(sort_by="cuda_time_total").splitlines()[1]
assert "Self CUDA" in header and "CUDA time avg" in header, header
print("cuda profile ok")
"""


@pytest.mark.gpu
def test_cuda_kernels_on_a_gpu():
    exec(CUDA_PROBE, {})  # noqa: S102 - the probe's own assertions


def test_cuda_kernels_on_the_fake_gpu():
    import subprocess
    import sys
    from test_library_backend import fake_library
    env = dict(os.environ, GPUACCEL_CUDA_BACKEND=fake_library())
    done = subprocess.run([sys.executable, "-c", CUDA_PROBE], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and "cuda profile ok" in done.stdout, done.stderr[-3000:]
