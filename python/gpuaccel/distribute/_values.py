"""What ``strategy.run`` returns and distributed datasets yield: one value per replica
(TensorFlow's ``PerReplica``, a ``DistributedValues``), and ``ReduceOp``, the two ways
``strategy.reduce`` combines them."""
import enum

import numpy as np


class ReduceOp(enum.Enum):
    """``tf.distribute.ReduceOp``: ``SUM`` or ``MEAN`` across replicas."""
    SUM = "SUM"
    MEAN = "MEAN"


def as_reduce_op(op):
    """``ReduceOp.SUM`` / ``"SUM"`` / ``"sum"`` as a ReduceOp; TF's ValueError otherwise."""
    if isinstance(op, ReduceOp):
        return op
    if isinstance(op, str) and op.upper() in ReduceOp.__members__:
        return ReduceOp[op.upper()]
    raise ValueError(f"{op!r} is not a valid ReduceOp")


class DistributedValues:
    """``tf.distribute.DistributedValues``: the base class of values that hold one value per
    replica (TF's public class has no methods of its own: read the values with
    ``strategy.experimental_local_results``). gpuaccel's only kind is ``PerReplica``: variables
    made in a strategy's scope stay plain Variables, which ``fit`` mirrors itself."""


class PerReplica(DistributedValues):
    """One value per replica, in replica order (``.values``), as TF's ``PerReplica``."""

    def __init__(self, values):
        self.values = tuple(values)

    def __len__(self):
        return len(self.values)

    def __repr__(self):
        body = "\n".join(f"  {i}: {v!r}" for i, v in enumerate(self.values))
        return "PerReplica:{\n" + body + "\n}"


def split_batch(value, replicas):
    """A global batch split along axis 0 into ``replicas`` parts, as TF's distributed dataset
    splits it: the first parts get one row more when it does not divide (10 rows on 4 replicas:
    3, 3, 2, 2). Nested tuples/lists/dicts split element-wise."""
    if isinstance(value, tuple):
        parts = [split_batch(v, replicas) for v in value]
        return [tuple(p[r] for p in parts) for r in range(replicas)]
    if isinstance(value, list):
        parts = [split_batch(v, replicas) for v in value]
        return [[p[r] for p in parts] for r in range(replicas)]
    if isinstance(value, dict):
        parts = {k: split_batch(v, replicas) for k, v in value.items()}
        return [{k: p[r] for k, p in parts.items()} for r in range(replicas)]
    rows = int(value.shape[0])
    base, extra = divmod(rows, replicas)
    out, start = [], 0
    for r in range(replicas):
        stop = start + base + (1 if r < extra else 0)
        out.append(value[start:stop])
        start = stop
    return out


def to_numpy(value):
    """A replica's value as a NumPy array (gpuaccel tensors, NumPy arrays, Python numbers).
    A replica's loss that a GradientTape recorded still requires grad; its value is read
    detached (strategy.reduce's result is a new tensor, as in TF)."""
    if hasattr(value, "detach"):
        value = value.detach()
    if hasattr(value, "numpy"):
        return np.asarray(value.numpy())
    return np.asarray(value)
