"""``tf.train.Checkpoint``: saves and restores models, optimizers and variables by the attribute
names that reach them, so a custom training loop can stop and go on where it was.

TensorFlow's behaviour and names: ``save(prefix)`` writes ``<prefix>-<save_counter>`` and
records it in the directory's ``checkpoint`` state file; ``write(path)`` writes ``path`` and
nothing else; ``restore``/``read`` load what matches and return a status whose
``assert_consumed()`` says whether everything matched. The files' content is gpuaccel's
(``_checkpoint_file``); what is saved under which key is ``_object_graph``.
"""
import os

import numpy as np

from .._tensor import Variable
from ..errors import NotFoundError
from . import _checkpoint_file, _checkpoint_state, _object_graph


def _assign(entries, stored):
    """Writes the values of ``stored`` ({key: ndarray}) into the entries with those keys, all
    shapes checked first; returns the keys of the entries that had a value and got none."""
    unmatched, layer_updates, writes = [], {}, []
    for entry in entries:
        if entry.key not in stored:
            if entry.read() is not None:
                unmatched.append(entry.key)
            continue
        array = stored[entry.key]
        if tuple(array.shape) != tuple(entry.shape):
            raise ValueError(f"Received incompatible tensor with shape {tuple(array.shape)} "
                             "when attempting to restore variable with shape "
                             f"{tuple(entry.shape)} and name {entry.key}.")
        if entry.owner is not None:
            layer, index = entry.owner
            layer_updates.setdefault(id(layer), (layer, {}))[1][index] = array
        else:
            writes.append((entry, array))
    for layer, arrays in layer_updates.values():
        values = layer.get_weights()
        for index, array in arrays.items():
            values[index] = array
        layer.set_weights(values)
    for entry, array in writes:
        entry.write(array)
    return unmatched


class CheckpointLoadStatus:
    """What ``Checkpoint.restore``/``read`` matched. Restoration already happened when this is
    returned, except into models not built yet, which get their values when built; the assertions
    check how well it matched."""

    def __init__(self, unused_keys, unmatched_keys):
        self._unused_keys = list(unused_keys)
        self._unmatched_keys = list(unmatched_keys)

    def assert_consumed(self):
        """Every value in the checkpoint was restored and every saved object got a value."""
        if self._unused_keys:
            raise AssertionError("Unresolved object in checkpoint: values "
                                 f"{self._unused_keys} match no object of this Checkpoint")
        return self.assert_existing_objects_matched()

    def assert_existing_objects_matched(self):
        if self._unmatched_keys:
            raise AssertionError(
                f"Found {len(self._unmatched_keys)} Python objects that were not bound to "
                "checkpointed values, likely due to changes in the Python program: "
                f"{self._unmatched_keys}")
        return self

    def assert_nontrivial_match(self):
        return self

    def expect_partial(self):
        """Silences nothing: gpuaccel does not warn about partly used checkpoints."""
        return self

    def run_restore_ops(self, session=None):
        """Nothing to run: values are restored eagerly."""

    def initialize_or_restore(self, session=None):
        """Nothing to run: values are restored eagerly."""


class InitializationOnlyStatus(CheckpointLoadStatus):
    """``restore(None)``: nothing restored (TensorFlow's answer to a missing latest checkpoint)."""

    def __init__(self):
        super().__init__([], [])

    def assert_consumed(self):
        raise AssertionError("No checkpoint specified (save_path=None); nothing is being "
                             "restored.")

    assert_existing_objects_matched = assert_consumed
    assert_nontrivial_match = assert_consumed


class Checkpoint(_object_graph.CheckpointNode):
    """``tf.train.Checkpoint(model=..., optimizer=..., step=tf.Variable(1))``."""

    def __init__(self, root=None, **kwargs):
        if root is not None:
            kwargs = {"root": root, **kwargs}
        for name, value in kwargs.items():
            if name == "save_counter":
                raise ValueError("`Checkpoint` reserves the attribute name 'save_counter'")
            _object_graph.check_trackable(name, value)
        object.__setattr__(self, "_attributes", dict(kwargs))
        object.__setattr__(self, "_save_counter", None)

    def __getattr__(self, name):
        attributes = self.__dict__.get("_attributes", {})
        if name in attributes:
            return attributes[name]
        raise AttributeError(f"'Checkpoint' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        if name.startswith("_"):
            object.__setattr__(self, name, value)
            return
        _object_graph.check_trackable(name, value)
        self._attributes[name] = value

    def _children(self):
        """(attribute name, object) pairs to save, ``save_counter`` among them once it exists."""
        children = sorted(self._attributes.items())
        if self._save_counter is not None:
            children.append(("save_counter", self._save_counter))
        return children

    @property
    def save_counter(self):
        """How many times ``save`` ran (restored with the rest); an int64 variable."""
        if self._save_counter is None:
            object.__setattr__(self, "_save_counter",
                               Variable(0, trainable=False, dtype="int64"))
        return self._save_counter

    # ---- saving ----

    def write(self, file_prefix, options=None):
        """Writes the checkpoint to ``file_prefix`` (no counter, no state file); returns it."""
        file_prefix = os.fspath(file_prefix)
        entries, _ = _object_graph.collect(self)  # an unbuilt model has nothing to save
        values = {}
        for entry in entries:
            array = entry.read()
            if array is not None:  # a slot the optimizer has not created yet
                values[entry.key] = np.asarray(array)
        return _checkpoint_file.write(file_prefix, values)

    def save(self, file_prefix, options=None):
        """Writes ``<file_prefix>-<n>`` (``n``: ``save_counter`` after counting this save) and
        records it as the latest in the directory's ``checkpoint`` file; returns the path."""
        file_prefix = os.fspath(file_prefix)
        self.save_counter.assign_add(1)
        path = self.write(f"{file_prefix}-{int(self.save_counter.numpy())}")
        _checkpoint_state.update(os.path.dirname(path) or ".", path, [path])
        return path

    # ---- restoring ----

    def read(self, save_path, options=None):
        """Restores from ``save_path`` (a prefix ``save``/``write`` returned)."""
        save_path = os.fspath(save_path)
        stored = _checkpoint_file.read(save_path)
        # As TensorFlow: restoring creates the counter, so restoring what `write` (which saves
        # none unless `save` made one) wrote leaves it unmatched for assert_consumed.
        self.save_counter  # noqa: B018
        entries, unbuilt = _object_graph.collect(self)
        unmatched = _assign(entries, stored)
        for key, model in unbuilt:
            waiting = {k: v for k, v in stored.items() if k.startswith(key + "/")}
            if waiting:  # restored when the model is built (keras.Model._run_after_build)
                model.__dict__.setdefault("_after_build", []).append(
                    lambda waiting=waiting: _assign(_object_graph.collect(self)[0], waiting))
        used = {entry.key for entry in entries}
        return CheckpointLoadStatus([k for k in stored if k not in used], unmatched)

    def restore(self, save_path, options=None):
        """``read``, and ``None`` (no checkpoint yet) restores nothing."""
        if save_path is None:
            return InitializationOnlyStatus()
        try:
            return self.read(save_path, options)
        except NotFoundError as error:
            raise NotFoundError(
                f"Error when restoring from checkpoint or SavedModel at {save_path}: {error}\n"
                "Please double-check that the path is correct. You may be missing the checkpoint "
                "suffix (e.g. the '-1' in 'path/to/ckpt-1').") from None
