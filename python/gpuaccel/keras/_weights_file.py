"""``save_weights`` / ``load_weights``: a model's weights in get_weights order, written as a
NumPy ``.npz`` archive atomically (a temporary file in the same folder, then a rename), so a
crash mid-write never leaves a truncated checkpoint where a good one was, and ending with a
checksum (``_checksum``) verified before loading, so a file damaged later is an error naming
it instead of garbage weights.

The archive also stores each weight's ``layer/weight`` path so loading into a model whose
structure differs fails with a message naming the first mismatch. It is gpuaccel's format:
Keras's ``.weights.h5`` files are HDF5 and are not read or written here."""
import io

import numpy as np

from .._checksum import verify, write_with_checksum

_PATHS_KEY = "__weight_paths__"
_WHAT = "weights file"


def _entry(i):
    return f"w{i:05d}"


def save(path, paths, arrays):
    entries = {_entry(i): np.asarray(a) for i, a in enumerate(arrays)}
    entries[_PATHS_KEY] = np.array(paths, dtype=np.str_)
    buffer = io.BytesIO()
    np.savez(buffer, **entries)
    write_with_checksum(path, buffer.getvalue())


def _not_ours(path, why):
    return ValueError(f"{path!r} is not a gpuaccel weights file (an .npz archive written by "
                      f"model.save_weights): {why}")


def load(path, expected_paths, expected_shapes):
    """The arrays of a file written by save(), checked against the model's weights."""
    payload = verify(path, what=_WHAT)
    try:
        archive = np.load(io.BytesIO(payload), allow_pickle=False)
    except Exception as exc:  # noqa: BLE001 - re-raised with what the file should be
        raise _not_ours(path, exc) from exc
    if not hasattr(archive, "files"):
        raise _not_ours(path, "it holds a single array, not an archive")
    with archive:
        if _PATHS_KEY not in archive.files:
            raise _not_ours(path, "it has no weight paths")
        try:
            paths = [str(p) for p in archive[_PATHS_KEY]]
        except ValueError as exc:  # an object array (allow_pickle=False)
            raise _not_ours(path, exc) from exc
        missing = [p for i, p in enumerate(paths) if _entry(i) not in archive.files]
        if missing:
            raise ValueError(f"the weights file {path!r} is incomplete: it lists {len(paths)} "
                             f"weights but holds no values for {len(missing)} of them "
                             f"({', '.join(missing[:5])}{', ...' if len(missing) > 5 else ''})")
        arrays = [archive[_entry(i)] for i in range(len(paths))]
    if len(paths) != len(expected_paths):
        raise ValueError(f"the weights file {path!r} holds {len(paths)} weights but the model "
                         f"has {len(expected_paths)}; was it saved from a different model?")
    for saved, wanted, array, shape in zip(paths, expected_paths, arrays, expected_shapes):
        if tuple(array.shape) != tuple(shape):
            raise ValueError(f"weight {wanted!r} has shape {tuple(shape)} in the model but "
                             f"{tuple(array.shape)} in the file {path!r} (saved as {saved!r})")
        if array.dtype.kind not in "fiu":
            raise ValueError(f"weight {wanted!r} in the file {path!r} has dtype {array.dtype}, "
                             "not a number type")
    return arrays
