"""``torch.cuda``'s names over gpuaccel's device registry.

Course code written for PyTorch (``torch.cuda.is_available()``, ``get_device_name(0)``,
``get_device_properties(0).total_memory``, ``synchronize()``) runs with only its import changed.
The answers come from the same registry as ``gpuaccel.config``, so GPUs hidden with
``config.set_visible_devices`` are hidden here too, and index ``i`` is the i-th *visible* GPU,
as ``torch.cuda`` counts after ``CUDA_VISIBLE_DEVICES``. Nothing here starts the runtime.

Without a usable GPU, ``is_available()`` is False, ``device_count()`` is 0 and the calls that
need a GPU raise ``RuntimeError`` with the reason (no driver, driver too old, hidden, ...);
``diagnose()`` prints the whole report.
"""
from . import _C

__all__ = [
    "is_available", "device_count", "current_device", "get_device_name",
    "get_device_properties", "get_device_capability", "is_bf16_supported", "synchronize",
    "diagnose",
]


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


def _visible_gpus():
    """Physical indices of the visible GPUs, in order: position i is torch's device i."""
    return [index for _type, index in _C.visible_devices("GPU")]


def _unavailable_reason():
    physical = _C.physical_devices("GPU")
    if physical and not _visible_gpus():
        return (f"all {len(physical)} GPU(s) are hidden by gpuaccel.config.set_visible_devices. "
                "Fix: call gpuaccel.config.set_visible_devices(gpuaccel.config."
                "list_physical_devices('GPU'), 'GPU') before the first op, or restart Python.")
    return _C.gpu_unavailable_reason()


def _no_gpu(what):
    return RuntimeError(f"{what}: no CUDA GPU is available. {_unavailable_reason()} "
                        "(gpuaccel.cuda.diagnose() shows the full report.)")


def _device_index(device):
    """torch's ways of naming a CUDA device -> the index among visible GPUs (None: current)."""
    if device is None:
        return current_device()
    if isinstance(device, bool):
        raise ValueError(f"Invalid device {device!r}: expected an int index or a name like 'cuda:0'")
    if isinstance(device, int):
        return device
    name = device if isinstance(device, str) else getattr(device, "name", None)
    if isinstance(name, str):
        if name in ("cuda", "gpu", "GPU"):
            return current_device()
        kind, index = _C.parse_device_name(name)  # ValueError listing the accepted forms
        if kind != "GPU":
            raise ValueError(f"Expected a cuda device, but got: {name}")
        return index
    kind, index = getattr(device, "type", None), getattr(device, "index", None)
    if kind == "cuda":  # a torch.device-like object
        return current_device() if index is None else int(index)
    raise ValueError(f"Invalid device {device!r}: expected an int index or a name like 'cuda:0'")


def _physical_index(device, what):
    index = _device_index(device)
    visible = _visible_gpus()
    if not visible:
        raise _no_gpu(what)
    if not 0 <= index < len(visible):
        raise ValueError(f"{what}: invalid device index {index}; valid CUDA device indices are "
                         f"0..{len(visible) - 1} ({len(visible)} visible GPU(s))")
    return visible[index]


def device_count():
    """Number of visible GPUs (0 when there is no usable GPU)."""
    return len(_visible_gpus())


def is_available():
    """True when at least one GPU is visible: ``dev = 'cuda' if is_available() else 'cpu'``."""
    return device_count() > 0


def current_device():
    """Index of the current CUDA device (always 0: gpuaccel has no per-thread current device)."""
    if not is_available():
        raise _no_gpu("current_device")
    return 0


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


def synchronize(device=None):
    """Waits until all work queued on the GPU has finished (as ``torch.cuda.synchronize``)."""
    physical = _physical_index(device, "synchronize")
    if _C.gpu_provider_kind() == "simulated":
        return  # simulated GPUs run nothing, so there is nothing to wait for
    _C.cuda_synchronize(physical)


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


def memory_stats(device=None):
    """PyTorch-style counters ('allocated_bytes.all.current', ...); ``{}`` without a GPU."""
    return _memory_call("memory_stats", device, {})


def memory_summary(device=None, abbreviated=False):
    from . import memory
    if not is_available():
        return f"No CUDA GPU: {_unavailable_reason()}"
    return memory.memory_summary(f"cuda:{_device_index(device)}", abbreviated=abbreviated)


def reset_peak_memory_stats(device=None):
    _memory_call("reset_peak_memory_stats", device, None)


def empty_cache():
    """Gives cached, unused pool regions back to the GPU (memory in use is never returned)."""
    from . import memory
    for index in range(device_count()):
        memory.empty_cache(f"cuda:{index}")
