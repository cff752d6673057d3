"""Device configuration with TensorFlow's names and semantics (``tf.config``).

Configuration is free until the runtime starts (the first op or allocation, or
``list_logical_devices``); after that only calls that change nothing are accepted, and the
others raise TensorFlow's ``RuntimeError``. The state lives in the C++ device registry so the
training loop, the allocator and placement all see the same answer.

Deliberate differences from TensorFlow (documented in docs/devices.md):
- ``device_type`` strings are case-insensitive (``'gpu'`` works; TF silently returns ``[]``);
- a logical CPU device may carry a ``memory_limit`` (TF refuses), so out-of-memory behaviour
  is testable without a GPU;
- hiding every CPU is refused when asked, not at start-up.
"""
from .. import _C, _unsupported
from ._devices import (
    LogicalDevice,
    LogicalDeviceConfiguration,
    PhysicalDevice,
    as_physical_device_tuple,
    logical_device_from_record,
    physical_device_from_tuple,
)
from . import experimental
from . import optimizer
from . import threading

__all__ = [
    "PhysicalDevice", "LogicalDevice", "LogicalDeviceConfiguration",
    "list_physical_devices", "list_logical_devices", "get_visible_devices",
    "set_visible_devices", "set_logical_device_configuration",
    "get_logical_device_configuration", "set_soft_device_placement",
    "get_soft_device_placement", "run_functions_eagerly", "functions_run_eagerly",
    "experimental_run_functions_eagerly", "experimental_functions_run_eagerly", "experimental",
    "optimizer", "threading",
]


def _device_type(value, function):
    """``device_type``: None or a type name such as 'GPU' or 'CPU' (TypeError otherwise)."""
    if value is not None and not isinstance(value, str):
        raise TypeError(f"{function}: device_type must be None or a string such as 'GPU' or "
                        f"'CPU', got {type(value).__name__} {value!r}")
    return value


def list_physical_devices(device_type=None):
    """Physical devices, e.g. ``[PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')]``.

    Does not start the runtime, so configuration may follow.
    """
    device_type = _device_type(device_type, "list_physical_devices")
    return [physical_device_from_tuple(t) for t in _C.physical_devices(device_type)]


def list_logical_devices(device_type=None):
    """Logical devices (``LogicalDevice(name='/device:CPU:0', device_type='CPU')``).

    As in TensorFlow, this starts the runtime: configuration is frozen afterwards.
    """
    device_type = _device_type(device_type, "list_logical_devices")
    return [logical_device_from_record(r) for r in _C.logical_devices(device_type)]


def get_visible_devices(device_type=None):
    """Physical devices the runtime will use (all of them unless ``set_visible_devices`` hid some)."""
    device_type = _device_type(device_type, "get_visible_devices")
    return [physical_device_from_tuple(t) for t in _C.visible_devices(device_type)]


def set_visible_devices(devices, device_type=None):
    """Makes only ``devices`` visible; with ``device_type``, other types keep their visibility.

    ``set_visible_devices([], 'GPU')`` hides every GPU (the course's "run it on the CPU").
    """
    # A single PhysicalDevice is itself a (named) tuple, so test for it before for sequences.
    if isinstance(devices, PhysicalDevice) or not isinstance(devices, (list, tuple)):
        devices = [devices]
    tuples = [as_physical_device_tuple(d, "set_visible_devices") for d in devices]
    if device_type is not None and not isinstance(device_type, str):
        raise TypeError(f"set_visible_devices: device_type must be 'CPU', 'GPU' or None, got "
                        f"{device_type!r}")
    _C.set_visible_devices(tuples, device_type)


def set_logical_device_configuration(device, logical_devices):
    """Splits ``device`` into one logical device per ``LogicalDeviceConfiguration``.

    GPUs need a ``memory_limit`` (MB) per logical device. CPUs may be split too, which makes
    multi-device code (``MirroredStrategy``) testable without GPUs.
    """
    dev = as_physical_device_tuple(device, "set_logical_device_configuration")
    if isinstance(logical_devices, LogicalDeviceConfiguration):
        logical_devices = [logical_devices]
    configs = []
    for c in logical_devices:
        if not isinstance(c, LogicalDeviceConfiguration):
            raise ValueError(
                "set_logical_device_configuration expects a list of "
                f"LogicalDeviceConfiguration, got an element {c!r}")
        configs.append((c.memory_limit, c.experimental_priority, c.experimental_device_ordinal))
    _C.set_logical_device_configuration(dev, configs)


def get_logical_device_configuration(device):
    """The configuration set for ``device``, or ``None`` when it was never split."""
    configs = _C.logical_device_configuration(
        as_physical_device_tuple(device, "get_logical_device_configuration"))
    if configs is None:
        return None
    return [LogicalDeviceConfiguration(*c) for c in configs]


def set_soft_device_placement(enabled):
    """With soft placement (the default, as in TF 2) an op asked to run on a device that does
    not exist runs on the CPU instead of raising."""
    _C.set_soft_device_placement(bool(enabled))


def get_soft_device_placement():
    return _C.soft_device_placement()


# tf.function always runs its Python function eagerly here (gpuaccel/_function.py), so this
# setting is only recorded, for code that sets it and reads it back (TF's getter returns it).
_run_functions_eagerly = False


def run_functions_eagerly(run_eagerly):
    """TensorFlow's switch to run ``tf.function`` bodies eagerly: they always are here."""
    global _run_functions_eagerly
    _run_functions_eagerly = bool(run_eagerly)


def functions_run_eagerly():
    """The value given to ``run_functions_eagerly`` (False until then), as TensorFlow answers."""
    return _run_functions_eagerly


# TensorFlow's older names of the two, still exported.
experimental_run_functions_eagerly = run_functions_eagerly
experimental_functions_run_eagerly = functions_run_eagerly


# tf.config.experimental still carries the older spellings of these calls.
experimental.list_physical_devices = list_physical_devices
experimental.list_logical_devices = list_logical_devices
experimental.get_visible_devices = get_visible_devices
experimental.set_visible_devices = set_visible_devices
experimental.set_virtual_device_configuration = set_logical_device_configuration
experimental.get_virtual_device_configuration = get_logical_device_configuration
experimental.set_logical_device_configuration = set_logical_device_configuration
experimental.get_logical_device_configuration = get_logical_device_configuration

# Remote eager execution (ops of this program placed on other hosts' devices, TPU hosts
# included) is not something gpuaccel does: each worker runs its own copy of the program.
_REMOTE_EAGER = ("tf.distribute.MultiWorkerMirroredStrategy (one process per worker, each "
                 "running the program, configured by TF_CONFIG; gpuaccel has no remote eager "
                 "execution)")
__getattr__ = _unsupported.module_getattr(__name__, "tf.config", {
    "experimental_connect_to_cluster": _REMOTE_EAGER,
    "experimental_connect_to_host": _REMOTE_EAGER,
})
