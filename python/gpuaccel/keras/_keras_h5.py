"""Keras 3's ``.weights.h5`` layout, read and written with h5py, so weights move both ways
between gpuaccel and real Keras.

The layout (Keras 3's ``saving_lib``: facts, not its code): every saveable object that owns
variables has an HDF5 group ``<path>/vars`` whose datasets are named ``"0"``, ``"1"``, ... in
the order of its variables (trainable first, then non-trainable, each in creation order). A
Sequential or functional model's layers live under ``layers/<name>``, where ``<name>`` is the
snake_case class name, suffixed ``_1``, ``_2``... for the second, third... layer of that class in
``model.layers`` order (never the layer's own ``name``, which is not reproducible); a subclassed
model's layers live under the names of the attributes holding them. A model used as a layer
is named like a layer (``sequential``, ``functional`` for a functional ``keras.Model``, counted
with the other layers of its class) and holds its own layers' groups under
``<its group>/layers/``. A layer whose weights belong to inner layers (an RNN's cell,
Bidirectional's two RNNs, TimeDistributed's layer) has no variables of its own: each inner
layer gets the group its attribute names (``lstm/cell``, ``bidirectional/forward_layer/cell``,
``rnn/cell/cells/lstm_cell``), which the layer lists in ``_saved_sublayers()``. bfloat16 arrays
carry ``attrs["dtype"] = "bfloat16"``.
The optimizer's state (``optimizer/vars``) is not written: a real Keras model warns that its
optimizer was not restored and trains on, as with any weights-only file.
"""
import io
import os

import numpy as np

from .._checksum import verify, write_with_checksum
from ..errors import DataLossError
from . import _held_sublayers
from ._snake_case import snake_case as _snake_case

try:  # h5py is a dependency; imported lazily so `import gpuaccel` stays light if it is absent
    import h5py
except ImportError:  # pragma: no cover - depends on the environment
    h5py = None

_LAYERS = "layers"


def _require_h5py():
    if h5py is None:
        raise ImportError("h5py must be installed to read or write .weights.h5 files "
                          "(pip install h5py)")



def _keras_class_name(layer):
    """The class name Keras's files are named by: a functional ``keras.Model`` is Keras's
    ``Functional``."""
    from ._model_classes import model_class
    if type(layer) is model_class():
        return "Functional"
    return type(layer).__name__


def layer_groups(model, prefix=""):
    """(layer, group path) for each layer of ``model`` in Keras's naming; a model used as a
    layer is a group of its own (``layers/sequential``, ``layers/functional``...) holding its
    layers' groups under ``<group>/layers/...``."""
    from ._nested_models import is_model, keras_layers
    if getattr(model, "_is_subclassed", lambda: False)():
        out = []
        for layer, path in _attribute_groups(model):
            out.extend(layer_groups(layer, prefix + path + "/") if is_model(layer)
                       else [(layer, prefix + path)])
        return out
    used = {}
    out = []
    for layer in keras_layers(model):
        _refuse_nested(layer)
        name = _snake_case(_keras_class_name(layer))
        if name in used:
            used[name] += 1
            name = f"{name}_{used[name]}"
        else:
            used[name] = 0
        path = f"{prefix}{_LAYERS}/{name}"
        if is_model(layer):
            out.extend(layer_groups(layer, path + "/"))
        else:
            out.append((layer, path))
    return out


def _leaf_groups(layer, path):
    """(layer, group path) for ``layer`` at ``path``, or for each inner layer that holds the
    weights of a layer that lists them (``_saved_sublayers``)."""
    if hasattr(layer, "_cpp") and _held_sublayers.holds_layers(layer):
        return _held_layer_groups(layer, path)
    sublayers = getattr(layer, "_saved_sublayers", None)
    if sublayers is None:
        return [(layer, path)]
    out = []
    for name, sublayer in sublayers():
        out += _leaf_groups(sublayer, f"{path}/{name}")
    return out


def _held_layer_groups(layer, path):
    """A Python layer holding layers (_held_sublayers.py): its own variables in its group, each
    held layer's in a group named after the attribute, in the order Keras walks attributes
    (sorted, private names last)."""
    from ._nested_models import is_model
    out = [(_held_sublayers.OwnWeights(layer), path)]
    for name, held in sorted(_held_sublayers.held_layers(layer),
                             key=lambda item: _name_key(item[0])):
        if is_model(held):
            out += layer_groups(held, f"{path}/{name}/")
        else:
            out += _leaf_groups(held, f"{path}/{name}")
    return out


def _weight_groups(model):
    return [leaf for layer, path in layer_groups(model) for leaf in _leaf_groups(layer, path)]


def _name_key(name):
    return "~" + name if name.startswith("_") else name  # private names sort last


def _attribute_groups(model):
    """A subclassed model's layers, as Keras walks ``dir(model)`` in sorted order (private names
    last): a layer held by an attribute is saved under that attribute's name; the ``layers``
    property, met at its own place in that order, saves every layer not yet seen under
    ``layers/<snake_case class>[_n]`` (the counter also counts layers already seen)."""
    from ._model_classes import model_class
    from .layers import Layer
    Layer = (Layer, model_class())  # a model held by an attribute is saved there as a layer
    for name, value in vars(model).items():
        if name == "_traced_layers":  # gpuaccel's own list of the layers the call traced
            continue
        if isinstance(value, (list, tuple, dict)) and any(
                isinstance(v, Layer) for v in (value.values() if isinstance(value, dict) else value)):
            raise NotImplementedError(f"{type(model).__name__}.{name} holds layers in a "
                                      "container, which the .weights.h5 writer does not lay out "
                                      "yet; assign each layer to its own attribute")
    held = {name: value for name, value in vars(model).items() if isinstance(value, Layer)}
    seen, out = set(), []
    for name in sorted(set(held) | {"layers"}, key=_name_key):
        if name != "layers":
            if id(held[name]) not in seen:
                seen.add(id(held[name]))
                out.append((held[name], name))
            continue
        used = {}
        for layer in model.layers:
            key = _snake_case(type(layer).__name__)
            used[key] = used.get(key, -1) + 1
            if id(layer) not in seen:
                seen.add(id(layer))
                out.append((layer, f"{_LAYERS}/{key}" + (f"_{used[key]}" if used[key] else "")))
    for layer, _ in out:
        _refuse_nested(layer)
    return out


def _refuse_nested(layer):
    # Python layers that hold sub-layers in Keras (GroupQueryAttention, Wrapper subclasses)
    # say so with `_keras_nests_weights`.
    # A layer that names its inner layers' groups (`_saved_sublayers`) is written in them.
    if hasattr(layer, "_saved_sublayers"):
        return
    if type(layer).__name__ == "MultiHeadAttention" or getattr(layer, "_keras_nests_weights",
                                                               False):
        raise NotImplementedError(f"{type(layer).__name__} keeps its weights in nested "
                                  "sub-layers in Keras's files, which gpuaccel's .weights.h5 "
                                  "writer does not lay out yet; use a .npz path for "
                                  "save_weights")


def write(h5_file, model):
    """Writes ``model``'s weights into an open, empty h5py File. As Keras 3.15 does, only objects
    that own variables get a group (older Keras wrote empty ones; readers accept both)."""
    for layer, path in _weight_groups(model):
        arrays = layer.get_weights()
        if not arrays:
            continue
        group = h5_file.create_group(path).create_group("vars")
        for i, array in enumerate(arrays):
            group.create_dataset(str(i), data=np.asarray(array))


def _stored_weight(group, index, where):
    """Variable ``index`` of a layer's group as float32; a file that is not ours holds other
    names or non-numeric data there, which is a ValueError naming the place."""
    entry = group.get(str(index)) if isinstance(group, h5py.Group) else None
    if not isinstance(entry, h5py.Dataset):
        found = "nothing" if entry is None else f"a {type(entry).__name__}"
        raise ValueError(f"expected weight array {index} {where}, found {found} (a .weights.h5 "
                         "file names a layer's variables '0', '1', ...)")
    if entry.dtype.kind in "SUOcMm":
        raise ValueError(f"the weight {where} holds {entry.dtype} values, not real numbers")
    try:
        return np.asarray(entry, dtype=np.float32)
    except (OSError, TypeError, ValueError) as error:  # HDF5 types NumPy cannot convert
        raise ValueError(f"the weight {where} cannot be read as float32: {error}") from None


def read(h5_file, model, source):
    """Reads weights from an open h5py File into ``model``, all checked before any is set."""
    updates = []
    for layer, path in _weight_groups(model):
        expected = layer.get_weights()
        node = h5_file[path] if path in h5_file else None
        group = node.get("vars") if isinstance(node, h5py.Group) else None
        group = group if isinstance(group, h5py.Group) else {}  # a foreign file's dataset
        if len(group) != len(expected):
            raise ValueError(f"Layer '{layer.name}' ({type(layer).__name__}) expected "
                             f"{len(expected)} variables, but {source} has {len(group)} at "
                             f"'{path}/vars'")
        arrays = []
        for i, current in enumerate(expected):
            value = _stored_weight(group, i, f"{source} at '{path}/vars/{i}'")
            if value.shape != current.shape:
                raise ValueError(f"Layer '{layer.name}' weight {i} has shape {current.shape} "
                                 f"but {source} has {value.shape} at '{path}/vars/{i}'")
            arrays.append(value)
        updates.append((layer, arrays))
    for layer, arrays in updates:
        if arrays:
            layer.set_weights(arrays)


def save_weights(model, filepath):
    """``model.save_weights('x.weights.h5')``, written atomically with gpuaccel's checksum
    trailer (HDF5 readers, Keras's included, ignore bytes past the file's recorded end)."""
    write_with_checksum(filepath, to_bytes(model))


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
    # Files Keras wrote carry no trailer: checked when present, accepted otherwise.
    read_bytes(verify(filepath, "weights file", required=False), model, repr(filepath))


def read_bytes(data, model, source):
    """Reads weights from the bytes of a .weights.h5 file (as stored inside a .keras zip)."""
    _require_h5py()
    try:
        h5_file = h5py.File(io.BytesIO(data), "r")
    except OSError as error:  # h5py's words for a truncated or foreign file name no file
        raise DataLossError(f"{source} is not a readable .weights.h5 (HDF5) file: {error}",
                            "load_weights", source) from None
    with h5_file:
        read(h5_file, model, source)
