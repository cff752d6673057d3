"""The device half of ``torch.cuda`` (which GPUs there are, the current one, synchronize),
split from ``cuda`` so that ``_cuda_streams`` can use it while ``cuda`` imports the streams.

Index ``i`` is the i-th GPU visible after ``gpuaccel.config.set_visible_devices``, as
``torch.cuda`` counts after ``CUDA_VISIBLE_DEVICES``.
"""
from . import _C


class NoCudaGpuError(RuntimeError, AssertionError):
    """A ``torch.cuda`` call that needs a GPU was made without a usable one.

    PyTorch raises ``AssertionError('Torch not compiled with CUDA enabled')`` from its CPU-only
    build and ``RuntimeError`` ('Found no NVIDIA driver', 'No CUDA GPUs are available') from a
    CUDA build on a machine without a GPU; this is both, so course code catching either works.
    """


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
    return NoCudaGpuError(f"{what}: no CUDA GPU is available. {_unavailable_reason()} "
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
    """The physical index of ``device`` (NoCudaGpuError without a GPU, ValueError out of range)."""
    visible = _visible_gpus()
    if not visible:
        raise _no_gpu(what)
    index = _device_index(device)
    if not 0 <= index < len(visible):
        raise ValueError(f"{what}: invalid device index {index}; valid CUDA device indices are "
                         f"0..{len(visible) - 1} ({len(visible)} visible GPU(s))")
    return visible[index]


def _checked_index(device, what):
    """The index among visible GPUs of ``device``, checked as ``_physical_index`` does."""
    _physical_index(device, what)
    return _device_index(device)


def device_count():
    """Number of visible GPUs (0 when there is no usable GPU)."""
    return len(_visible_gpus())


def is_available():
    """True when at least one GPU is visible: ``dev = 'cuda' if is_available() else 'cpu'``."""
    return device_count() > 0


# torch's current device: the index among visible GPUs that a call without ``device`` means.
# Process-wide (torch's is per thread) and only for the calls of this module: a tensor placed
# with ``'cuda'`` still goes to GPU 0 (docs/devices.md).
_current_index = 0


def current_device():
    """Index of the current CUDA device (0 unless ``set_device`` or ``device(i)`` changed it)."""
    count = device_count()
    if count == 0:
        raise _no_gpu("current_device")
    return _current_index if _current_index < count else 0  # GPUs hidden since set_device


def set_device(device):
    """Makes ``device`` the current CUDA device; a negative index does nothing (as in torch)."""
    global _current_index
    index = _device_index(device)
    if index < 0:
        return
    _physical_index(index, "set_device")  # raises for a bad index or without a GPU
    _current_index = index


def _optional_device_index(device):
    """torch's ``_get_device_index(device, optional=True)``: None stays None."""
    return None if device is None else _device_index(device)


class device:
    """``with torch.cuda.device(1):`` makes GPU 1 the current device inside the block.

    ``None`` or a negative index leaves the current device alone, as in torch.
    """

    def __init__(self, device):
        self.idx = _optional_device_index(device)
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is None or self.idx < 0:
            return self
        self.prev_idx = current_device()  # raises without a GPU, as torch does
        if self.prev_idx != self.idx:
            set_device(self.idx)
        return self

    def __exit__(self, *exc_info):
        if self.idx is not None and self.idx >= 0 and self.prev_idx != self.idx:
            set_device(self.prev_idx)
        return False


class device_of(device):
    """``with torch.cuda.device_of(tensor):`` makes the tensor's GPU current; a CPU tensor
    changes nothing."""

    def __init__(self, obj):
        placed = getattr(obj, "device", None)
        on_gpu = getattr(placed, "type", None) == "cuda"
        super().__init__((placed.index or 0) if on_gpu else -1)


def synchronize(device=None):
    """Waits until all work queued on the GPU has finished (as ``torch.cuda.synchronize``)."""
    physical = _physical_index(device, "synchronize")
    if _C.gpu_provider_kind() == "simulated":
        return  # simulated GPUs run nothing, so there is nothing to wait for
    _C.cuda_synchronize(physical)
