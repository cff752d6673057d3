"""``save_weights`` / ``load_weights``: a model's weights in get_weights order, written as a
NumPy ``.npz`` archive atomically (a temporary file in the same folder, then a rename), so a
crash mid-write never leaves a truncated checkpoint where a good one was.

The archive also stores each weight's ``layer/weight`` path so loading into a model whose
structure differs fails with a message naming the first mismatch. It is gpuaccel's format:
Keras's ``.weights.h5`` files are HDF5 and are not read or written here."""
import os

import numpy as np

from .._atomic_file import atomic_open

_PATHS_KEY = "__weight_paths__"


def save(path, paths, arrays):
    entries = {f"w{i:05d}": np.asarray(a) for i, a in enumerate(arrays)}
    entries[_PATHS_KEY] = np.array(paths, dtype=np.str_)
    with atomic_open(path) as handle:
        np.savez(handle, **entries)


def load(path, expected_paths, expected_shapes):
    """The arrays of a file written by save(), checked against the model's weights."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"No weights file at {path!r}")
    try:
        archive = np.load(path, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - re-raised with what the file should be
        raise ValueError(f"{path!r} is not a gpuaccel weights file (an .npz archive written by "
                         f"model.save_weights): {exc}") from exc
    with archive:
        if _PATHS_KEY not in archive.files:
            raise ValueError(f"{path!r} is not a gpuaccel weights file: it has no weight paths")
        paths = [str(p) for p in archive[_PATHS_KEY]]
        arrays = [archive[f"w{i:05d}"] for i in range(len(paths))]
    if len(paths) != len(expected_paths):
        raise ValueError(f"the weights file {path!r} holds {len(paths)} weights but the model "
                         f"has {len(expected_paths)}; was it saved from a different model?")
    for saved, wanted, array, shape in zip(paths, expected_paths, arrays, expected_shapes):
        if tuple(array.shape) != tuple(shape):
            raise ValueError(f"weight {wanted!r} has shape {tuple(shape)} in the model but "
                             f"{tuple(array.shape)} in the file (saved as {saved!r})")
    return arrays
