"""``tf.config.experimental``: memory growth, device details and memory statistics, op
determinism, plus the older aliases of the ``tf.config`` calls that course notebooks still use."""
from .. import _C
from ._devices import (
    LogicalDeviceConfiguration,
    PhysicalDevice,
    as_physical_device_tuple,
)

# Older TF spellings, still common in course material.
VirtualDeviceConfiguration = LogicalDeviceConfiguration


def set_memory_growth(device, enable):
    """Start a GPU's memory pool small and grow it on demand instead of reserving most of the
    GPU at start-up. Must be called before the runtime starts, with the same value on all GPUs."""
    _C.set_memory_growth(as_physical_device_tuple(device, "set_memory_growth"), bool(enable))


def get_memory_growth(device):
    """``True``/``False`` as set, ``None`` when never set (as in TF)."""
    return _C.memory_growth(as_physical_device_tuple(device, "get_memory_growth"))


def get_device_details(device):
    """``{'device_name': 'Tesla T4', 'compute_capability': (7, 5)}`` for a GPU, ``{}`` for the CPU."""
    if not isinstance(device, PhysicalDevice):
        raise ValueError(
            f"device must be a tf.config.PhysicalDevice, but got: {device!r}")
    device_type, index = as_physical_device_tuple(device, "get_device_details")
    if device_type != "GPU":
        return {}
    info = _C.gpu_info(index)
    return {"device_name": info["name"], "compute_capability": (info["major"], info["minor"])}


def get_memory_info(device):
    """``{'current': bytes, 'peak': bytes}`` of a logical device's memory pool (e.g. 'GPU:0')."""
    from .. import memory
    return memory.get_memory_info(device)


def reset_memory_stats(device):
    """Resets the peak of ``get_memory_info(device)`` to the current value."""
    from .. import memory
    memory.reset_memory_stats(device)

_op_determinism = False
# The CPU backend's measured oneDNN implementation choices, as (getter, setter) of _C, and those
# that enable_op_determinism turned from 'measure' into 'default'.
_MEASURED_IMPL_SETTINGS = {
    "conv2d_backward_data": ("conv2d_backward_data_impl_setting", "set_conv2d_backward_data_impl"),
    "conv2d_backward_weights": ("conv2d_backward_weights_impl_setting",
                                "set_conv2d_backward_weights_impl"),
}
_measured_impls_switched_off = set()


def enable_op_determinism():
    """``tf.config.experimental.enable_op_determinism()``: ops give the same result every run.

    On the CPU gpuaccel's ops already do for a fixed number of threads (static OpenMP
    schedules, oneDNN's fixed reduction order; random numbers are counter-based), except that
    convolution backward-data and backward-weights time oneDNN's implementations (and, for
    backward-weights, one thread against all) on a shape's first call and keep the fastest,
    which may differ between runs: this makes them take oneDNN's own pick instead (the setting
    'default'; docs/benchmarks.md), unless an implementation was named. On a GPU cuDNN may pick
    convolution backward algorithms that accumulate with atomics; choosing only deterministic
    ones is not implemented yet, so with a GPU visible this warns (docs/reliability.md)."""
    global _op_determinism
    _op_determinism = True
    for name, (getter, setter) in _MEASURED_IMPL_SETTINGS.items():
        if getattr(_C, getter)() == "measure":
            getattr(_C, setter)("default")
            _measured_impls_switched_off.add(name)
    warn_cudnn_not_restricted("enable_op_determinism")


def warn_cudnn_not_restricted(who, stacklevel=2):
    """The warning that a determinism request does not reach cuDNN's algorithm choice (only
    where a GPU is visible: the CPU's ops are deterministic)."""
    if _C.physical_devices("GPU"):
        import warnings
        warnings.warn(f"{who}: gpuaccel does not yet restrict cuDNN to deterministic "
                      "convolution algorithms; GPU results may differ between runs in the last "
                      "bits", stacklevel=stacklevel + 1)


def disable_op_determinism():
    """Undoes ``enable_op_determinism`` (TF's name)."""
    global _op_determinism
    _op_determinism = False
    for name in _measured_impls_switched_off:
        getter, setter = _MEASURED_IMPL_SETTINGS[name]
        if getattr(_C, getter)() == "default":
            getattr(_C, setter)("measure")
    _measured_impls_switched_off.clear()


def is_op_determinism_enabled():
    """Whether ``enable_op_determinism`` was called (TF's name)."""
    return _op_determinism


# list_physical_devices, set_visible_devices, set_virtual_device_configuration and the other
# older aliases of tf.config calls are attached by config/__init__.py, where those live.
