"""``torch.cuda``'s names over gpuaccel's device registry.

Course code written for PyTorch (``torch.cuda.is_available()``, ``get_device_name(0)``,
``get_device_properties(0).total_memory``, ``synchronize()``) runs with only its import changed.
The answers come from the same registry as ``gpuaccel.config``, so GPUs hidden with
``config.set_visible_devices`` are hidden here too, and index ``i`` is the i-th *visible* GPU,
as ``torch.cuda`` counts after ``CUDA_VISIBLE_DEVICES``. Nothing here starts the runtime.

Without a usable GPU, ``is_available()`` is False, ``device_count()`` is 0 and the calls that
need a GPU raise ``NoCudaGpuError`` with the reason (no driver, driver too old, hidden, ...);
``diagnose()`` prints the whole report. The device calls (current device, synchronize) are in
``_cuda_devices``, streams and events in ``_cuda_streams``; all are exported here.
"""
import sys as _sys
import warnings as _warnings

from . import _C
from ._cuda_devices import (NoCudaGpuError, _device_index, _no_gpu, _physical_index,
                            _unavailable_reason, _visible_gpus, current_device, device,
                            device_count, device_of, is_available, set_device, synchronize)
from .errors import ResourceExhaustedError

__all__ = [
    "is_available", "device_count", "current_device", "set_device", "device", "device_of",
    "get_device_name", "get_device_properties", "get_device_capability", "is_bf16_supported",
    "synchronize", "is_initialized", "init", "manual_seed", "manual_seed_all", "seed",
    "seed_all", "initial_seed", "set_per_process_memory_fraction", "OutOfMemoryError",
    "Event", "Stream", "StreamContext", "stream", "current_stream", "default_stream",
    "NoCudaGpuError", "diagnose", "get_rng_state", "set_rng_state", "get_rng_state_all",
    "set_rng_state_all", "memory", "memory_stats_as_nested_dict", "set_stream",
]


# ``except torch.cuda.OutOfMemoryError`` catches gpuaccel's out-of-memory error (PyTorch's
# class derives from RuntimeError; gpuaccel's, TensorFlow's ResourceExhaustedError, does not).
OutOfMemoryError = ResourceExhaustedError


class _CudaDeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns: read-only facts about one GPU.

    ``total_memory`` is in bytes, ``memory_clock_rate`` in kHz, ``memory_bus_width`` in bits and
    ``memory_bandwidth`` the theoretical peak in GB/s (2 transfers per clock x bus width).
    """

    __slots__ = ("name", "total_memory", "major", "minor", "multi_processor_count",
                 "memory_bus_width", "memory_clock_rate", "memory_bandwidth", "pci_bus_id")

    def __init__(self, info):
        self.name = info["name"]
        self.total_memory = int(info["total_memory"])
        self.major = int(info["major"])
        self.minor = int(info["minor"])
        self.multi_processor_count = int(info.get("multi_processor_count", 0))
        self.memory_bus_width = int(info.get("memory_bus_width", 0))
        self.memory_clock_rate = int(info.get("memory_clock_rate", 0))
        self.memory_bandwidth = float(info.get("memory_bandwidth_gbps", 0.0))
        self.pci_bus_id = info.get("pci_bus_id", "")

    def __setattr__(self, key, value):
        if hasattr(self, "pci_bus_id"):  # set last in __init__: from then on, read-only
            raise AttributeError(f"_CudaDeviceProperties.{key} is read-only")
        object.__setattr__(self, key, value)

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2**20}MB, "
                f"multi_processor_count={self.multi_processor_count}, "
                f"memory_bus_width={self.memory_bus_width}, "
                f"memory_clock_rate={self.memory_clock_rate}, "
                f"memory_bandwidth={self.memory_bandwidth:.1f}GB/s)")


def get_device_properties(device=None):
    """Name, total_memory (bytes), compute capability, SM count, memory bus and bandwidth."""
    return _CudaDeviceProperties(_C.gpu_info(_physical_index(device, "get_device_properties")))


def get_device_name(device=None):
    """The GPU's marketing name, e.g. 'Tesla T4'."""
    return _C.gpu_info(_physical_index(device, "get_device_name"))["name"]


def get_device_capability(device=None):
    """Compute capability as ``(major, minor)``, e.g. ``(7, 5)`` for a T4."""
    info = _C.gpu_info(_physical_index(device, "get_device_capability"))
    return (int(info["major"]), int(info["minor"]))


def is_bf16_supported():
    """True when the current GPU computes in bfloat16 natively (compute capability 8.0+)."""
    return is_available() and get_device_capability()[0] >= 8


def is_initialized():
    """True once gpuaccel's runtime has started with a usable GPU (torch: CUDA is initialized)."""
    return is_available() and _C.is_initialized()


def init():
    """Starts the runtime now instead of at the first op; raises without a GPU (as torch)."""
    if not is_available():
        raise _no_gpu("init")
    _C.ensure_initialized()


# ---- random numbers ----
# gpuaccel has one counter-based generator whose draws are the same on the CPU and every GPU,
# so seeding "the CUDA generators" seeds that one generator (torch keeps one per device and
# leaves the CPU's alone): the usual torch.manual_seed(s); torch.cuda.manual_seed_all(s) gives
# the same run on any machine.

def manual_seed(seed):
    """Seeds the generator the GPUs draw from (gpuaccel's only one; see above)."""
    from . import random
    random.manual_seed(int(seed))


def manual_seed_all(seed):
    """The same as ``manual_seed``: every GPU draws from the one generator."""
    manual_seed(seed)


def seed():
    """Seeds the generator from the operating system's entropy (returns None, as torch)."""
    from ._torch_functions import seed as seed_from_entropy
    seed_from_entropy()


def seed_all():
    seed()


def initial_seed():
    """The generator's seed; needs a GPU, as torch's does."""
    if not is_available():
        raise _no_gpu("initial_seed")
    from ._torch_functions import initial_seed as generator_seed
    return generator_seed()


def get_rng_state(device="cuda"):
    """The state of the generator the GPUs draw from: gpuaccel's one generator's (as
    ``torch.get_rng_state``); needs a GPU, as torch's does."""
    _physical_index(device, "get_rng_state")
    from ._torch_generator import default_generator
    return default_generator.get_state()


def set_rng_state(new_state, device="cuda"):
    """Restores a state from ``get_rng_state`` (of either face: it is one generator)."""
    from ._torch_generator import default_generator
    if is_available():
        _physical_index(device, "set_rng_state")
    default_generator.set_state(new_state)


def get_rng_state_all():
    """One state per visible GPU (all the same: one generator); ``[]`` without a GPU."""
    return [get_rng_state(index) for index in range(device_count())]


def set_rng_state_all(new_states):
    """Restores the states of ``get_rng_state_all`` (the last one wins: one generator)."""
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


def set_per_process_memory_fraction(fraction, device=None):
    """Caps the GPU's memory pool at ``fraction`` of its total memory (torch's checks: a float
    in [0, 1]). gpuaccel sets the cap when the pool is created, so this must come before the
    first op, as TensorFlow's memory_limit does; afterwards it raises RuntimeError."""
    physical = _physical_index(device, "set_per_process_memory_fraction")
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    if _C.is_initialized():
        raise RuntimeError(
            "set_per_process_memory_fraction: the runtime has already started and the GPU's "
            "pool was created with its limit; call it before the first op (or restart Python)")
    from .config import LogicalDeviceConfiguration, PhysicalDevice, \
        set_logical_device_configuration
    total_mib = int(_C.gpu_info(physical)["total_memory"]) // 2**20
    set_logical_device_configuration(
        PhysicalDevice(f"/physical_device:GPU:{physical}", "GPU"),
        [LogicalDeviceConfiguration(memory_limit=int(fraction * total_mib))])


def diagnose(file=None):
    """Prints the environment report (versions, CPU, devices, every problem and its fix) to
    ``file`` (default: stdout) and returns it as a string."""
    from . import info
    text = info.report()
    print(text, file=file)
    return text


# ---- memory: torch.cuda names over gpuaccel.memory ----
# As in torch.cuda, these answer zeros (and an empty dict) on a machine without a usable GPU
# instead of raising, so monitoring code in a notebook runs anywhere; gpuaccel.memory answers
# the same questions for the CPU.

def _memory_call(function_name, device, no_gpu_value):
    from . import memory
    if not is_available():
        return no_gpu_value
    return getattr(memory, function_name)(f"cuda:{_device_index(device)}")


def memory_allocated(device=None):
    """Bytes in live allocations on the GPU (0 without a GPU)."""
    return _memory_call("memory_allocated", device, 0)


def max_memory_allocated(device=None):
    """Peak of ``memory_allocated`` since start or ``reset_peak_memory_stats``."""
    return _memory_call("max_memory_allocated", device, 0)


def memory_reserved(device=None):
    """Bytes the GPU's pool holds from the device (allocated or cached)."""
    return _memory_call("memory_reserved", device, 0)


def max_memory_reserved(device=None):
    return _memory_call("max_memory_reserved", device, 0)


def _renamed(old, new):
    _warnings.warn(f"torch.cuda.{old} has been renamed to torch.cuda.{new}", FutureWarning,
                  stacklevel=3)


def memory_cached(device=None):
    """Deprecated name of ``memory_reserved`` (torch warns the same way)."""
    _renamed("memory_cached", "memory_reserved")
    return memory_reserved(device)


def max_memory_cached(device=None):
    """Deprecated name of ``max_memory_reserved``."""
    _renamed("max_memory_cached", "max_memory_reserved")
    return max_memory_reserved(device)


def memory_stats(device=None):
    """PyTorch-style counters ('allocated_bytes.all.current', ...); ``{}`` without a GPU."""
    return _memory_call("memory_stats", device, {})


def memory_stats_as_nested_dict(device=None):
    """``memory_stats`` with its dotted keys as nested dicts (``d['allocated_bytes']['all']
    ['current']``), as torch's."""
    nested = {}
    for key, value in memory_stats(device).items():
        *path, last = key.split(".")
        node = nested
        for part in path:
            node = node.setdefault(part, {})
        node[last] = value
    return nested


def memory_summary(device=None, abbreviated=False):
    from . import memory
    if not is_available():
        return f"No CUDA GPU: {_unavailable_reason()}"
    return memory.memory_summary(f"cuda:{_device_index(device)}", abbreviated=abbreviated)


def reset_peak_memory_stats(device=None):
    _memory_call("reset_peak_memory_stats", device, None)


def _reset_peaks_warning(name):
    _warnings.warn(f"torch.cuda.{name} now calls torch.cuda.reset_peak_memory_stats, which "
                  "resets /all/ peak memory stats.", FutureWarning, stacklevel=3)


def reset_max_memory_allocated(device=None):
    """Older name: resets every peak (torch warns that it does)."""
    _reset_peaks_warning("reset_max_memory_allocated")
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    _reset_peaks_warning("reset_max_memory_cached")
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None):
    """The cumulative counters (totals allocated and freed, OOMs) return to zero."""
    _memory_call("reset_accumulated_memory_stats", device, None)


def empty_cache():
    """Gives cached, unused pool regions back to the GPU (memory in use is never returned)."""
    from . import memory
    for index in range(device_count()):
        memory.empty_cache(f"cuda:{index}")


# Streams and events (below the functions they call: current_device, synchronize).
from ._cuda_streams import (Event, Stream, StreamContext, current_stream,  # noqa: E402
                            default_stream, set_stream, stream)

# torch.cuda.memory, the module PyTorch keeps the memory functions in: they are this module's.
memory = _sys.modules[__name__]
# nvtx (torch.cuda.nvtx) is attached by gpuaccel.torch, where its profiler ranges live.
