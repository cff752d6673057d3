"""``tf.distribute.cluster_resolver``: where a multi-worker program learns its cluster (the
jobs and addresses) and its own place in it (task type and index).

``TFConfigClusterResolver`` reads the ``TF_CONFIG`` environment variable each time it is
asked, as TensorFlow's does, so it agrees with what ``MultiWorkerMirroredStrategy`` joins;
``SimpleClusterResolver`` returns what it was given. gpuaccel's workers talk through its own
collectives, so ``master()`` is only the address TensorFlow would report (docs/distribute.md).
"""
import collections
import json
import os

from .. import _C
from ._cluster_spec import ClusterSpec

__all__ = ["ClusterResolver", "TFConfigClusterResolver", "SimpleClusterResolver", "ClusterSpec"]


def _master_url(address, rpc_layer):
    return f"{rpc_layer}://{address}" if rpc_layer else address


class ClusterResolver:
    """The interface every resolver has: ``cluster_spec()``, ``master()``, ``task_type``,
    ``task_id``, ``rpc_layer``, ``environment`` and ``num_accelerators()``."""

    def cluster_spec(self):
        raise NotImplementedError(f"{type(self).__name__} must implement cluster_spec()")

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        raise NotImplementedError(f"{type(self).__name__} must implement master()")

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        """``{'GPU': n}`` for this machine's visible GPUs (empty without any), as TensorFlow
        counts the local devices."""
        counts = collections.defaultdict(int)
        gpus = len(_C.visible_devices("GPU"))
        if gpus:
            counts["GPU"] = gpus
        return counts

    @property
    def environment(self):
        return ""


def _tf_config():
    """TF_CONFIG as a dict ({} when unset; invalid JSON raises json's ValueError, as in TF)."""
    return json.loads(os.environ.get("TF_CONFIG", "{}"))


class TFConfigClusterResolver(ClusterResolver):
    """The cluster and this task from ``TF_CONFIG`` (``{"cluster": {...}, "task": {"type":
    "worker", "index": 0}, "rpc_layer": "grpc"}``); arguments given here win over it."""

    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    def cluster_spec(self):
        return ClusterSpec(_tf_config().get("cluster", {}))

    @property
    def task_type(self):
        if self._task_type is not None:
            return str(self._task_type)
        task = _tf_config().get("task", {})
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, task_type):
        self._task_type = task_type

    @property
    def task_id(self):
        if self._task_id is not None:
            return int(self._task_id)
        task = _tf_config().get("task", {})
        return int(task["index"]) if "index" in task else None

    @task_id.setter
    def task_id(self, task_id):
        self._task_id = task_id

    @property
    def rpc_layer(self):
        return self._rpc_layer if self._rpc_layer is not None else _tf_config().get("rpc_layer")

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer):
        self._rpc_layer = rpc_layer

    @property
    def environment(self):
        return self._environment

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The address of a task (this one by default), ``rpc_layer://`` first when there is
        one; ``''`` for a cluster of a single task (there is nobody to connect to)."""
        config = _tf_config()
        if config.get("session_master") is not None:
            return config["session_master"]
        spec = self.cluster_spec()
        if not spec.jobs or (len(spec.jobs) == 1 and len(spec.job_tasks(spec.jobs[0])) == 1):
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        rpc_layer = self.rpc_layer if rpc_layer is None else rpc_layer
        return _master_url(spec.task_address(task_type, task_id), rpc_layer)


class SimpleClusterResolver(ClusterResolver):
    """A resolver that answers with the ``ClusterSpec`` and values it was built with."""

    def __init__(self, cluster_spec, master="", task_type=None, task_id=None, environment="",
                 num_accelerators=None, rpc_layer=None):
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._cluster_spec = cluster_spec
        self._master = master
        self.task_type = task_type
        self.task_id = task_id
        self._environment = environment
        self._num_accelerators = num_accelerators
        self.rpc_layer = rpc_layer

    def cluster_spec(self):
        return self._cluster_spec

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        """The given master, or with ``task_type`` and ``task_id`` that task's address."""
        if task_type is not None and task_id is not None:
            address = self._cluster_spec.task_address(task_type, task_id)
        else:
            address = self._master
        return _master_url(address, rpc_layer or self.rpc_layer)

    @property
    def environment(self):
        return self._environment

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        return {} if self._num_accelerators is None else self._num_accelerators
