"""``MultiWorkerMirroredStrategy``: the same program runs in one process per worker; each
worker's replicas (its GPUs, or its CPU) train on their rows of every global batch and the
gradients are summed across all workers' replicas.

The workers come from ``TF_CONFIG`` (``{"cluster": {"worker": [...]}, "task": {"type":
"worker", "index": i}}``), as in TensorFlow; with no TF_CONFIG there is one worker, this
process, and the strategy behaves as MirroredStrategy on its local devices."""
import json
import os

from .. import config as _config
from ._strategy import Strategy


def _cluster_from_tf_config():
    """(number of workers, this worker's index) from TF_CONFIG; (1, 0) without it."""
    text = os.environ.get("TF_CONFIG", "")
    if not text.strip():
        return 1, 0
    try:
        parsed = json.loads(text)
    except ValueError as error:
        raise ValueError(f"TF_CONFIG is not valid JSON ({error}): {text!r}") from None
    cluster = parsed.get("cluster", {}) if isinstance(parsed, dict) else {}
    workers = list(cluster.get("worker", [])) + list(cluster.get("chief", []))
    task = parsed.get("task", {}) if isinstance(parsed, dict) else {}
    index = task.get("index", 0)
    if not isinstance(index, int) or not 0 <= index < max(1, len(workers)):
        raise ValueError(f"TF_CONFIG's task index {index!r} is not a worker of the cluster "
                         f"{workers}")
    return max(1, len(workers)), index


class MultiWorkerMirroredStrategy(Strategy):
    """``tf.distribute.MultiWorkerMirroredStrategy()`` (also under ``experimental``)."""

    def __init__(self, cluster_resolver=None, communication_options=None):
        if cluster_resolver is not None:
            raise NotImplementedError("cluster_resolver is not supported; describe the cluster "
                                      "with the TF_CONFIG environment variable")
        workers, self._worker_index = _cluster_from_tf_config()
        if workers > 1:
            raise NotImplementedError(
                f"TF_CONFIG describes {workers} workers, but this build has no engine that "
                "connects worker processes yet (docs/distribute.md); run one worker, or use "
                "MirroredStrategy on this machine's devices")
        gpus = _config.list_logical_devices("GPU")
        super().__init__([d.name for d in gpus] or ["/device:CPU:0"], num_workers=workers)

    @property
    def worker_index(self):
        return self._worker_index
