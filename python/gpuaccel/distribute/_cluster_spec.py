"""``tf.train.ClusterSpec``: the jobs of a cluster and their tasks' addresses, which the
cluster resolvers return. It lives here because gpuaccel has no ``train`` module yet; the
resolvers are its only users."""

__all__ = ["ClusterSpec"]


def _tasks_by_index(job_name, tasks):
    if isinstance(tasks, (list, tuple)):
        return dict(enumerate(tasks))
    if isinstance(tasks, dict):
        return {int(index): address for index, address in tasks.items()}
    raise TypeError(f"The tasks for job {job_name!r} must be a list or a dictionary from "
                    "integers to strings.")


class ClusterSpec:
    """``ClusterSpec({'worker': ['host1:2222', 'host2:2222'], 'chief': ['host0:2222']})``;
    a job's tasks may also be ``{index: address}`` when some indices are absent."""

    def __init__(self, cluster):
        if isinstance(cluster, ClusterSpec):
            # as TensorFlow, which rebuilds a copy from its protocol buffer: jobs sorted
            cluster = {job: dict(cluster._jobs[job]) for job in sorted(cluster._jobs)}
        if not isinstance(cluster, dict):
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")
        self._jobs = {job: _tasks_by_index(job, tasks) for job, tasks in cluster.items()}

    def __bool__(self):
        return bool(self._jobs)

    def __eq__(self, other):
        return self._jobs == (other._jobs if isinstance(other, ClusterSpec) else other)

    def __ne__(self, other):
        return not self == other

    __hash__ = None  # mutable-looking, compared by content, as TensorFlow's

    def __repr__(self):
        jobs = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{job!r}: {jobs[job]!r}" for job in sorted(jobs)) \
            + "})"

    @property
    def jobs(self):
        """The job names, in the order given."""
        return list(self._jobs)

    def _job(self, job_name):
        if job_name not in self._jobs:
            raise ValueError(f"No such job in cluster: {job_name!r}")
        return self._jobs[job_name]

    def as_dict(self):
        """Each job's tasks as a list, or as ``{index: address}`` where indices are missing."""
        out = {}
        for job in self._jobs:
            indices = self.task_indices(job)
            if not indices:
                out[job] = {}
            elif indices[-1] + 1 == len(indices):
                out[job] = self.job_tasks(job)
            else:
                out[job] = {index: self._jobs[job][index] for index in indices}
        return out

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return sorted(self._job(job_name))

    def task_address(self, job_name, task_index):
        tasks = self._job(job_name)
        if task_index not in tasks:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}")
        return tasks[task_index]

    def job_tasks(self, job_name):
        """The job's addresses by index, with None where an index has no task."""
        tasks = self._job(job_name)
        out = [None] * (max(tasks) + 1)
        for index, address in tasks.items():
            out[index] = address
        return out
