"""What ``distribute_datasets_from_function`` hands the dataset function (``InputContext``:
how many input pipelines there are, which one this is, how many replicas share a global
batch) and the options of the distributed input calls (``InputOptions``), with TensorFlow's
fields and defaults."""
import collections
import enum

__all__ = ["InputContext", "InputOptions", "InputReplicationMode"]


class InputReplicationMode(enum.Enum):
    """One input pipeline per worker (the default) or per replica."""
    PER_WORKER = "PER_WORKER"
    PER_REPLICA = "PER_REPLICA"


class InputOptions(collections.namedtuple("InputOptions", [
        "experimental_fetch_to_device", "experimental_replication_mode",
        "experimental_place_dataset_on_device", "experimental_per_replica_buffer_size"])):
    """``tf.distribute.InputOptions``. gpuaccel places each batch on its replica's device
    whatever the fetch and placement options say (fit uploads on a copy stream)."""
    __slots__ = ()

    def __new__(cls, experimental_fetch_to_device=None,
                experimental_replication_mode=InputReplicationMode.PER_WORKER,
                experimental_place_dataset_on_device=False,
                experimental_per_replica_buffer_size=1):
        if experimental_fetch_to_device is None:
            experimental_fetch_to_device = True
        return super().__new__(cls, experimental_fetch_to_device, experimental_replication_mode,
                               experimental_place_dataset_on_device,
                               experimental_per_replica_buffer_size)


class InputContext:
    """``tf.distribute.InputContext``: the dataset function's view of the distribution."""

    def __init__(self, num_input_pipelines=1, input_pipeline_id=0, num_replicas_in_sync=1):
        self._num_input_pipelines = num_input_pipelines
        self._input_pipeline_id = input_pipeline_id
        self._num_replicas_in_sync = num_replicas_in_sync

    @property
    def num_replicas_in_sync(self):
        """Replicas that train on one global batch, across every worker."""
        return self._num_replicas_in_sync

    @property
    def input_pipeline_id(self):
        """This pipeline's index, in ``[0, num_input_pipelines)`` (the worker's index)."""
        return self._input_pipeline_id

    @property
    def num_input_pipelines(self):
        return self._num_input_pipelines

    def get_per_replica_batch_size(self, global_batch_size):
        """``global_batch_size`` split over the replicas; it must divide evenly."""
        if global_batch_size % self._num_replicas_in_sync != 0:
            raise ValueError(f"The `global_batch_size` {global_batch_size!r} is not divisible "
                             f"by `num_replicas_in_sync` {self._num_replicas_in_sync!r} ")
        return global_batch_size // self._num_replicas_in_sync

    def __str__(self):
        return (f"tf.distribute.InputContext(input pipeline id {self._input_pipeline_id}, "
                f"total: {self._num_input_pipelines})")
