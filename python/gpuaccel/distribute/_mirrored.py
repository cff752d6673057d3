"""``MirroredStrategy`` and ``OneDeviceStrategy``: replicas in this process, one per device.

MirroredStrategy's default devices are every GPU or, with none, every logical CPU: TensorFlow
uses only CPU:0 there, but a machine split with ``set_logical_device_configuration`` into two
logical CPUs is how the course runs two replicas without GPUs (each replica thread then gets an
equal share of the cores).

Logical GPUs split from one physical GPU (``set_logical_device_configuration`` on a one-GPU
Colab) cannot be NCCL ranks: NCCL refuses two ranks on one device. Their gradients are summed
through host memory by the in-process engine instead, as TensorFlow falls back to
ReductionToOneDevice for virtual GPUs (docs/distribute.md)."""
from .. import _C
from .. import config as _config
from .._placement import device as _device
from ._cross_device_ops import check_cross_device_ops
from ._strategy import Strategy


def _device_name(d):
    """'/device:CPU:1' for any spelling gpuaccel.device accepts (a LogicalDevice too)."""
    return _device(d).name


def _share_a_physical_gpu(names):
    """True when two of the GPU ``names`` are logical devices of the same physical GPU."""
    physical = {d["name"]: d["physical_index"] for d in _C.logical_devices("GPU")}
    indices = [physical[n] for n in names if n in physical]
    return len(set(indices)) < len(indices)


def _default_devices():
    gpus = _config.list_logical_devices("GPU")
    if gpus:
        return [d.name for d in gpus]
    return [d.name for d in _config.list_logical_devices("CPU")]


def _cpu_for_empty_device_list():
    """TensorFlow mirrors onto the CPU, one replica, when given no devices: so
    ``MirroredStrategy(tf.config.list_logical_devices('GPU'))`` runs on a machine without a
    GPU. Only the first logical CPU, as TF (its default list spans every logical CPU here)."""
    return [_config.list_logical_devices("CPU")[0].name]


class MirroredStrategy(Strategy):
    """``tf.distribute.MirroredStrategy(devices=None, cross_device_ops=None)``: one replica per
    device of this process, weights mirrored on each, gradients summed across replicas every
    step (``cross_device_ops``: _cross_device_ops.py says which are honoured)."""

    def __init__(self, devices=None, cross_device_ops=None):
        if devices is None:
            names = _default_devices()
        else:
            if isinstance(devices, str) or not hasattr(devices, "__iter__"):
                raise ValueError(f"devices must be a list of device names such as "
                                 f"['/gpu:0', '/gpu:1'], got {devices!r}")
            names = [_device_name(d) for d in devices]
            if not names:
                names = _cpu_for_empty_device_list()
            if len(set(names)) != len(names):
                raise ValueError(f"devices must be distinct, got {list(devices)!r}")
            _check_devices_exist(names)
        kinds = {n.split(":")[-2] for n in names}
        if len(kinds) > 1:
            raise ValueError(f"MirroredStrategy replicas must all be GPUs or all CPUs, got "
                             f"{names}")
        # honoured where it names the engine the devices use, refused where it names another
        kind = kinds.pop()
        shared = kind == "GPU" and _share_a_physical_gpu(names)
        self._cross_device_ops = check_cross_device_ops(cross_device_ops, kind, len(names),
                                                        gpus_share_a_device=shared)
        super().__init__(names)


class OneDeviceStrategy(Strategy):
    """``tf.distribute.OneDeviceStrategy(device)``: one replica; variables and ops on that
    device."""

    def __init__(self, device):
        name = _device_name(device)
        _check_devices_exist([name])
        super().__init__([name])


def _check_devices_exist(names):
    known = {d.name for d in _config.list_logical_devices()}
    for name in names:
        if name not in known:
            raise ValueError(f"device {name!r} does not exist; the logical devices are "
                             f"{sorted(known)}")
