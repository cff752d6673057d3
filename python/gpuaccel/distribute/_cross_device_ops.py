"""``tf.distribute.CrossDeviceOps`` and its three implementations, for
``MirroredStrategy(cross_device_ops=...)``: how the replicas of one process sum their gradients.

gpuaccel's engine follows the replicas' devices (docs/distribute.md): NCCL for GPUs, and for
logical CPUs a reduction in the memory they share. So the choice TF offers is honoured where it
names that engine, and refused, saying why, where it names one gpuaccel does not have; nothing
is accepted and then ignored:

- ``NcclAllReduce()``: GPU replicas (what they use anyway); refused on CPU replicas, as NCCL
  cannot reduce host memory.
- ``ReductionToOneDevice()``: CPU replicas (their reduction runs in the one memory they share),
  and logical GPUs split from one physical GPU (NCCL refuses two ranks on one device, so, as
  TensorFlow does for virtual GPUs, they reduce through one place: host memory); refused on
  GPUs of their own (gpuaccel has no copy-to-one-GPU path), and so are its ``reduce_to_device``
  and ``accumulation_fn``. ``NcclAllReduce()`` is refused on logical GPUs sharing a GPU.
- ``HierarchicalCopyAllReduce()``: TF's copy tree for DGX-1 machines; not implemented.
- ``num_packs``: TF's count of packs; gpuaccel packs gradients in buckets of bytes
  (``GPUACCEL_ALL_REDUCE_BUCKET_BYTES``), so only the default, 1, is accepted.

With a single replica nothing crosses devices and any of them is accepted (as in TF).
"""
from .._int_range import check_int


class CrossDeviceOps:
    """``tf.distribute.CrossDeviceOps``: the base of the cross-device reduction algorithms."""

    def __repr__(self):
        return f"{type(self).__name__}()"


class _PackedAllReduce(CrossDeviceOps):
    def __init__(self, num_packs=1):
        # TF: "a non-negative integer ... ValueError if num_packs is negative"
        self.num_packs = check_int(num_packs, "num_packs", 0)

    def __repr__(self):
        return f"{type(self).__name__}(num_packs={self.num_packs})"


class NcclAllReduce(_PackedAllReduce):
    """``tf.distribute.NcclAllReduce(num_packs=1)``: NVIDIA NCCL's all-reduce."""


class HierarchicalCopyAllReduce(_PackedAllReduce):
    """``tf.distribute.HierarchicalCopyAllReduce(num_packs=1)``: TF's reduction along the GPU
    links of a DGX-1 (accepted here only with one replica; see the module's note)."""


class ReductionToOneDevice(CrossDeviceOps):
    """``tf.distribute.ReductionToOneDevice(reduce_to_device=None, accumulation_fn=None)``:
    copy every replica's value to one device, sum there, and copy the sum back."""

    def __init__(self, reduce_to_device=None, accumulation_fn=None):
        if accumulation_fn is not None and not callable(accumulation_fn):
            raise TypeError(f"accumulation_fn must be a function such as tf.math.add_n, got "
                            f"{accumulation_fn!r}")
        self.reduce_to_device = reduce_to_device
        self.accumulation_fn = accumulation_fn

    def __repr__(self):
        given = [f"{k}={v!r}" for k, v in (("reduce_to_device", self.reduce_to_device),
                                            ("accumulation_fn", self.accumulation_fn))
                 if v is not None]
        return f"ReductionToOneDevice({', '.join(given)})"


_CHOICES = ("None (the engine that follows the devices), "
            "gpuaccel.distribute.NcclAllReduce() for GPU replicas or "
            "gpuaccel.distribute.ReductionToOneDevice() for CPU replicas")


def check_cross_device_ops(cross_device_ops, device_kind, replicas, gpus_share_a_device=False):
    """``cross_device_ops`` when gpuaccel runs what it names for ``replicas`` replicas on
    ``device_kind`` ('CPU' or 'GPU'; ``gpus_share_a_device``: logical GPUs of which two live on
    one physical GPU); otherwise a TypeError (not a CrossDeviceOps) or a ValueError /
    NotImplementedError saying what does not apply and what would."""
    if cross_device_ops is None:
        return None
    if not isinstance(cross_device_ops, CrossDeviceOps):
        where = type(cross_device_ops).__module__.split(".")[0]
        hint = (" (a TensorFlow object: use gpuaccel.distribute's class of the same name)"
                if where in ("tensorflow", "keras") else "")
        raise TypeError(f"cross_device_ops must be a tf.distribute.CrossDeviceOps instance or "
                        f"None, got {type(cross_device_ops).__name__} {cross_device_ops!r}"
                        f"{hint}; use {_CHOICES}")
    if replicas == 1:
        return cross_device_ops  # nothing crosses devices
    name = type(cross_device_ops).__name__
    if isinstance(cross_device_ops, HierarchicalCopyAllReduce):
        raise NotImplementedError(f"cross_device_ops={cross_device_ops!r}: TF's hierarchical "
                                  f"copy (for DGX-1 GPU links) is not implemented; use "
                                  f"{_CHOICES}")
    if isinstance(cross_device_ops, NcclAllReduce):
        if device_kind != "GPU":
            raise ValueError(f"cross_device_ops={cross_device_ops!r} needs GPU replicas, but the "
                             f"{replicas} replicas are {device_kind}s (NCCL cannot reduce host "
                             f"memory); use {_CHOICES}")
        if gpus_share_a_device:
            raise ValueError(f"cross_device_ops={cross_device_ops!r}: these {replicas} replicas "
                             "are logical GPUs split from one physical GPU, and NCCL refuses "
                             "two ranks on one device ('Duplicate GPU detected'); use None or "
                             "ReductionToOneDevice() (their gradients are summed through host "
                             "memory, as TensorFlow reduces virtual GPUs to one device)")
        if cross_device_ops.num_packs != 1:
            raise NotImplementedError(
                f"cross_device_ops={cross_device_ops!r}: gpuaccel packs gradients in buckets "
                "of bytes, not in a number of packs; leave num_packs at 1 and set "
                "GPUACCEL_ALL_REDUCE_BUCKET_BYTES for the bucket size")
        return cross_device_ops
    if isinstance(cross_device_ops, ReductionToOneDevice):
        if device_kind != "CPU" and not gpus_share_a_device:
            raise NotImplementedError(f"cross_device_ops={name}() on GPU replicas is not "
                                      f"implemented: GPU replicas reduce with NCCL; use "
                                      f"None or NcclAllReduce()")
        if cross_device_ops.reduce_to_device is not None or \
                cross_device_ops.accumulation_fn is not None:
            raise NotImplementedError(
                f"cross_device_ops={cross_device_ops!r}: reduce_to_device and accumulation_fn "
                "are not implemented (the replicas sum in host memory, element by element in "
                f"replica order); use {name}() with no arguments")
        return cross_device_ops
    raise NotImplementedError(f"cross_device_ops={cross_device_ops!r}: a CrossDeviceOps of "
                              f"one's own is not supported; use {_CHOICES}")
