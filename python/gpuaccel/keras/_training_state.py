"""The file ``keras.callbacks.BackupAndRestore`` writes: everything a killed ``fit`` needs to go
on exactly where it stopped, in one checksummed ``.npz`` written atomically.

Keras 3 keeps the weights and a JSON of counters in two files and restarts an interrupted
epoch from its first batch. One file cannot be half-updated (weights of step 40 with counters
of step 30), and saving where in the epoch the run was, the epoch's shuffling order and the
random generator lets a resumed run replay the remaining batches exactly: on the same
machine it ends with the weights an uninterrupted run would have.

What is saved:
- the model's weights, in ``get_weights`` order with their ``layer/weight`` paths;
- the optimizer: iterations, learning rate, every slot of every variable (momentum,
  velocity, ...), and a LossScaleOptimizer's dynamic scale and finite-step counter;
- the position: the epoch, the batches of it already done, the total batches done;
- randomness: gpuaccel's generator (seed and counter: dropout masks) and the state fit's
  shuffling generator had when the epoch began (its order of the samples).

Not saved (documented in docs/reliability.md): metric accumulators of a partly done epoch,
other callbacks' state (EarlyStopping's wait, ReduceLROnPlateau's), a Dataset's own iterator.
"""
import io
import json

import numpy as np

from .. import _C
from .._checksum import verify, write_with_checksum
from .._tensor import from_numpy

FORMAT = "gpuaccel-training-state"
VERSION = 1
_META_KEY = "__meta__"
_WHAT = "training checkpoint"


class FitPosition:
    """Where a fit is: ``epoch`` (0-based), ``step`` (batches of it done), ``global_step``
    (batches done in all epochs) and ``shuffle_state`` (the shuffling generator's state when
    the epoch began; None when the input is not shuffled by fit)."""

    __slots__ = ("epoch", "step", "global_step", "shuffle_state")

    def __init__(self, epoch=0, step=0, global_step=0, shuffle_state=None):
        self.epoch = epoch
        self.step = step
        self.global_step = global_step
        self.shuffle_state = shuffle_state

    def __repr__(self):
        return (f"FitPosition(epoch={self.epoch}, step={self.step}, "
                f"global_step={self.global_step})")


def _optimizer_parts(optimizer):
    """(the optimizer's C++ object, the LossScaleOptimizer's C++ object or None)."""
    cpp = optimizer._cpp
    return cpp, (cpp if hasattr(cpp, "set_dynamic_state") else None)


def save(path, model, position):
    """Writes the training state of ``model`` at ``position`` to ``path``."""
    weights = model.weights
    entries = {}
    for i, array in enumerate(model.get_weights()):
        entries[f"weight_{i:05d}"] = array
    optimizer_meta = None
    if model.optimizer is not None:
        cpp, loss_scale = _optimizer_parts(model.optimizer)
        kinds = list(cpp.slot_kinds)
        for i, w in enumerate(weights):
            for kind in kinds:
                slot = cpp.slot(w, kind)
                if slot is not None:
                    entries[f"slot_{kind}_{i:05d}"] = np.array(_C.detach(slot).numpy(),
                                                               dtype=np.float32, copy=True)
        optimizer_meta = {
            "class": type(model.optimizer).__name__,
            "iterations": int(cpp.iterations),
            "learning_rate": float(cpp.learning_rate),
            "slot_kinds": kinds,
            "loss_scale": None if loss_scale is None else {
                "scale": float(loss_scale.scale), "step_counter": int(loss_scale.step_counter)},
        }
    meta = {
        "format": FORMAT, "version": VERSION,
        "weight_paths": model._weight_paths(),
        "weight_shapes": [list(w.shape) for w in weights],
        "optimizer": optimizer_meta,
        "epoch": int(position.epoch), "step": int(position.step),
        "global_step": int(position.global_step),
        "shuffle_state": position.shuffle_state,
        "random": {"seed": int(_C.random_seed()), "offset": int(_C.random_offset())},
    }
    entries[_META_KEY] = np.array(json.dumps(meta))
    buffer = io.BytesIO()
    np.savez(buffer, **entries)
    write_with_checksum(path, buffer.getvalue())


def _fail(path, problem):
    raise ValueError(f"The {_WHAT} {path!r} does not fit this training run: {problem}. "
                     "BackupAndRestore resumes only the model and optimizer it saved; use a new "
                     "backup_dir for a different model.")


def read(path):
    """(meta dict, arrays dict) of a checkpoint file, checksum verified."""
    payload = verify(path, what=_WHAT)
    try:
        with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
        meta = json.loads(str(arrays.pop(_META_KEY)))
    except (ValueError, KeyError, OSError) as exc:
        raise ValueError(f"{path!r} is not a gpuaccel {_WHAT} (written by "
                         f"keras.callbacks.BackupAndRestore): {exc}") from exc
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path!r} is not a gpuaccel {_WHAT} (written by "
                         "keras.callbacks.BackupAndRestore)")
    if meta.get("version") != VERSION:
        raise ValueError(f"The {_WHAT} {path!r} has format version {meta.get('version')}; this "
                         f"gpuaccel reads version {VERSION}")
    return meta, arrays


def restore(path, model):
    """Loads ``path`` into ``model`` (weights, optimizer, random generator); returns the
    FitPosition to resume from. Everything is checked before anything is changed."""
    meta, arrays = read(path)
    weights = model.weights
    shapes = [list(w.shape) for w in weights]
    if meta["weight_shapes"] != shapes:
        _fail(path, f"it holds {len(meta['weight_shapes'])} weights of shapes "
                    f"{meta['weight_shapes']}, the model {len(shapes)} of shapes {shapes}")
    values = []
    for i in range(len(weights)):
        name = f"weight_{i:05d}"
        if name not in arrays:
            _fail(path, f"weight {i} ({meta['weight_paths'][i]}) is missing")
        values.append(arrays[name])
    saved_opt = meta["optimizer"]
    slots = []
    if saved_opt is not None:
        if model.optimizer is None or type(model.optimizer).__name__ != saved_opt["class"]:
            _fail(path, f"it was saved with a {saved_opt['class']} optimizer, the model is "
                        f"compiled with {type(model.optimizer).__name__}")
        cpp, loss_scale = _optimizer_parts(model.optimizer)
        if list(cpp.slot_kinds) != saved_opt["slot_kinds"]:
            _fail(path, f"the optimizer kept slots {saved_opt['slot_kinds']}, this one keeps "
                        f"{list(cpp.slot_kinds)}")
        if (loss_scale is None) != (saved_opt["loss_scale"] is None):
            _fail(path, "one of the two optimizers is a LossScaleOptimizer and the other not")
        for i, w in enumerate(weights):
            for kind in saved_opt["slot_kinds"]:
                array = arrays.get(f"slot_{kind}_{i:05d}")
                if array is not None:
                    if list(array.shape) != shapes[i]:
                        _fail(path, f"slot {kind} of weight {i} has shape {list(array.shape)}")
                    slots.append((w, kind, array))
    model.set_weights(values)
    if saved_opt is not None:
        for w, kind, array in slots:
            cpp.set_slot(w, kind, from_numpy(np.ascontiguousarray(array, dtype=np.float32)))
        cpp.iterations = saved_opt["iterations"]
        cpp.learning_rate = saved_opt["learning_rate"]
        if loss_scale is not None:
            loss_scale.set_dynamic_state(saved_opt["loss_scale"]["scale"],
                                         saved_opt["loss_scale"]["step_counter"])
    _C.set_random_state(meta["random"]["seed"], meta["random"]["offset"])
    return FitPosition(meta["epoch"], meta["step"], meta["global_step"], meta["shuffle_state"])
