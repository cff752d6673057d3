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
        if collective is not None and devices[0].split(":")[-2] != "CPU":
            raise NotImplementedError(
                f"MultiWorkerMirroredStrategy joins workers through Gloo, which reduces host "
                f"memory; this worker's replica is on {devices[0]}. Hide the GPUs "
                "(tf.config.set_visible_devices([], 'GPU')) to train the workers on their CPUs")
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
        if collective is not None:  # one replica per worker, joined through Gloo
            self._cpp = _C.ReplicatedTrainer(graphs[0], optimizers[0], metric_lists[0],
                                             model.loss._cpp, threads, collective)
        else:
            self._cpp = _C.ReplicatedTrainer(graphs, optimizers, metric_lists, model.loss._cpp,
                                             threads, COLLECTIVE_TIMEOUT_SECONDS)
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
