"""``tf.distribute``: data-parallel training with TensorFlow's names.

``MirroredStrategy`` runs one replica per device of this process (every GPU, or every logical
CPU); ``MultiWorkerMirroredStrategy`` one process per worker (TF_CONFIG). Models and optimizers
created in ``strategy.scope()`` are mirrored, and ``fit`` splits each global batch across the
replicas and sums their gradients (docs/distribute.md)::

    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        model = keras.Sequential([...])
        model.compile(...)
    model.fit(x, y, batch_size=64)
"""
from .. import _unsupported
from . import cluster_resolver, experimental
from ._cross_device_ops import (CrossDeviceOps, HierarchicalCopyAllReduce, NcclAllReduce,
                                ReductionToOneDevice)
from ._idle_gpus import idle_gpus_message
from ._input import InputContext, InputOptions, InputReplicationMode
from ._mirrored import MirroredStrategy, OneDeviceStrategy
from ._multi_worker import MultiWorkerMirroredStrategy
from ._strategy import (DistributedDataset, DistributedIterator, ReplicaContext, RunOptions,
                        Strategy, experimental_set_strategy, get_replica_context, get_strategy,
                        has_strategy, in_cross_replica_context)
from ._strategy_extended import StrategyExtended
from ._values import DistributedValues, PerReplica, ReduceOp

__all__ = [
    "MirroredStrategy", "MultiWorkerMirroredStrategy", "OneDeviceStrategy", "Strategy",
    "ReduceOp", "PerReplica", "DistributedDataset", "ReplicaContext", "get_strategy",
    "has_strategy", "get_replica_context", "in_cross_replica_context", "experimental",
    "idle_gpus_message", "CrossDeviceOps", "NcclAllReduce", "HierarchicalCopyAllReduce",
    "ReductionToOneDevice", "cluster_resolver", "InputContext", "InputOptions",
    "InputReplicationMode", "DistributedValues", "DistributedIterator", "StrategyExtended",
    "RunOptions", "experimental_set_strategy",
]

# Parameter-server training (variables on server tasks, workers driven by a coordinator) is not
# something gpuaccel does: its multi-worker training is all-reduce.
_PARAMETER_SERVERS = ("MultiWorkerMirroredStrategy (all-reduce data parallelism across "
                      "workers, configured by TF_CONFIG; gpuaccel has no parameter servers)")
__getattr__ = _unsupported.module_getattr(__name__, "tf.distribute", {
    "ParameterServerStrategy": _PARAMETER_SERVERS,
    "Server": _PARAMETER_SERVERS,
    "coordinator": _PARAMETER_SERVERS,
})
