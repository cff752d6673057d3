"""``tf.distribute.experimental.CommunicationOptions``: how MultiWorkerMirroredStrategy's
collectives run. ``bytes_per_pack`` is the gradient bucket size of the all-reduce overlapped
with the backward pass (0: gpuaccel's default, 256 KiB); ``timeout_seconds`` bounds the
rendezvous and every collective (None: GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS or 120 s);
``implementation`` is TF's hint: gpuaccel picks NCCL for GPU workers and Gloo for CPU ones."""
import enum

from .._int_range import check_int


class CommunicationImplementation(enum.Enum):
    """TF's ``tf.distribute.experimental.CommunicationImplementation``."""
    AUTO = "AUTO"
    RING = "RING"
    NCCL = "NCCL"


class CommunicationOptions:
    """``tf.distribute.experimental.CommunicationOptions(bytes_per_pack=0,
    timeout_seconds=None, implementation=CommunicationImplementation.AUTO)``."""

    def __init__(self, bytes_per_pack=0, timeout_seconds=None,
                 implementation=CommunicationImplementation.AUTO):
        bytes_per_pack = check_int(bytes_per_pack, "bytes_per_pack", 0)  # the trainer's int64
        if timeout_seconds is not None and (isinstance(timeout_seconds, bool) or
                                            not isinstance(timeout_seconds, (int, float)) or
                                            not timeout_seconds > 0):
            raise ValueError(f"timeout_seconds must be a positive number of seconds or None, "
                             f"got {timeout_seconds!r}")
        if isinstance(implementation, str):
            try:
                implementation = CommunicationImplementation[implementation.upper()]
            except KeyError:
                implementation = None
        if not isinstance(implementation, CommunicationImplementation):
            raise ValueError(f"implementation must be one of AUTO, RING, NCCL "
                             f"(tf.distribute.experimental.CommunicationImplementation), "
                             f"got {implementation!r}")
        self.bytes_per_pack = bytes_per_pack
        self.timeout_seconds = timeout_seconds
        self.implementation = implementation

    def __repr__(self):
        return (f"CommunicationOptions(bytes_per_pack={self.bytes_per_pack}, "
                f"timeout_seconds={self.timeout_seconds}, implementation={self.implementation})")
