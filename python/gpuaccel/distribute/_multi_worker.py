"""``MultiWorkerMirroredStrategy``: the same program runs in one process per worker; each
worker's replica trains on its rows of every global batch and the gradients are summed across
all workers: through NCCL when the worker has a GPU (its first one), else through Gloo or, in
builds without it, MPI from ``pip install mpich`` (_cpu_engine; gpuaccel._C.collective,
docs/distribute.md).

The workers come from ``TF_CONFIG`` (``{"cluster": {"worker": [...]}, "task": {"type":
"worker", "index": i}}``) as in TensorFlow, or from mpirun's variables (the MPI engine's
workers are always started by mpiexec); with neither there is
one worker, this process. Creating the strategy joins the other workers (the chief serves the
rendezvous), as TensorFlow's does."""
import numpy as np

from .. import _C
from .. import config as _config
from .._tensor import tensor as _tensor
from .cluster_resolver import TFConfigClusterResolver
from ._communication_options import CommunicationOptions
from ._cpu_engine import create_cpu_collective
from ._strategy import Strategy


class MultiWorkerMirroredStrategy(Strategy):
    """``tf.distribute.MultiWorkerMirroredStrategy()`` (also under ``experimental``): one
    replica per worker process, on its first GPU or its CPU."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        if cluster_resolver is not None and not _reads_tf_config(cluster_resolver):
            raise NotImplementedError("only a TFConfigClusterResolver that reads TF_CONFIG as "
                                      "it is (no task_type/task_id of its own) is supported; "
                                      "describe the cluster with the TF_CONFIG environment "
                                      "variable (or run under mpirun)")
        self.cluster_resolver = cluster_resolver or TFConfigClusterResolver()
        if communication_options is not None and not isinstance(communication_options,
                                                                CommunicationOptions):
            raise ValueError("communication_options must be a "
                             "tf.distribute.experimental.CommunicationOptions, got "
                             f"{communication_options!r}")
        self.communication_options = communication_options or CommunicationOptions()
        self._cluster = _C.collective.cluster_spec_from_environment()
        self._collective = None
        gpus = _config.list_logical_devices("GPU")
        device = gpus[0].name if gpus else "/device:CPU:0"
        if self._cluster.world_size > 1:
            timeout = self.communication_options.timeout_seconds
            if gpus:  # one GPU per worker; the NCCL id travels through the chief's store
                self._collective = _C.collective.create_nccl(device, self._cluster, timeout)
            else:  # Gloo, or MPI from pip (_cpu_engine)
                self._collective = create_cpu_collective(self._cluster, timeout)
        super().__init__([device], num_workers=self._cluster.world_size)

    @property
    def worker_index(self):
        """This worker's rank (the chief, when TF_CONFIG names one, is 0)."""
        return self._cluster.rank

    @property
    def collective(self):
        """This worker's collective, Gloo, MPI or NCCL (None with one worker)."""
        return self._collective

    def _sum_across_workers(self, array, count):
        if self._collective is None:
            return array, count
        array = np.asarray(array, dtype=np.float32)
        flat = np.concatenate([array.reshape(-1), np.asarray([count], dtype=np.float32)])
        buffer = _tensor(flat, device=self.worker_devices[0])  # NCCL reduces device memory
        self._collective.all_reduce_sum([buffer])
        summed = buffer.numpy()
        return summed[:-1].reshape(array.shape), float(summed[-1])

    def broadcast_seed(self, seed):
        """Worker 0's ``seed`` on every worker: fit's shuffling must draw the same order in
        every process, or workers would take rows of different batches."""
        if self._collective is None:
            return seed
        buffer = _tensor(np.asarray([seed], dtype=np.int64), device=self.worker_devices[0])
        self._collective.broadcast([buffer], 0)
        return int(buffer.numpy()[0])


def _reads_tf_config(resolver):
    """Whether ``resolver`` says what TF_CONFIG says, which is what the collectives join."""
    plain = TFConfigClusterResolver()
    return isinstance(resolver, TFConfigClusterResolver) and \
        (resolver.task_type, resolver.task_id) == (plain.task_type, plain.task_id)
