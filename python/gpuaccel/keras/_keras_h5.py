"""Keras 3's ``.weights.h5`` layout, read and written with h5py, so weights move both ways
between gpuaccel and real Keras.

The layout (Keras 3's ``saving_lib``: facts, not its code): every saveable object owns an HDF5
group ``<path>/vars`` whose datasets are named ``"0"``, ``"1"``, ... in the order of its
variables (trainable first, then non-trainable, each in creation order). The model's own path
is the root (an empty ``/vars``); a Sequential or functional model's layers live under
``layers/<name>``, where ``<name>`` is the snake_case class name, suffixed ``_1``, ``_2``... for
the second, third... layer of that class in ``model.layers`` order (never the layer's own
``name``, which is not reproducible). bfloat16 arrays carry an ``attrs["dtype"] = "bfloat16"``.
The optimizer's state (``optimizer/vars``) is not written: a real Keras model warns that its
optimizer was not restored and trains on, as with any weights-only file.
"""
import io
import os

import numpy as np

from .._atomic_file import atomic_write_bytes

try:  # h5py is a dependency; imported lazily so `import gpuaccel` stays light if it is absent
    import h5py
except ImportError:  # pragma: no cover - depends on the environment
    h5py = None

_LAYERS = "layers"


def _require_h5py():
    if h5py is None:
        raise ImportError("h5py must be installed to read or write .weights.h5 files "
                          "(pip install h5py)")


def _snake_case(name):
    from .layers import _snake_case as snake
    return snake(name)


def layer_groups(model):
    """(layer, group path) for each layer of ``model`` in Keras's naming."""
    used = {}
    out = []
    for layer in model.layers:
        _refuse_nested(layer)
        name = _snake_case(type(layer).__name__)
        if name in used:
            used[name] += 1
            name = f"{name}_{used[name]}"
        else:
            used[name] = 0
        out.append((layer, f"{_LAYERS}/{name}"))
    return out


def _refuse_nested(layer):
    if type(layer).__name__ == "MultiHeadAttention":
        raise NotImplementedError("MultiHeadAttention keeps its weights in nested sub-layers in "
                                  "Keras's files, which gpuaccel's .weights.h5 writer does not "
                                  "lay out yet; use a .npz path for save_weights")


def write(h5_file, model):
    """Writes ``model``'s weights into an open, empty h5py File (or group)."""
    h5_file.create_group("vars")
    for layer, path in layer_groups(model):
        group = h5_file.create_group(path).create_group("vars")
        for i, array in enumerate(layer.get_weights()):
            group.create_dataset(str(i), data=np.asarray(array))


def read(h5_file, model, source):
    """Reads weights from an open h5py File into ``model``, all checked before any is set."""
    updates = []
    for layer, path in layer_groups(model):
        expected = layer.get_weights()
        group = h5_file[path]["vars"] if path in h5_file and "vars" in h5_file[path] else {}
        if len(group) != len(expected):
            raise ValueError(f"Layer '{layer.name}' ({type(layer).__name__}) expected "
                             f"{len(expected)} variables, but {source} has {len(group)} at "
                             f"'{path}/vars'")
        arrays = []
        for i, current in enumerate(expected):
            value = np.asarray(group[str(i)], dtype=np.float32)
            if value.shape != current.shape:
                raise ValueError(f"Layer '{layer.name}' weight {i} has shape {current.shape} "
                                 f"but {source} has {value.shape} at '{path}/vars/{i}'")
            arrays.append(value)
        updates.append((layer, arrays))
    for layer, arrays in updates:
        if arrays:
            layer.set_weights(arrays)


def save_weights(model, filepath):
    """``model.save_weights('x.weights.h5')``, written atomically."""
    atomic_write_bytes(filepath, to_bytes(model))


def to_bytes(model):
    """The bytes of a .weights.h5 file holding ``model``'s weights (HDF5 built in memory)."""
    _require_h5py()
    buffer = io.BytesIO()
    with h5py.File(buffer, "w") as h5_file:
        write(h5_file, model)
    return buffer.getvalue()


def load_weights(model, filepath):
    _require_h5py()
    filepath = os.fspath(filepath)
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"No weights file at {filepath!r}")
    with h5py.File(filepath, "r") as h5_file:
        read(h5_file, model, repr(filepath))


def read_bytes(data, model, source):
    """Reads weights from the bytes of a .weights.h5 file (as stored inside a .keras zip)."""
    _require_h5py()
    with h5py.File(io.BytesIO(data), "r") as h5_file:
        read(h5_file, model, source)
