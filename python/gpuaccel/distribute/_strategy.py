"""``tf.distribute.Strategy`` and what every strategy shares: the scope stack behind
``get_strategy``/``has_strategy`` (per thread, as TF's), ``run`` and ``reduce`` across the
replicas of this process, and ``experimental_distribute_dataset``. The subclasses say which
devices the replicas run on and how many workers take part."""
import collections
import contextlib
import threading

import numpy as np

from .._placement import device as _device
from .._tensor import tensor as _tensor
from ..errors import OutOfRangeError
from ._input import InputContext, InputOptions, InputReplicationMode
from ._strategy_extended import StrategyExtended
from ._values import PerReplica, ReduceOp, as_reduce_op, split_batch, to_numpy

_scopes = threading.local()


def _stack():
    if not hasattr(_scopes, "stack"):
        _scopes.stack = []
    return _scopes.stack


class ReplicaContext:
    """What ``tf.distribute.get_replica_context()`` returns inside ``strategy.run``."""

    def __init__(self, strategy, replica_id):
        self.strategy = strategy
        self.replica_id_in_sync_group = replica_id

    @property
    def num_replicas_in_sync(self):
        return self.strategy.num_replicas_in_sync


# ``tf.distribute.RunOptions``: TF's knobs for compiling ``run``'s function (dynamic batch sizes
# on TPUs, XLA options). gpuaccel runs ``fn`` eagerly, so they are accepted and change nothing.
RunOptions = collections.namedtuple(
    "RunOptions", ["experimental_enable_dynamic_batch_size",
                   "experimental_bucketizing_dynamic_shape", "experimental_xla_options"],
    defaults=(True, False, None))


class Strategy:
    """The base of every strategy. ``devices`` are this process's replica devices, one replica
    each; ``num_workers`` processes run the same program (MultiWorkerMirroredStrategy)."""

    def __init__(self, devices, num_workers=1):
        self._devices = tuple(devices)
        self._num_workers = int(num_workers)

    # ---- what the replicas are ----
    @property
    def num_replicas_in_sync(self):
        return len(self._devices) * self._num_workers

    @property
    def extended(self):
        """This strategy's ``tf.distribute.StrategyExtended``."""
        if getattr(self, "_extended", None) is None:
            self._extended = StrategyExtended(self)
        return self._extended

    @property
    def worker_devices(self):
        return self._devices

    @property
    def parameter_devices(self):
        return self._devices

    # ---- scope ----
    @contextlib.contextmanager
    def scope(self):
        """Models, optimizers and metrics created in the scope are mirrored on every replica
        and ``fit`` trains them data-parallel. Entering another strategy's scope inside it is
        TF's RuntimeError."""
        stack = _stack()
        if stack and stack[-1] is not self:
            raise RuntimeError(f"Mixing different tf.distribute.Strategy objects: {stack[-1]} is "
                               f"not {self}")
        stack.append(self)
        try:
            # Variables made in the scope live on replica 0's device (the user's model is
            # replica 0; fit makes the other replicas' copies on theirs).
            with _device(self._devices[0]):
                yield self
        finally:
            stack.pop()

    # ---- running functions per replica ----
    def run(self, fn, args=(), kwargs=None, options=None):
        """Calls ``fn`` once per replica of this process, on the replica's device, with each
        ``PerReplica`` argument replaced by that replica's value. Returns a ``PerReplica`` (or
        the single value with one replica). ``options`` (a ``RunOptions``) change nothing:
        ``fn`` runs eagerly."""
        kwargs = kwargs or {}
        results = []
        replicas = len(self._devices)
        for r, device in enumerate(self._devices):
            stack = _replica_contexts()
            stack.append(ReplicaContext(self, r))
            try:
                with _device(device):
                    results.append(fn(*[_select(a, r, replicas) for a in args],
                                      **{k: _select(v, r, replicas) for k, v in kwargs.items()}))
            finally:
                stack.pop()
        return results[0] if replicas == 1 else PerReplica(results)

    def experimental_local_results(self, value):
        """The values of ``value`` on this process's replicas, as a tuple."""
        if isinstance(value, PerReplica):
            return value.values
        return (value,)

    def reduce(self, reduce_op, value, axis):
        """Combines a per-replica value across replicas (and, with ``axis``, along that axis of
        every replica's value: ``MEAN`` then averages over all elements of every replica)."""
        op = as_reduce_op(reduce_op)
        if not isinstance(value, PerReplica):
            if self.num_replicas_in_sync > 1 and op is ReduceOp.SUM:
                raise ValueError(f"A non-DistributedValues value {value!r} cannot be reduced "
                                 f"with the given reduce op {op}.")
            value = PerReplica([value] * len(self._devices))
        arrays = [to_numpy(v) for v in value.values]
        count = len(arrays)
        if axis is not None:
            count = sum(a.shape[axis] for a in arrays)
            arrays = [a.sum(axis=axis) for a in arrays]
        total = arrays[0]
        for a in arrays[1:]:
            total = total + a  # replica order: the same summation order on every call
        total, count = self._sum_across_workers(total, count)
        if op is ReduceOp.MEAN:
            total = np.asarray(total, dtype=np.float32) / np.float32(count)
        total = np.asarray(total)
        return _tensor(total.astype(np.float32) if total.dtype == np.float64 else total)

    def _sum_across_workers(self, array, count):
        """``array`` and ``count`` summed over every worker (one worker: unchanged)."""
        return array, count

    # ---- input ----
    def experimental_distribute_dataset(self, dataset, options=None):
        """A dataset whose elements are ``PerReplica`` splits of ``dataset``'s global batches
        (``fit`` also accepts it and splits each batch itself)."""
        return DistributedDataset(dataset, self)

    def distribute_datasets_from_function(self, dataset_fn, options=None):
        """Calls ``dataset_fn(InputContext)`` once for this worker's input pipeline; the
        dataset it returns yields per-replica batches (size it with
        ``context.get_per_replica_batch_size``), and each step takes one batch per replica of
        this process, consecutive batches to consecutive replicas."""
        if options is not None and not isinstance(options, InputOptions):
            raise TypeError(f"options must be a tf.distribute.InputOptions, got {options!r}")
        if options is not None and \
                options.experimental_replication_mode is InputReplicationMode.PER_REPLICA:
            raise NotImplementedError("InputReplicationMode.PER_REPLICA is not supported: "
                                      "gpuaccel runs one input pipeline per worker (PER_WORKER)")
        context = InputContext(num_input_pipelines=self._num_workers,
                               input_pipeline_id=getattr(self, "worker_index", 0),
                               num_replicas_in_sync=self.num_replicas_in_sync)
        return DatasetsFromFunction(dataset_fn(context), self)

    experimental_distribute_datasets_from_function = distribute_datasets_from_function

    def __repr__(self):
        return (f"<gpuaccel.distribute.{type(self).__name__} replicas="
                f"{self.num_replicas_in_sync} devices={list(self._devices)}>")


def _select(arg, replica, replicas):
    if isinstance(arg, PerReplica):
        if len(arg) != replicas:
            raise ValueError(f"a PerReplica argument has {len(arg)} values but the strategy "
                             f"runs {replicas} replicas in this process")
        return arg.values[replica]
    return arg


class DistributedDataset:
    """``experimental_distribute_dataset``'s result: iterating yields each global batch split
    across this process's replicas."""

    def __init__(self, dataset, strategy):
        self._dataset = dataset
        self._strategy = strategy

    def __iter__(self):
        """A ``DistributedIterator`` over the per-replica splits."""
        return DistributedIterator(self._elements())

    def _elements(self):
        replicas = len(self._strategy.worker_devices)
        for element in self._dataset:
            if replicas == 1:
                yield element
            else:
                parts = split_batch(element, replicas)
                if isinstance(element, tuple):
                    yield tuple(PerReplica([p[i] for p in parts]) for i in range(len(element)))
                else:
                    yield PerReplica(parts)

    def reduce(self, initial_state, reduce_func):
        """``reduce_func(state, element)`` folded over the distributed elements, from
        ``initial_state`` (TF's ``DistributedDataset.reduce``)."""
        state = initial_state
        for element in self:
            state = reduce_func(state, element)
        return state

    def unwrap(self):
        """The dataset of global batches (what ``fit`` trains on)."""
        return self._dataset


class DistributedIterator:
    """``tf.distribute.DistributedIterator``: ``iter(distributed_dataset)``. ``next()`` ends
    with StopIteration, ``get_next()`` with TF's OutOfRangeError."""

    def __init__(self, elements):
        self._elements = elements

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._elements)

    def get_next(self):
        """The next distributed element; OutOfRangeError at the end, as TF's."""
        try:
            return next(self._elements)
        except StopIteration:
            raise OutOfRangeError("End of sequence") from None


class DatasetsFromFunction(DistributedDataset):
    """``distribute_datasets_from_function``'s result: its dataset's elements are already
    per-replica batches, so a step takes as many consecutive elements as this process has
    replicas. When the dataset runs out mid-step, the replicas left without a batch get an
    empty one (no rows), as TensorFlow's do."""

    def _elements(self):
        replicas = len(self._strategy.worker_devices)
        if replicas == 1:
            yield from self._dataset
            return
        group = []
        for element in self._dataset:
            group.append(element)
            if len(group) == replicas:
                yield _per_replica(group)
                group = []
        if group:
            empty = _first_rows(group[-1], 0)
            yield _per_replica(group + [empty] * (replicas - len(group)))

    def unwrap(self):
        replicas = len(self._strategy.worker_devices)
        if replicas != 1:
            raise NotImplementedError(
                "fit on a distribute_datasets_from_function dataset needs one replica per "
                f"process (this strategy has {replicas}); pass fit the global batches, or "
                "experimental_distribute_dataset(dataset)")
        return self._dataset


def _per_replica(elements):
    if isinstance(elements[0], tuple):
        return tuple(PerReplica([e[i] for e in elements]) for i in range(len(elements[0])))
    return PerReplica(elements)


def _first_rows(element, rows):
    if isinstance(element, tuple):
        return tuple(part[:rows] for part in element)
    return element[:rows]


def _replica_contexts():
    if not hasattr(_scopes, "replica"):
        _scopes.replica = []
    return _scopes.replica


class _DefaultStrategy(Strategy):
    """The strategy in effect outside every scope: one replica on the default device."""

    def __init__(self):
        super().__init__(["/device:CPU:0"])

    def run(self, fn, args=(), kwargs=None, options=None):
        return fn(*args, **(kwargs or {}))

    @contextlib.contextmanager
    def scope(self):
        yield self

    @property
    def extended(self):
        if getattr(self, "_extended", None) is None:
            self._extended = _DefaultExtended(self)
        return self._extended

    def experimental_distribute_dataset(self, dataset, options=None):
        """The dataset itself, as TF's default strategy returns it."""
        return dataset


class _DefaultExtended(StrategyExtended):
    """The default strategy's: TF answers its device questions with a RuntimeError."""

    @property
    def worker_devices(self):
        raise RuntimeError("worker_devices() method unsupported by default "
                           "tf.distribute.Strategy.")

    @property
    def parameter_devices(self):
        raise RuntimeError("parameter_devices() method unsupported by default "
                           "tf.distribute.Strategy.")


_default = None


def get_strategy():
    """The strategy whose scope is open on this thread, else the default strategy."""
    global _default
    stack = _stack()
    if stack:
        return stack[-1]
    if _default is None:
        _default = _DefaultStrategy()
    return _default


def experimental_set_strategy(strategy):
    """``tf.distribute.experimental_set_strategy``: makes ``strategy`` current on this thread
    as if its ``scope()`` stayed open (None closes it again). RuntimeError inside another
    ``scope()``, as TF's."""
    previous = getattr(_scopes, "set_scope", None)
    if previous is not None:
        _scopes.set_scope = None
        previous.__exit__(None, None, None)
    if has_strategy():
        raise RuntimeError("Must not be called inside a `tf.distribute.Strategy` scope.")
    if strategy is not None:
        scope = strategy.scope()
        scope.__enter__()
        _scopes.set_scope = scope


def has_strategy():
    """Whether a (non-default) strategy's scope is open on this thread."""
    return bool(_stack())


def in_cross_replica_context():
    """True in a strategy's scope outside ``strategy.run``; outside every scope the default
    replica context is current, so False there (as in TensorFlow)."""
    return has_strategy() and not _replica_contexts()


def get_replica_context():
    """Inside ``strategy.run``: the replica's context; in a scope outside ``run``: None (TF's
    cross-replica context); outside every scope: the default replica context."""
    contexts = _replica_contexts()
    if contexts:
        return contexts[-1]
    if has_strategy():
        return None
    return ReplicaContext(get_strategy(), 0)
