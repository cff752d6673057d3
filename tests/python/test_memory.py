"""gpuaccel.memory: TF's get_memory_info/reset_memory_stats and PyTorch's memory_* calls on the
CPU and on simulated GPUs, memory_limit producing ResourceExhaustedError with its numbers, growth
seen in memory_reserved, and the device argument forms. Raw allocations come from a test hook
until tensors exist."""
import os

import pytest

import gpuaccel
from gpuaccel import _C, config, memory
from gpuaccel.errors import ResourceExhaustedError

MiB = 2**20
GiB = 2**30
T4 = {"name": "Tesla T4", "total_memory": 15 * GiB, "major": 7, "minor": 5}


def _reset(simulated_gpus):
    # Pools first (they belong to the old registry's logical devices), then the registry.
    _C._memory_reset_for_testing()
    _C._reset_runtime_for_testing(simulated_gpus)


@pytest.fixture
def cpu_only():
    """A fresh runtime that sees no GPU, whatever the machine has."""
    _reset([])
    yield
    _reset(None)


@pytest.fixture
def one_gpu():
    """A fresh runtime over one simulated T4 (its memory is a fake address range)."""
    _reset([T4])
    yield
    _reset(None)


@pytest.fixture
def cpu_64mb(cpu_only):
    """The CPU as one logical device with memory_limit=64 MB."""
    _C.set_logical_device_configuration(("CPU", 0), [(64, None, None)])


class Allocations:
    """Raw allocations that are freed at the end of the test even if it fails."""

    def __init__(self):
        self.handles = []

    def __call__(self, device, nbytes):
        handle = _C._memory_allocate_for_testing(device, nbytes)
        self.handles.append(handle)
        return handle

    def free(self, handle):
        self.handles.remove(handle)
        _C._memory_free_for_testing(handle)

    def free_all(self):
        for handle in list(self.handles):
            self.free(handle)


@pytest.fixture
def alloc():
    allocations = Allocations()
    yield allocations
    allocations.free_all()


def test_stats_follow_allocations_and_peaks_reset(cpu_64mb, alloc):
    assert memory.get_memory_info("CPU:0") == {"current": 0, "peak": 0}
    a = alloc("cpu", MiB)
    b = alloc("cpu", 3 * MiB + 100)  # rounded to 256 bytes
    assert memory.get_memory_info("/device:CPU:0") == {"current": 4 * MiB + 256,
                                                       "peak": 4 * MiB + 256}
    assert memory.memory_allocated("cpu") == 4 * MiB + 256
    alloc.free(b)
    assert memory.get_memory_info("/CPU:0") == {"current": MiB, "peak": 4 * MiB + 256}
    assert memory.max_memory_allocated("cpu") == 4 * MiB + 256
    memory.reset_memory_stats("CPU:0")
    assert memory.get_memory_info("CPU:0") == {"current": MiB, "peak": MiB}
    alloc.free(a)
    memory.reset_peak_memory_stats("cpu")
    assert memory.max_memory_allocated("cpu") == 0
    # The TF names in gpuaccel.config answer the same.
    assert config.experimental.get_memory_info("CPU:0") == {"current": 0, "peak": 0}


def test_memory_stats_uses_pytorch_key_names(cpu_64mb, alloc):
    alloc("cpu", 1000)
    handle = alloc("cpu", 5000)
    alloc.free(handle)
    stats = memory.memory_stats("cpu")
    for key in ("allocated_bytes.all.current", "allocated_bytes.all.peak",
                "allocated_bytes.all.allocated", "allocated_bytes.all.freed",
                "reserved_bytes.all.current", "active_bytes.all.current",
                "requested_bytes.all.current", "allocation.all.current", "allocation.all.peak",
                "segment.all.current", "active.all.current", "inactive_split.all.current",
                "num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free"):
        assert isinstance(stats[key], int), key
    assert stats["allocation.all.current"] == 1
    assert stats["allocation.all.peak"] == 2
    assert stats["allocation.all.allocated"] == 2
    assert stats["allocation.all.freed"] == 1
    assert stats["allocated_bytes.all.current"] == 1024
    assert stats["requested_bytes.all.current"] == 1000
    assert stats["allocated_bytes.all.freed"] == 5120
    assert stats["segment.all.current"] == 1
    assert stats["memory_limit_bytes"] == 64 * MiB
    assert list(stats) == sorted(stats)


def test_memory_limit_raises_resource_exhausted_with_the_numbers(cpu_64mb, alloc):
    alloc("cpu", 40 * MiB)
    with pytest.raises(ResourceExhaustedError) as info:
        alloc("cpu", 30 * MiB)
    text = str(info.value)
    assert "OOM when allocating 31457280 bytes (30.00 MiB)" in text
    assert "/job:localhost/replica:0/task:0/device:CPU:0" in text
    assert "in use: 41943040 bytes (40.00 MiB) in 1 allocation" in text
    reserved = memory.memory_reserved("cpu")
    assert f"reserved: {reserved} bytes" in text
    assert "limit: 67108864 bytes (64.00 MiB) (memory_limit of the logical device)" in text
    largest = memory.memory_stats("cpu")["largest_free_chunk_bytes"]
    assert f"largest free chunk: {largest} bytes" in text
    assert "fragmentation:" in text
    for advice in ("smaller batch", "mixed precision", "empty_cache"):
        assert advice in text
    assert memory.memory_stats("cpu")["num_ooms"] == 1
    # Nothing is corrupted: the pool serves the next request.
    alloc("cpu", 20 * MiB)
    assert memory.memory_allocated("cpu") == 60 * MiB
    assert memory.memory_reserved("cpu") <= 64 * MiB


def test_growth_is_visible_in_memory_reserved(cpu_only, alloc):
    assert memory.memory_reserved("cpu") == 0
    seen = []
    for _ in range(4):
        alloc("cpu", MiB + 512 * 1024)
        seen.append(memory.memory_reserved("cpu") // MiB)
    # Regions of 2 MiB, then 4 MiB (room for two), then 8 MiB: the pool starts small and
    # doubles each time it must grow.
    assert seen == [2, 6, 6, 14]
    assert memory.memory_stats("cpu")["segment.all.current"] == 3
    alloc("cpu", 8 * MiB)  # fits nowhere: the next region is 16 MiB
    assert memory.memory_reserved("cpu") == 30 * MiB
    assert memory.max_memory_reserved("cpu") == 30 * MiB
    assert memory.memory_allocated("cpu") == 14 * MiB


def test_empty_cache_returns_only_unused_regions(cpu_only, alloc):
    keep = alloc("cpu", MiB)
    big = alloc("cpu", 10 * MiB)
    assert memory.memory_reserved("cpu") == 2 * MiB + 16 * MiB
    alloc.free(big)
    assert memory.memory_reserved("cpu") == 18 * MiB  # cached, not returned
    memory.empty_cache()
    assert memory.memory_reserved("cpu") == 2 * MiB
    assert memory.memory_stats("cpu")["num_device_free"] == 1
    alloc.free(keep)
    memory.empty_cache("cpu")
    assert memory.memory_reserved("cpu") == 0


def test_simulated_gpu_preallocates_by_default(one_gpu, alloc):
    assert memory.memory_reserved("/GPU:0") == 0  # asking does not create the pool
    alloc("cuda:0", 1000)
    expected = int(15 * GiB * memory.get_gpu_memory_fraction()) // 256 * 256
    assert memory.memory_reserved(0) == expected
    assert memory.memory_allocated(0) == 1024
    assert memory.get_memory_info("GPU:0") == {"current": 1024, "peak": 1024}
    with pytest.raises(ResourceExhaustedError, match="set_memory_growth"):
        alloc("/GPU:0", 15 * GiB)


def test_simulated_gpu_with_memory_growth_starts_small(one_gpu, alloc):
    gpu = config.list_physical_devices("GPU")[0]
    config.experimental.set_memory_growth(gpu, True)
    alloc("/GPU:0", 1000)
    assert memory.memory_reserved("/GPU:0") == 2 * MiB
    alloc("/GPU:0", 3 * MiB)
    assert memory.memory_reserved("/GPU:0") == 6 * MiB


def test_device_argument_forms(one_gpu, alloc):
    alloc("cpu", 3000)
    cpu_phys = config.list_physical_devices("CPU")[0]
    cpu_logical = config.list_logical_devices("CPU")[0]

    class TorchLikeDevice:
        type, index = "cpu", None

    for device in ("cpu", "CPU:0", "/CPU:0", "/device:CPU:0",
                   "/job:localhost/replica:0/task:0/device:CPU:0", cpu_phys, cpu_logical,
                   TorchLikeDevice()):
        assert memory.memory_allocated(device) == 3072, device
    # None and ints mean GPUs when there are GPUs (torch's current device).
    alloc("cuda", 256)
    assert memory.memory_allocated() == 256
    assert memory.memory_allocated(0) == 256
    with gpuaccel.device("/CPU:0"):
        assert memory.memory_allocated() == 3072  # None follows the device scope
    with pytest.raises(ValueError, match="No logical device matches '/GPU:3'"):
        memory.get_memory_info("/GPU:3")
    with pytest.raises(ValueError):
        memory.get_memory_info("/TPU:0")
    with pytest.raises(TypeError):
        memory.memory_allocated(True)
    with pytest.raises(ValueError):
        memory.memory_allocated(-1)


def test_default_device_is_the_cpu_without_gpus(cpu_only, alloc):
    alloc(None, 512)
    assert memory.memory_allocated() == 512
    assert memory.memory_allocated("cpu") == 512


def test_pytorch_names_do_not_start_the_runtime(cpu_only):
    assert not _C.is_initialized()
    assert memory.memory_allocated() == 0
    assert memory.max_memory_reserved("cpu") == 0
    assert memory.memory_stats() == {}
    memory.empty_cache()
    memory.reset_peak_memory_stats()
    assert "has not started" in memory.memory_summary()
    assert not _C.is_initialized()
    # TF's call starts it, as TF does.
    assert memory.get_memory_info("CPU:0") == {"current": 0, "peak": 0}
    assert _C.is_initialized()


def test_memory_summary_is_a_readable_table(cpu_64mb, alloc):
    alloc("cpu", 5 * MiB)
    text = memory.memory_summary("cpu")
    assert "device /device:CPU:0" in text
    assert "limit: 64.00 MiB" in text
    row = next(line for line in text.splitlines() if line.startswith("| Allocated memory"))
    assert "5.00 MiB" in row
    assert "Reserved memory" in text and "Allocations" in text
    assert all(len(line) == len(text.splitlines()[0]) for line in text.splitlines())


def test_accumulated_counters_reset(cpu_only, alloc):
    alloc.free(alloc("cpu", 4096))
    assert memory.memory_stats("cpu")["allocation.all.allocated"] == 1
    memory.reset_accumulated_memory_stats("cpu")
    assert memory.memory_stats("cpu")["allocation.all.allocated"] == 0
    assert memory.memory_stats("cpu")["allocated_bytes.all.freed"] == 0


def test_no_caching_mode_goes_to_the_device_every_time(cpu_only, alloc, monkeypatch):
    monkeypatch.setenv("GPUACCEL_NO_CACHING", "1")
    assert not memory.caching_enabled()
    h = alloc("cpu", 1000)
    alloc("cpu", 1000)
    stats = memory.memory_stats("cpu")
    assert stats["num_device_alloc"] == 2
    assert stats["reserved_bytes.all.current"] == 2000  # exact sizes, nothing cached
    alloc.free(h)
    assert memory.memory_reserved("cpu") == 1000
    assert "no caching" in memory.memory_summary("cpu")


def test_free_for_testing_rejects_unknown_handles(cpu_only, alloc):
    h = alloc("cpu", 10)
    alloc.free(h)
    with pytest.raises(ValueError, match="already freed"):
        _C._memory_free_for_testing(h)


def test_gpu_memory_fraction_is_validated(one_gpu):
    before = memory.get_gpu_memory_fraction()
    with pytest.raises(ValueError):
        memory.set_gpu_memory_fraction(0)
    with pytest.raises(ValueError):
        memory.set_gpu_memory_fraction(1.5)
    assert memory.get_gpu_memory_fraction() == before


@pytest.mark.usefixtures("cpu_only")
def test_self_check_matmul_allocates_through_the_cpu_pool():
    """Op memory is pool memory: the self-check's three 128x128 f32 buffers show up in the CPU
    pool's allocation count and peak, and are all returned afterwards."""
    from gpuaccel import memory
    _C.matmul_self_check(8)  # starts the runtime and creates the CPU pool
    memory.reset_peak_memory_stats("cpu")
    before = memory.memory_stats("cpu")
    result = _C.matmul_self_check(128)
    after = memory.memory_stats("cpu")
    assert result["device"].endswith("CPU:0")
    assert after["allocation.all.allocated"] - before["allocation.all.allocated"] == 3
    assert after["allocated_bytes.all.peak"] >= before["allocated_bytes.all.current"] + 3 * 128 * 128 * 4
    assert after["allocated_bytes.all.current"] == before["allocated_bytes.all.current"]


@pytest.mark.usefixtures("cpu_only")
def test_self_check_reports_out_of_memory_under_a_cpu_memory_limit():
    from gpuaccel import config, errors
    config.set_logical_device_configuration(
        config.list_physical_devices("CPU")[0], [config.LogicalDeviceConfiguration(memory_limit=1)])
    with pytest.raises(errors.ResourceExhaustedError) as info:
        _C.matmul_self_check(1024)  # 3 x 4 MiB of operands in a 1 MiB device
    assert info.value.op_name == "MatMul"
    assert "MatMul" in str(info.value)
    assert _C.matmul_self_check(16)["max_abs_error"] >= 0  # usable after the OOM


def test_reset_peak_memory_stats_validates_the_device_before_the_runtime_starts():
    for call in (memory.reset_peak_memory_stats, memory.reset_accumulated_memory_stats):
        with pytest.raises(ValueError, match="Invalid device index -1"):
            call(-1)
        with pytest.raises(TypeError, match="device must be"):
            call(2.5)


def _minor_faults():
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


@pytest.mark.usefixtures("cpu_only")
def test_steady_state_training_steps_take_no_memory_from_the_os():
    # A page the kernel hands out is zeroed first; a step that gave its activations back to the
    # OS and took them again would pay that on every step (5.5 MB for the course CNN's first
    # activation at batch 64). After the first steps the pool holds what a step needs, so later
    # steps neither grow nor shrink it, and the process takes (nearly) no fresh pages.
    import numpy as np
    from gpuaccel import keras
    L = keras.layers
    model = keras.Sequential([keras.Input((28, 28, 1)), L.Conv2D(32, 3, activation="relu"),
                              L.MaxPooling2D(2), L.Conv2D(64, 3, activation="relu"),
                              L.MaxPooling2D(2), L.Flatten(), L.Dense(10)])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    rng = np.random.default_rng(0)
    x = rng.random((10 * 64, 28, 28, 1), dtype=np.float32)
    y = rng.integers(0, 10, len(x))
    model.fit(x[:128], y[:128], batch_size=64, epochs=2, verbose=0)  # warm-up: the pool grows
    before = memory.memory_stats("cpu")
    faults = _minor_faults()
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)  # ten steady steps
    faults = _minor_faults() - faults
    after = memory.memory_stats("cpu")
    assert after["num_device_alloc"] == before["num_device_alloc"]
    assert after["num_device_free"] == before["num_device_free"]
    assert after["reserved_bytes.all.current"] == before["reserved_bytes.all.current"]
    # One 26x26x32 float32 activation at batch 64 is 1352 pages: ten steps that each took it
    # fresh from the kernel would fault at least that many times over.
    first_activation_pages = 64 * 26 * 26 * 32 * 4 // 4096
    print(f"minor page faults over ten steady steps: {faults}")
    assert faults < first_activation_pages, faults
