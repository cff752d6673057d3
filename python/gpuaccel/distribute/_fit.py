"""How ``Model.fit`` trains under a strategy (docs/distribute.md, "How fit runs replicas").

Replica 0 is the user's model, optimizer and device; every other replica of this process gets
its own copy of the model (rebuilt from its config, on the replica's device, with replica 0's
weights) and of the optimizer, made once and kept, so no weights move per step. The C++
``ReplicatedTrainer`` runs the replicas on their threads and sums their gradients."""
import os

from .. import _C
from .._placement import device as _device
from ..config import threading as _threading
from . import _strategy

# A replica that does not reach the all-reduce within this many seconds makes the others fail
# with an error naming it, instead of hanging the fit.
COLLECTIVE_TIMEOUT_SECONDS = 300.0

# The switches of the gradient all-reduce (docs/distribute.md, "Overlap with the backward
# pass"); every worker of a job must see the same values.
OVERLAP_VARIABLE = "GPUACCEL_ALL_REDUCE_OVERLAP"
BUCKET_BYTES_VARIABLE = "GPUACCEL_ALL_REDUCE_BUCKET_BYTES"


def all_reduce_options(strategy=None):
    """(overlap, bucket_bytes) for fit's gradient all-reduce: overlapped with the backward
    pass in buckets of 256 KiB unless GPUACCEL_ALL_REDUCE_OVERLAP=0 (one blocking call after
    the backward pass); the bucket size comes from GPUACCEL_ALL_REDUCE_BUCKET_BYTES, else the
    strategy's ``CommunicationOptions(bytes_per_pack=...)`` when not 0."""
    switch = os.environ.get(OVERLAP_VARIABLE, "1").strip().lower()
    switches = {"1": True, "true": True, "on": True, "0": False, "false": False, "off": False}
    if switch not in switches:
        raise ValueError(f"{OVERLAP_VARIABLE}={switch!r}: expected 1 (overlap the all-reduce "
                         "with the backward pass, the default) or 0 (all-reduce after it)")
    bucket_bytes = _C.DEFAULT_ALL_REDUCE_BUCKET_BYTES
    options = getattr(strategy, "communication_options", None)
    if options is not None and options.bytes_per_pack:
        bucket_bytes = options.bytes_per_pack
    text = os.environ.get(BUCKET_BYTES_VARIABLE)
    if text is not None:
        bucket_bytes = int(text) if text.strip().isdigit() else 0
        if not 0 < bucket_bytes < 2**63:  # past int64 the trainer's binding refused it
            raise ValueError(f"{BUCKET_BYTES_VARIABLE}={text!r}: expected a positive number of "
                             f"bytes (default {_C.DEFAULT_ALL_REDUCE_BUCKET_BYTES})")
    return switches[switch], bucket_bytes


def strategy_at_compile(model):
    """The strategy ``model`` trains under, decided as ``compile`` runs: the open scope's, else
    the one the model was created in. A built model created outside the open scope is TF's
    ValueError (its variables are not mirrored)."""
    created = getattr(model, "_created_in_strategy", None)
    if not _strategy.has_strategy():
        return created
    current = _strategy.get_strategy()
    if created is not current and model.built:
        weights = model.weights
        variable = weights[0] if weights else model
        raise ValueError(
            f"Variable ({variable!r}) was not created in the distribution strategy scope of "
            f"({current}). It is most likely due to not all layers or the model or optimizer "
            "being created outside the distribution strategy scope. Try to make sure your code "
            "looks similar to the following.\nwith strategy.scope():\n  model=_create_model()\n"
            "  model.compile(...)")
    return current


def uses_replicas(strategy):
    return strategy is not None and strategy.num_replicas_in_sync > 1


class ReplicatedFit:
    """What fit calls per batch under a strategy: ``train_step``, ``reset_metrics``,
    ``results`` (this process's replicas) and ``results_across_workers`` (epoch ends). The
    replicas' engine follows their devices: in-process for logical CPUs, NCCL for GPUs."""

    def __init__(self, model, strategy):
        devices = list(strategy.worker_devices)
        collective = getattr(strategy, "collective", None)
        graphs, optimizers, metric_lists = [], [], []
        self._clones = []
        for r, device in enumerate(devices):
            if r == 0:
                replica, optimizer = model, model.optimizer
            else:
                replica, optimizer = _clone_model(model, device), _clone_optimizer(model.optimizer)
                self._clones.append(replica)
            graphs.append(replica._graph())
            optimizers.append(optimizer._cpp)
            metric_lists.append([_clone_metric(m) for m in model.compiled_metrics])
        threads = _threads_per_replica(len(devices))
        overlap, bucket_bytes = all_reduce_options(strategy)
        if collective is not None:  # one replica per worker, joined through Gloo or NCCL
            self._cpp = _C.ReplicatedTrainer(graphs[0], optimizers[0], metric_lists[0],
                                             model.loss._cpp, threads, collective,
                                             overlap=overlap, bucket_bytes=bucket_bytes)
        else:
            self._cpp = _C.ReplicatedTrainer(graphs, optimizers, metric_lists, model.loss._cpp,
                                             threads, COLLECTIVE_TIMEOUT_SECONDS,
                                             overlap=overlap, bucket_bytes=bucket_bytes)
        self.strategy = strategy
        self.optimizer = model.optimizer

    def start(self):
        """Called as each fit starts: weights set between fits (set_weights, load_weights,
        a restored checkpoint) reach every replica."""
        self._cpp.sync_weights()

    def agree_on_seed(self, seed):
        """fit's shuffling seed, the same in every worker."""
        broadcast = getattr(self.strategy, "broadcast_seed", None)
        return seed if broadcast is None else broadcast(seed)

    def train_step(self, xs, y):
        self._cpp.train_step(xs, y)

    def reset_metrics(self):
        self._cpp.reset_metrics()

    def results(self):
        return self._cpp.results()

    def results_across_workers(self):
        return self._cpp.results_across_workers()


def replicated_fit(model, strategy):
    """The model's ReplicatedFit for ``strategy``, made on first use and kept until compile."""
    current = getattr(model, "_replicated_fit", None)
    if current is None or current.strategy is not strategy or current.optimizer is not model.optimizer:
        current = ReplicatedFit(model, strategy)
        model._replicated_fit = current
    return current


def _threads_per_replica(replicas):
    """Each CPU replica's OpenMP team: an equal share of the intra-op threads (or cores)."""
    total = _threading.get_intra_op_parallelism_threads() or os.cpu_count() or 1
    return max(1, total // replicas)


def _clone_model(model, device):
    from ..keras import _keras_archive
    try:
        config = _keras_archive._model_config(model)
    except NotImplementedError:
        raise NotImplementedError(
            f"MirroredStrategy mirrors Sequential and functional models; {type(model).__name__} "
            "is subclassed, and gpuaccel cannot make its copy per replica") from None
    with _device(device):
        clone = _keras_archive.model_from_config(config)
        clone.set_weights(model.get_weights())
    return clone


def _clone_optimizer(optimizer):
    from ..keras import optimizers
    return optimizers.deserialize(optimizers.serialize(optimizer))


def _clone_metric(metric):
    kind = getattr(metric, "_kind", None)
    if kind is None:
        raise NotImplementedError(f"metric {metric.name!r} cannot be mirrored across replicas")
    return _C.Metric(metric.name, kind, float(getattr(metric, "threshold", 0.5)))
