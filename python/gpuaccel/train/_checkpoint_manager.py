"""``tf.train.CheckpointManager``: numbered checkpoints in one directory, the newest
``max_to_keep`` kept, the ``checkpoint`` state file kept current.

TensorFlow's rules: each ``save()`` counts the Checkpoint's ``save_counter`` up and writes
``<directory>/<checkpoint_name>-<n>`` (``n`` the counter, or ``checkpoint_number``); the oldest
checkpoints beyond ``max_to_keep`` are deleted, except that with
``keep_checkpoint_every_n_hours`` one every that many hours is kept for good. A new manager on
the same directory takes over the checkpoints the state file lists.
"""
import collections
import os
import time

import numpy as np

from . import _checkpoint_file, _checkpoint_state


def _as_int(value):
    return int(np.asarray(value.numpy() if hasattr(value, "numpy") else value))


class CheckpointManager:
    def __init__(self, checkpoint, directory, max_to_keep, keep_checkpoint_every_n_hours=None,
                 checkpoint_name="ckpt", step_counter=None, checkpoint_interval=None,
                 init_fn=None):
        from ._checkpoint import Checkpoint
        if not isinstance(checkpoint, Checkpoint):
            raise TypeError("CheckpointManager expects a tf.train.Checkpoint, got "
                            f"{type(checkpoint).__name__}")
        if max_to_keep is not None and (isinstance(max_to_keep, bool) or max_to_keep <= 0):
            raise ValueError("Expected a positive integer or `None` for `max_to_keep`, got "
                             f"{max_to_keep}.")
        if directory is None:
            raise ValueError("CheckpointManager needs a `directory` to write checkpoints in, "
                             "got None")
        if checkpoint_interval is not None and step_counter is None:
            raise ValueError("`step_counter` should be passed if `checkpoint_interval` is not "
                             "None.")
        self._checkpoint = checkpoint
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._directory = os.fspath(directory)
        self._checkpoint_prefix = os.path.join(self._directory, checkpoint_name)
        self._step_counter = step_counter
        self._checkpoint_interval = checkpoint_interval
        self._last_checkpoint_step = None
        self._init_fn = init_fn
        self._maybe_delete = collections.OrderedDict()
        state = _checkpoint_state.get_checkpoint_state(self._directory)
        now = time.time()
        if state is None:
            self._latest_checkpoint = None
            # A little in the past, as TensorFlow, so a manager re-created at once keeps the
            # hourly checkpoint rule's first checkpoint.
            self._last_preserved_timestamp = now - 1.0
            return
        self._latest_checkpoint = state.model_checkpoint_path
        preserved = state.last_preserved_timestamp
        self._last_preserved_timestamp = now if preserved is None or preserved > now else preserved
        stamps = state.all_model_checkpoint_timestamps or (
            [self._last_preserved_timestamp] * len(state.all_model_checkpoint_paths))
        for path, stamp in zip(state.all_model_checkpoint_paths, stamps):
            stamp = min(stamp, now)
            if stamp > self._last_preserved_timestamp:
                self._maybe_delete[path] = stamp

    @property
    def directory(self):
        return self._directory

    @property
    def checkpoint(self):
        return self._checkpoint

    @property
    def latest_checkpoint(self):
        """The prefix of the newest checkpoint, or None."""
        return self._latest_checkpoint

    @property
    def checkpoints(self):
        """The prefixes of the checkpoints this manager may still delete, oldest first."""
        return list(self._maybe_delete)

    @property
    def checkpoint_interval(self):
        return self._checkpoint_interval

    def _record_state(self):
        _checkpoint_state.update(self._directory, self._latest_checkpoint,
                                 list(self._maybe_delete), list(self._maybe_delete.values()),
                                 self._last_preserved_timestamp)

    def _sweep(self):
        if not self._max_to_keep:
            return
        while len(self._maybe_delete) > self._max_to_keep:
            path, stamp = self._maybe_delete.popitem(last=False)
            hours = self._keep_checkpoint_every_n_hours
            if hours and stamp - hours * 3600.0 >= self._last_preserved_timestamp:
                self._last_preserved_timestamp = stamp
                continue
            _checkpoint_file.remove(path)

    def save(self, checkpoint_number=None, check_interval=True, options=None):
        """Writes the next checkpoint and deletes the ones beyond ``max_to_keep``; returns its
        prefix, or None when ``checkpoint_interval`` steps have not passed since the last."""
        if self._checkpoint_interval is not None:
            step = _as_int(self._step_counter)
            if self._last_checkpoint_step is not None:
                if step == self._last_checkpoint_step:
                    return None
                if check_interval and step < self._last_checkpoint_step + self._checkpoint_interval:
                    return None
            self._last_checkpoint_step = step
        counter = self._checkpoint.save_counter
        counter.assign_add(1)
        number = _as_int(counter if checkpoint_number is None else checkpoint_number)
        path = self._checkpoint.write(f"{self._checkpoint_prefix}-{number}")
        self._maybe_delete.pop(path, None)  # re-saved: it moves to the end of the queue
        self._maybe_delete[path] = time.time()
        self._latest_checkpoint = path
        # The state names the new checkpoint before old ones are deleted, and again after.
        self._record_state()
        self._sweep()
        self._record_state()
        return path

    def restore_or_initialize(self):
        """Restores the latest checkpoint and returns its path, or runs ``init_fn`` and returns
        None when there is none."""
        if self._latest_checkpoint is not None:
            self._checkpoint.restore(self._latest_checkpoint)
            if self._checkpoint_interval is not None:
                self._last_checkpoint_step = _as_int(self._step_counter)
            return self._latest_checkpoint
        if self._init_fn is not None:
            self._init_fn()
        return None
