"""The ``checkpoint`` state file TensorFlow keeps next to its checkpoints, in TensorFlow's text
format, so ``tf.train.latest_checkpoint`` finds the newest one after a restart.

Its lines (a text protocol buffer, ``CheckpointState``)::

    model_checkpoint_path: "ckpt-3"
    all_model_checkpoint_paths: "ckpt-2"
    all_model_checkpoint_paths: "ckpt-3"
    all_model_checkpoint_timestamps: 1795769255.55
    all_model_checkpoint_timestamps: 1795769255.56
    last_preserved_timestamp: 1795769254.49

Paths inside the directory are written relative to it, as TensorFlow does; the timestamps only
when a ``CheckpointManager`` wrote the file.
"""
import json
import os

from .._atomic_file import atomic_write_bytes
from . import _checkpoint_file

STATE_FILE = "checkpoint"


class CheckpointState:
    """The parsed state file: absolute ``model_checkpoint_path`` and
    ``all_model_checkpoint_paths``, their ``all_model_checkpoint_timestamps`` and
    ``last_preserved_timestamp`` (None when not recorded)."""

    def __init__(self, model_checkpoint_path, all_model_checkpoint_paths,
                 all_model_checkpoint_timestamps=(), last_preserved_timestamp=None):
        self.model_checkpoint_path = model_checkpoint_path
        self.all_model_checkpoint_paths = list(all_model_checkpoint_paths)
        self.all_model_checkpoint_timestamps = list(all_model_checkpoint_timestamps)
        self.last_preserved_timestamp = last_preserved_timestamp


def _relative(directory, path):
    if os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory):
        return os.path.basename(path)
    return path


def update(directory, latest, all_paths, timestamps=None, last_preserved_timestamp=None):
    """Rewrites ``directory/checkpoint`` atomically."""
    lines = [f"model_checkpoint_path: {json.dumps(_relative(directory, latest))}"]
    lines += [f"all_model_checkpoint_paths: {json.dumps(_relative(directory, p))}"
              for p in all_paths]
    if timestamps is not None:
        lines += [f"all_model_checkpoint_timestamps: {t!r}" for t in timestamps]
        lines.append(f"last_preserved_timestamp: {last_preserved_timestamp!r}")
    atomic_write_bytes(os.path.join(directory, STATE_FILE),
                       ("\n".join(lines) + "\n").encode("utf-8"))


def get_checkpoint_state(checkpoint_dir, latest_filename=None):
    """The directory's CheckpointState, or None when it has no state file."""
    checkpoint_dir = os.fspath(checkpoint_dir)
    path = os.path.join(checkpoint_dir, latest_filename or STATE_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (FileNotFoundError, NotADirectoryError):
        return None
    fields = {"model_checkpoint_path": [], "all_model_checkpoint_paths": [],
              "all_model_checkpoint_timestamps": [], "last_preserved_timestamp": []}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        name, _, value = line.partition(":")
        name, value = name.strip(), value.strip()
        if name not in fields:
            raise ValueError(f"{path!r} line {number}: unknown field {name!r} (a checkpoint "
                             f"state file holds {sorted(fields)})")
        try:
            fields[name].append(json.loads(value))
        except ValueError:
            raise ValueError(f"{path!r} line {number}: cannot read the value {value!r}") from None

    def absolute(p):
        return p if os.path.isabs(p) else os.path.join(checkpoint_dir, p)
    latest = fields["model_checkpoint_path"]
    preserved = fields["last_preserved_timestamp"]
    return CheckpointState(absolute(latest[-1]) if latest else None,
                           [absolute(p) for p in fields["all_model_checkpoint_paths"]],
                           [float(t) for t in fields["all_model_checkpoint_timestamps"]],
                           float(preserved[-1]) if preserved else None)


def latest_checkpoint(checkpoint_dir, latest_filename=None):
    """``tf.train.latest_checkpoint``: the newest checkpoint's prefix recorded in
    ``checkpoint_dir``, or None when there is none (or its files are gone)."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is None or not state.model_checkpoint_path:
        return None
    if os.path.exists(state.model_checkpoint_path + _checkpoint_file.INDEX_SUFFIX):
        return state.model_checkpoint_path
    return None
