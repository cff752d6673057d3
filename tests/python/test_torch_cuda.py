"""``torch.cuda`` on ``import gpuaccel.torch as torch``, compared with PyTorch 1.13 where this
machine lets us: its answers without a GPU (torch_reference runs Debian's CPU build), then the
device calls on simulated GPUs (current device, streams, events, memory fraction), on the fake
CUDA library (memory counts, events that wait for the GPU, out-of-memory) and, marked ``gpu``,
on a real GPU."""
import warnings

import numpy as np
import pytest

import gpuaccel
import gpuaccel.torch as torch
from gpuaccel import _C, config
from runtime_fixtures import T4, reset_runtime
from test_library_backend import FAKE_COUNTERS, run_with_fake
import torch_reference

cuda = torch.cuda


# ---- without a GPU: the same answers and error types as PyTorch's CPU build ----

# Statements run by both sides with ``torch`` bound to the framework; each sets ``r``.
NO_GPU_VALUES = {
    "is_available": "r = torch.cuda.is_available()",
    "device_count": "r = torch.cuda.device_count()",
    "is_initialized": "r = torch.cuda.is_initialized()",
    "memory_allocated": "r = torch.cuda.memory_allocated()",
    "memory_allocated(0)": "r = torch.cuda.memory_allocated(0)",
    "max_memory_allocated": "r = torch.cuda.max_memory_allocated()",
    "memory_reserved": "r = torch.cuda.memory_reserved()",
    "max_memory_reserved": "r = torch.cuda.max_memory_reserved()",
    "memory_stats": "r = dict(torch.cuda.memory_stats())",
    "memory_cached": "r = torch.cuda.memory_cached()",  # deprecated: warns, answers
    "max_memory_cached": "r = torch.cuda.max_memory_cached()",
    "empty_cache": "r = torch.cuda.empty_cache()",
    "manual_seed": "r = torch.cuda.manual_seed(3)",
    "manual_seed_all": "r = torch.cuda.manual_seed_all(3)",
    "seed": "r = torch.cuda.seed()",
    "seed_all": "r = torch.cuda.seed_all()",
    "set_device(-1)": "r = torch.cuda.set_device(-1)",
    "device(0).idx": "r = torch.cuda.device(0).idx",
    "device('cuda:1').idx": "r = torch.cuda.device('cuda:1').idx",
    "device_of(cpu tensor)": "r = torch.cuda.device_of(torch.zeros(1)).idx",
    "with device(-1)": "with torch.cuda.device(-1):\n    r = 1",
    "with stream(None)": "with torch.cuda.stream(None):\n    r = 2",
    "with StreamContext(None)": "with torch.cuda.StreamContext(None):\n    r = 3",
    "get_rng_state_all": "r = torch.cuda.get_rng_state_all()",
    "set_rng_state": "r = torch.cuda.set_rng_state(torch.get_rng_state())",
    "set_rng_state_all([])": "r = torch.cuda.set_rng_state_all([])",
    "memory.memory_allocated": "r = torch.cuda.memory.memory_allocated()",
    "memory.max_memory_reserved": "r = torch.cuda.memory.max_memory_reserved()",
    "memory_stats_as_nested_dict": "r = torch.cuda.memory_stats_as_nested_dict()",
    "set_stream(None)": "r = torch.cuda.set_stream(None)",
}
NO_GPU_ERRORS = {
    "current_device": "torch.cuda.current_device()",
    "get_device_name": "torch.cuda.get_device_name(0)",
    "get_device_properties": "torch.cuda.get_device_properties(0)",
    "get_device_capability": "torch.cuda.get_device_capability()",
    "synchronize": "torch.cuda.synchronize()",
    "current_stream": "torch.cuda.current_stream()",
    "default_stream": "torch.cuda.default_stream()",
    "init": "torch.cuda.init()",
    "initial_seed": "torch.cuda.initial_seed()",
    "set_per_process_memory_fraction": "torch.cuda.set_per_process_memory_fraction(0.5)",
    "get_rng_state": "torch.cuda.get_rng_state()",
    "with device(0)": "with torch.cuda.device(0):\n    pass",
    "device('cpu')": "torch.cuda.device('cpu')",
}

_REFERENCE_SNIPPET = r"""
import warnings
warnings.simplefilter('ignore')
for key, statement in VALUES.items():
    scope = {'torch': torch}
    exec(statement, scope)
    out['value ' + key] = scope['r']
for key, statement in ERRORS.items():
    try:
        exec(statement, {'torch': torch})
        out['error ' + key] = None
    except Exception as e:
        out['error ' + key] = type(e).__name__
"""


def _skip_if_real_gpu():
    if cuda.is_available():
        pytest.skip("this machine has a usable GPU: the no-GPU answers do not apply")


@pytest.fixture(scope="module")
def reference_without_gpu():
    snippet = (f"VALUES = {NO_GPU_VALUES!r}\nERRORS = {NO_GPU_ERRORS!r}\n" + _REFERENCE_SNIPPET)
    return torch_reference.run(snippet)


@pytest.fixture
def real_runtime():
    reset_runtime()
    yield
    reset_runtime()


@pytest.mark.usefixtures("real_runtime")
@pytest.mark.parametrize("key", sorted(NO_GPU_VALUES))
def test_no_gpu_values_match_pytorch(reference_without_gpu, key):
    _skip_if_real_gpu()
    scope = {"torch": torch}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # the deprecated names' (as PyTorch's)
        exec(NO_GPU_VALUES[key], scope)
    assert scope["r"] == reference_without_gpu["value " + key]
    assert type(scope["r"]) is type(reference_without_gpu["value " + key])


@pytest.mark.usefixtures("real_runtime")
@pytest.mark.parametrize("key", sorted(NO_GPU_ERRORS))
def test_no_gpu_errors_have_pytorchs_type(reference_without_gpu, key):
    _skip_if_real_gpu()
    expected = reference_without_gpu["error " + key]
    assert expected in ("AssertionError", "ValueError")
    with pytest.raises({"AssertionError": AssertionError, "ValueError": ValueError}[expected]) \
            as info:
        exec(NO_GPU_ERRORS[key], {"torch": torch})
    if expected == "AssertionError":
        # the CUDA build's RuntimeError too, and the reason instead of "not compiled"
        assert isinstance(info.value, RuntimeError)
        assert "no CUDA GPU is available" in str(info.value)


@pytest.mark.usefixtures("real_runtime")
def test_no_gpu_streams_and_events_say_there_is_no_gpu():
    # PyTorch's CPU build fails to construct them at all (a TypeError of its placeholder
    # classes); here an Event is an object until it must wait for a GPU.
    _skip_if_real_gpu()
    event = cuda.Event(enable_timing=True)
    with pytest.raises(cuda.NoCudaGpuError, match="no CUDA GPU is available"):
        event.record()
    with pytest.raises(cuda.NoCudaGpuError, match="Stream: no CUDA GPU"):
        cuda.Stream()


def test_deprecated_memory_names_warn_as_pytorch():
    with pytest.warns(FutureWarning, match="memory_cached has been renamed to "
                                           "torch.cuda.memory_reserved"):
        assert cuda.memory_cached() == cuda.memory_reserved()
    with pytest.warns(FutureWarning, match="renamed to torch.cuda.max_memory_reserved"):
        assert cuda.max_memory_cached() == cuda.max_memory_reserved()
    with pytest.warns(FutureWarning, match="resets /all/ peak memory stats"):
        cuda.reset_max_memory_allocated()


def test_out_of_memory_error_is_gpuaccels():
    assert cuda.OutOfMemoryError is gpuaccel.errors.ResourceExhaustedError


def test_seeding_the_gpu_generator_seeds_gpuaccels_one_generator():
    cuda.manual_seed_all(123)
    first = torch.rand(4).numpy()
    cuda.manual_seed(123)
    np.testing.assert_array_equal(torch.rand(4).numpy(), first)
    assert cuda.seed() is None
    assert cuda.seed_all() is None


# ---- simulated GPUs: report properties, run nothing ----

@pytest.fixture
def two_t4s():
    reset_runtime([T4, dict(T4)])
    yield
    cuda.set_device(0)
    reset_runtime()


@pytest.mark.usefixtures("two_t4s")
def test_current_device_follows_set_device_and_device_blocks():
    assert cuda.device_count() == 2
    assert cuda.current_device() == 0
    with cuda.device(1):
        assert cuda.current_device() == 1
        with cuda.device("cuda:0"):
            assert cuda.current_device() == 0
        assert cuda.current_device() == 1
    assert cuda.current_device() == 0
    cuda.set_device("cuda:1")
    assert cuda.current_device() == 1
    cuda.set_device(-1)  # torch: a negative index changes nothing
    assert cuda.current_device() == 1
    with pytest.raises(ValueError, match=r"invalid device index 2; valid CUDA device indices "
                                         r"are 0\.\.1"):
        cuda.set_device(2)
    config.set_visible_devices([config.list_physical_devices("GPU")[0]], "GPU")
    assert cuda.device_count() == 1
    assert cuda.current_device() == 0  # GPU 1 is hidden now
    cuda.set_device(0)
    with cuda.device_of(torch.zeros(2, device="cpu")):  # a CPU tensor: nothing changes
        assert cuda.current_device() == 0


@pytest.mark.usefixtures("two_t4s")
def test_streams_and_their_blocks_nest_and_restore():
    default = cuda.default_stream()
    assert cuda.current_stream() is default
    assert cuda.default_stream(0) is default
    side = cuda.Stream(priority=-1)
    other_gpu = cuda.Stream(device=1)
    assert (side.device_index, side.priority, str(side.device)) == (0, -1, "cuda:0")
    with cuda.StreamContext(other_gpu):
        assert cuda.current_stream(1) is other_gpu and cuda.current_device() == 1
    assert cuda.current_stream(1) is cuda.default_stream(1)
    with cuda.stream(side) as entered:
        assert entered is side and cuda.current_stream() is side
        with cuda.stream(other_gpu):
            assert cuda.current_device() == 1  # a stream's block makes its GPU current
            assert cuda.current_stream() is other_gpu
            assert cuda.current_stream(0) is side
        assert cuda.current_device() == 0
        assert cuda.current_stream() is side
    assert cuda.current_stream() is default
    assert side.query() is True
    side.wait_stream(default)
    with pytest.raises(TypeError, match="expects a torch.cuda.Stream"):
        side.wait_stream("cuda:0")
    with pytest.raises(TypeError, match="priority must be an int"):
        cuda.Stream(priority=0.5)
    with pytest.raises(ValueError, match="invalid device index 3"):
        cuda.Stream(device=3)


@pytest.mark.usefixtures("two_t4s")
def test_set_stream_makes_a_stream_current_until_another_is_set():
    side, other_gpu = cuda.Stream(), cuda.Stream(device=1)
    try:
        cuda.set_stream(side)
        assert cuda.current_stream() is side
        with cuda.stream(cuda.default_stream()):
            assert cuda.current_stream() is cuda.default_stream()
        assert cuda.current_stream() is side  # the block restored what was current
        cuda.set_stream(other_gpu)  # its GPU's current stream; the current device stays
        assert cuda.current_stream(1) is other_gpu and cuda.current_device() == 0
        with pytest.raises(TypeError, match="expects a torch.cuda.Stream or None"):
            cuda.set_stream("cuda:0")
    finally:
        cuda.set_stream(cuda.default_stream(0))
        cuda.set_stream(cuda.default_stream(1))


def test_nvtx_ranges_are_profiler_ranges():
    # PyTorch's CPU build raises ("NVTX functions not installed"); gpuaccel records them as
    # torch.profiler user ranges on any machine.
    with torch.profiler.profile() as prof:
        assert cuda.nvtx.range_push("outer") == 0
        assert cuda.nvtx.range_push("inner") == 1
        torch.ones(3).abs()
        assert cuda.nvtx.range_pop() == 1
        cuda.nvtx.mark("marker")
        assert cuda.nvtx.range_pop() == 0
        assert cuda.nvtx.range_pop() == -1  # nothing open
        with cuda.nvtx.range("step {}", 7):
            torch.ones(2).neg()
    names = [e.name for e in prof.events()]
    for name in ("outer", "inner", "marker", "step 7"):
        assert name in names
    import gpuaccel.torch.cuda.nvtx as nvtx_module
    assert nvtx_module is cuda.nvtx


@pytest.mark.usefixtures("two_t4s")
def test_events_time_between_records_with_pytorchs_errors():
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    assert repr(start) == "<torch.cuda.Event uninitialized>"
    with pytest.raises(RuntimeError, match="Both events must be recorded"):
        start.elapsed_time(end)
    start.record()
    recorded = cuda.current_stream().record_event(end)
    assert recorded is end and end.query()
    assert end.elapsed_time(start) <= 0 <= start.elapsed_time(end)
    untimed = cuda.Event()
    untimed.record()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        start.elapsed_time(untimed)
    on_gpu1 = cuda.Event(enable_timing=True)
    on_gpu1.record(cuda.Stream(1))
    with pytest.raises(RuntimeError, match="same device"):
        start.elapsed_time(on_gpu1)
    with pytest.raises(ValueError, match="interprocess"):
        cuda.Event(interprocess=True)
    with pytest.raises(TypeError, match="expects a torch.cuda.Event"):
        cuda.default_stream().wait_event("start")


@pytest.mark.usefixtures("two_t4s")
def test_memory_fraction_caps_the_pool_before_the_runtime_starts():
    with pytest.raises(TypeError, match="must be `float`"):
        cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        cuda.set_per_process_memory_fraction(1.5)
    cuda.set_per_process_memory_fraction(0.25, device=1)
    gpu1 = config.list_physical_devices("GPU")[1]
    assert config.get_logical_device_configuration(gpu1)[0].memory_limit == 15 * 1024 // 4
    assert cuda.is_initialized() is False
    cuda.init()
    assert cuda.is_initialized() is True
    assert gpuaccel.memory.memory_stats("cuda:1")["memory_limit_bytes"] == 15 * 2**30 // 4
    with pytest.raises(RuntimeError, match="already started"):
        cuda.set_per_process_memory_fraction(0.5)


@pytest.mark.usefixtures("two_t4s")
def test_initial_seed_is_the_manual_seed():
    cuda.manual_seed(77)
    assert cuda.initial_seed() == 77


# ---- the fake CUDA library: two fake GPUs whose ops the CPU computes ----

FAKE_GPU_PROBE = FAKE_COUNTERS + r"""
import json
import numpy as np
import gpuaccel.torch as torch
c = torch.cuda
out = {'initialized_before': c.is_initialized(), 'name1': c.get_device_properties(1).name,
       'capability': list(c.get_device_capability())}
before = c.memory_allocated()
x = torch.tensor(np.arange(256 * 256, dtype=np.float32).reshape(256, 256) % 7, device='cuda')
out['grew_by'] = c.memory_allocated() - before
out['peak_at_least'] = c.max_memory_allocated() - before
out['stats_current'] = c.memory_stats()['allocated_bytes.all.current'] - before
syncs = fake_counters.synchronizes
start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
start.record()
y = x @ x
end.record()
out['syncs_by_two_records'] = fake_counters.synchronizes - syncs
c.synchronize()
out['syncs_by_synchronize'] = fake_counters.synchronizes - syncs - 2
out['elapsed_ms'] = start.elapsed_time(end)
side = c.Stream()
with c.stream(side):
    z = y + 1.0
side.synchronize()
c.current_stream().wait_stream(side)
out['z_matches'] = bool(np.allclose(z.numpy(), x.numpy() @ x.numpy() + 1.0, rtol=1e-5))
before_t = c.memory_allocated()
t = torch.ones(1024, device='cuda')
del t
out['after_del'] = c.memory_allocated() - before_t
c.reset_peak_memory_stats()
out['peak_after_reset'] = c.max_memory_allocated() - c.memory_allocated()
out['summary_has_allocated_row'] = 'Allocated memory' in c.memory_summary()
reserved = c.memory_reserved()
c.empty_cache()
out['reserved_released'] = reserved - c.memory_reserved()
gpu1_before = c.memory_allocated(1)
with c.device(1):
    w = torch.zeros(1024, device='cuda:1')
    out['gpu1_grew_by'] = c.memory_allocated() - gpu1_before
    out['gpu1_name'] = c.get_device_name()
try:
    torch.zeros(1 << 30, device='cuda').abs()
    out['oom'] = None
except c.OutOfMemoryError as e:
    out['oom'] = type(e).__name__
out['initialized_after'] = c.is_initialized()
state = c.get_rng_state()
drawn = torch.rand(3, device='cuda').numpy()
c.set_rng_state(state)
out['rng_state_repeats'] = bool((torch.rand(3, device='cuda').numpy() == drawn).all())
out['rng_states'] = len(c.get_rng_state_all())
c.set_rng_state_all(c.get_rng_state_all())
nested = c.memory_stats_as_nested_dict()
out['nested_current_matches'] = (nested['allocated_bytes']['all']['current'] ==
                                 c.memory_stats()['allocated_bytes.all.current'])
out['memory_module'] = c.memory.memory_allocated() == c.memory_allocated()
import warnings
with warnings.catch_warnings():
    warnings.simplefilter('ignore', FutureWarning)  # torch's 'resets /all/ peak memory stats'
    c.reset_max_memory_allocated()
out['peak_is_current_after_reset_max'] = c.max_memory_allocated() == c.memory_allocated()
c.reset_accumulated_memory_stats()
out['total_allocated_after_reset'] = c.memory_stats()['allocated_bytes.all.allocated']
out['summary_names_gpu1'] = 'GPU:1' in c.memory_summary(1)
out['bf16_on_capability_8'] = c.is_bf16_supported() == (c.get_device_capability()[0] >= 8)
print(json.dumps(out))
"""


def test_fake_gpu_counts_memory_and_times_with_events():
    r = run_with_fake(FAKE_GPU_PROBE)
    nbytes = 256 * 256 * 4  # a multiple of the pool's rounding: counted exactly
    assert r["initialized_before"] is False and r["initialized_after"] is True
    assert r["grew_by"] == r["stats_current"] == nbytes
    assert r["peak_at_least"] >= nbytes
    assert r["syncs_by_two_records"] == 2  # each record waits for the GPU
    assert r["elapsed_ms"] >= 0
    assert r["z_matches"]
    assert r["after_del"] == 0  # a freed tensor no longer counts
    assert r["peak_after_reset"] == 0
    assert r["summary_has_allocated_row"]
    assert r["reserved_released"] >= 0
    assert r["name1"] == "Fake GPU 1"
    assert len(r["capability"]) == 2 and r["capability"][0] >= 1
    assert r["syncs_by_synchronize"] == 1
    assert r["gpu1_grew_by"] == 1024 * 4  # memory_allocated() means the current device
    assert r["gpu1_name"] == "Fake GPU 1"
    assert r["oom"] == "ResourceExhaustedError"
    assert r["rng_state_repeats"] and r["rng_states"] == 2
    assert r["nested_current_matches"] and r["memory_module"]
    assert r["peak_is_current_after_reset_max"] and r["total_allocated_after_reset"] == 0
    assert r["summary_names_gpu1"] and r["bf16_on_capability_8"]


# ---- a real GPU ----

@pytest.mark.gpu
@pytest.mark.usefixtures("real_runtime")
def test_real_gpu_memory_events_and_streams():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(512, 512)).astype(np.float32)
    before = cuda.memory_allocated()
    x = torch.tensor(a, device="cuda")
    assert cuda.memory_allocated() - before == a.nbytes
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    start.record()
    for _ in range(4):
        y = x @ x
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) > 0
    side = cuda.Stream()
    side.wait_stream(cuda.current_stream())
    with cuda.stream(side):
        z = y * 2.0
    cuda.current_stream().wait_stream(side)
    np.testing.assert_allclose(z.numpy(), (a @ a) * 2.0, rtol=2e-3, atol=2e-2)
    before_del = cuda.memory_allocated()
    del z
    assert before_del - cuda.memory_allocated() == a.nbytes
