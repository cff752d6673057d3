"""The device records of ``tf.config`` (namedtuples, as in TensorFlow) and their conversions
to and from the ``(device_type, index)`` tuples the C++ registry speaks."""
import collections

from .. import _C


class PhysicalDevice(collections.namedtuple("PhysicalDevice", ["name", "device_type"])):
    """A device found on this machine: ``PhysicalDevice(name='/physical_device:GPU:0', device_type='GPU')``."""
    __slots__ = ()


class LogicalDevice(collections.namedtuple("LogicalDevice", ["name", "device_type"])):
    """A device the runtime places ops on: ``LogicalDevice(name='/device:GPU:0', device_type='GPU')``."""
    __slots__ = ()


class LogicalDeviceConfiguration(collections.namedtuple(
        "LogicalDeviceConfiguration",
        ["memory_limit", "experimental_priority", "experimental_device_ordinal"])):
    """One logical device to create on a physical one; ``memory_limit`` is in MB."""
    __slots__ = ()

    def __new__(cls, memory_limit=None, experimental_priority=None,
                experimental_device_ordinal=None):
        # the core keeps the limit in int64 and the other two in int32
        for name, value, bits in (("memory_limit", memory_limit, 64),
                                  ("experimental_priority", experimental_priority, 32),
                                  ("experimental_device_ordinal", experimental_device_ordinal,
                                   32)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not -2**(bits - 1) <= value < 2**(bits - 1)):
                what = "an integer number of megabytes" if name == "memory_limit" else \
                    "an integer"
                raise ValueError(f"{name} must be {what} (int{bits}) or None, got {value!r}")
        return super().__new__(cls, memory_limit, experimental_priority,
                               experimental_device_ordinal)


def physical_device_from_tuple(t):
    device_type, index = t
    return PhysicalDevice(name=f"/physical_device:{device_type}:{index}", device_type=device_type)


def logical_device_from_record(record):
    return LogicalDevice(name=record["name"], device_type=record["device_type"])


def as_physical_device_tuple(device, api):
    """``PhysicalDevice`` -> ``('GPU', 0)``; anything else is TF's "Unrecognized device" error,
    with the devices that would have been accepted."""
    if isinstance(device, PhysicalDevice):
        device_type, index = _C.parse_device_name(device.name)
        if index is not None and device_type == device.device_type:
            return (device_type, index)
    known = [f"/physical_device:{t}:{i}" for t, i in _C.physical_devices(None)]
    raise ValueError(
        f"Unrecognized device: {device!r}. {api} expects a PhysicalDevice from "
        f"gpuaccel.config.list_physical_devices(); this machine has {known}")
