"""The files of one checkpoint: TensorFlow's names, gpuaccel's content.

``write(prefix)`` creates ``<prefix>.data-00000-of-00001`` and ``<prefix>.index``, the names
TensorFlow gives a checkpoint, so ``CheckpointManager`` and ``latest_checkpoint`` code that
lists or deletes them works unchanged. The content is not TensorFlow's tensor bundle: the
``.data`` file is a NumPy ``.npz`` of the values and the ``.index`` file a JSON list of their
keys, shapes and dtypes, both with gpuaccel's checksum trailer and written atomically (the data
first, so an ``.index`` is only ever next to the complete data it describes). TensorFlow cannot
read these files, and gpuaccel cannot read TensorFlow's.
"""
import io
import json
import os

import numpy as np

from .._checksum import verify, write_with_checksum
from ..dtypes import as_dtype
from ..errors import NotFoundError

FORMAT = "gpuaccel-tf-checkpoint"
VERSION = 1
DATA_SUFFIX = ".data-00000-of-00001"
INDEX_SUFFIX = ".index"
_INDEX_START = b'{"format": "' + FORMAT.encode("ascii") + b'"'


def write(prefix, values):
    """Writes ``values`` ({key: ndarray}) as the checkpoint ``prefix``; returns ``prefix``."""
    keys = list(values)
    buffer = io.BytesIO()
    np.savez(buffer, **{f"v{i:05d}": _storable(np.asarray(values[k])) for i, k in enumerate(keys)})
    write_with_checksum(prefix + DATA_SUFFIX, buffer.getvalue())
    index = {"format": FORMAT, "version": VERSION,  # first: _INDEX_START
             "variables": [[k, list(np.shape(values[k])), np.asarray(values[k]).dtype.name]
                           for k in keys]}
    write_with_checksum(prefix + INDEX_SUFFIX, json.dumps(index).encode("utf-8"))
    return prefix


def _storable(array):
    """``array`` as .npz can hold it: bfloat16 (ml_dtypes, which NumPy's format does not know)
    as its 16-bit patterns; the index keeps the dtype's name to view them back."""
    return array.view(np.uint16) if array.dtype.name == "bfloat16" else array


def _restored(array, dtype_name):
    if dtype_name == "bfloat16":
        return array.view(as_dtype("bfloat16").as_numpy_dtype)
    return array


def _missing(prefix):
    return NotFoundError("Unsuccessful TensorSliceReader constructor: Failed to find any matching "
                         f"files for {prefix}")


def read_index(prefix):
    """[(key, shape, dtype name)] of checkpoint ``prefix``; NotFoundError when it is absent."""
    prefix = os.fspath(prefix)
    if not os.path.exists(prefix + INDEX_SUFFIX):
        raise _missing(prefix)
    with open(prefix + INDEX_SUFFIX, "rb") as f:
        head = f.read(len(_INDEX_START))
    if head != _INDEX_START:  # a truncated index of ours still starts so: verify says "cut short"
        raise ValueError(f"{prefix + INDEX_SUFFIX!r} is not a gpuaccel checkpoint index "
                         "(gpuaccel reads only checkpoints it wrote, not TensorFlow's tensor "
                         "bundles: load TensorFlow's weights with model.load_weights on a "
                         ".weights.h5 file instead)")
    payload = verify(prefix + INDEX_SUFFIX, what="checkpoint index")
    try:
        index = json.loads(payload.decode("utf-8"))
        ok = isinstance(index, dict) and index.get("format") == FORMAT
    except (UnicodeDecodeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{prefix + INDEX_SUFFIX!r} is not a gpuaccel checkpoint index (gpuaccel "
                         "reads only checkpoints it wrote, not TensorFlow's tensor bundles)")
    if index.get("version") != VERSION:
        raise ValueError(f"The checkpoint {prefix!r} has format version {index.get('version')}; "
                         f"this gpuaccel reads version {VERSION}")
    return [(k, tuple(shape), dtype) for k, shape, dtype in index["variables"]]


def read(prefix):
    """{key: ndarray} of checkpoint ``prefix``."""
    variables = read_index(prefix)
    if not os.path.exists(prefix + DATA_SUFFIX):
        raise _missing(prefix)
    payload = verify(prefix + DATA_SUFFIX, what="checkpoint data")
    with np.load(io.BytesIO(payload), allow_pickle=False) as archive:
        return {key: _restored(archive[f"v{i:05d}"], dtype)
                for i, (key, _, dtype) in enumerate(variables)}


def remove(prefix):
    """Deletes checkpoint ``prefix``'s files (what CheckpointManager drops)."""
    for suffix in (INDEX_SUFFIX, DATA_SUFFIX):
        try:
            os.unlink(prefix + suffix)
        except FileNotFoundError:
            pass
