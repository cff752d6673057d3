"""``keras.utils``: ``to_categorical``, ``set_random_seed``, ``normalize`` and ``plot_model``
(the last only where pydot and graphviz are installed, as in Keras); ``Progbar``;
``PyDataset``/``Sequence`` (_py_dataset.py); ``pad_sequences``,
``timeseries_dataset_from_array``, ``split_dataset`` and ``pack/unpack_x_y_sample_weight``
(_data_preparation.py); ``img_to_array``; ``load_img``, ``array_to_img`` and ``save_img``
(_pil_images.py: PIL is imported only when they are called, as in Keras) and
``image_dataset_from_directory`` (_image_dataset.py) and ``audio_dataset_from_directory``
(_audio_dataset.py); ``clear_session``, ``is_keras_tensor``,
``get_source_inputs``, ``standardize_dtype`` (_global_state.py);
``serialize_keras_object``/``deserialize_keras_object`` (_object_serialization.py); Keras's
registry of user classes for saving (``register_keras_serializable``, ``get_custom_objects``,
``custom_object_scope``..., _object_registration.py, also in ``keras.saving``); ``get_file``
(_get_file.py).

``set_random_seed`` seeds every generator a training run draws from, as Keras 3's does:
Python's ``random``, NumPy's global generator and gpuaccel's (weight initializers, dropout,
``fit``'s shuffling). With ``gpuaccel.config.experimental.enable_op_determinism()`` two runs on
the same machine then produce the same weights.
"""
import random as _py_random

import numpy as np

from .. import _unsupported, errors
from .. import random as _random
from .._int_range import check_int
from .._tensor import Tensor
from ._data_preparation import (pack_x_y_sample_weight, pad_sequences, split_dataset,
                                timeseries_dataset_from_array, unpack_x_y_sample_weight)
from ._config_object import Config
from ._get_file import get_file
from ._global_state import clear_session, get_source_inputs, is_keras_tensor, standardize_dtype
from ._audio_dataset import audio_dataset_from_directory
from ._image_dataset import image_dataset_from_directory
from ._io_utils import (disable_interactive_logging, enable_interactive_logging,
                        is_interactive_logging_enabled)
from ._object_serialization import deserialize_keras_object, serialize_keras_object
from ._pil_images import array_to_img, load_img, save_img
from ._progbar import Progbar
from ._py_dataset import PyDataset, Sequence

from ._object_registration import (CustomObjectScope, custom_object_scope, get_custom_objects,
                                   get_registered_name, get_registered_object,
                                   register_keras_serializable)

__all__ = ["get_file", "to_categorical", "set_random_seed", "normalize", "plot_model", "Progbar",
           "PyDataset", "Sequence", "pad_sequences", "timeseries_dataset_from_array",
           "split_dataset", "pack_x_y_sample_weight", "unpack_x_y_sample_weight",
           "img_to_array", "load_img", "array_to_img", "save_img",
           "image_dataset_from_directory", "audio_dataset_from_directory", "clear_session",
           "get_source_inputs",
           "is_keras_tensor", "standardize_dtype", "serialize_keras_object",
           "deserialize_keras_object", "CustomObjectScope", "custom_object_scope", "get_custom_objects",
           "get_registered_name", "get_registered_object", "register_keras_serializable",
           "Config", "model_to_dot", "disable_interactive_logging", "enable_interactive_logging",
           "is_interactive_logging_enabled"]


def to_categorical(x, num_classes=None):
    """Class vectors (integers) to one-hot float32 NumPy rows, as Keras: a trailing axis of size
    1 is dropped first; ``num_classes`` defaults to max + 1."""
    array = np.asarray(x.numpy() if isinstance(x, Tensor) else x)
    if array.size and not np.issubdtype(array.dtype, np.integer):
        if not np.all(np.equal(np.mod(array, 1), 0)):
            raise ValueError(f"to_categorical expects integer class labels, got values such as "
                             f"{array.ravel()[0]!r}")
    array = array.astype(np.int64)
    shape = array.shape
    if len(shape) > 1 and shape[-1] == 1:
        shape = shape[:-1]
    flat = array.ravel()
    if num_classes is None:
        num_classes = int(flat.max()) + 1 if flat.size else 0
    num_classes = check_int(num_classes, "to_categorical: num_classes", 0)
    if flat.size and (flat.min() < 0 or flat.max() >= num_classes):
        raise ValueError(f"to_categorical: labels must lie in [0, {num_classes}), got values in "
                         f"[{flat.min()}, {flat.max()}]")
    try:
        out = np.zeros((flat.size, num_classes), dtype=np.float32)
    except (MemoryError, ValueError):  # NumPy's "Maximum allowed dimension exceeded" too
        raise errors.ResourceExhaustedError(
            f"[to_categorical] OOM when allocating {flat.size * num_classes * 4} bytes for the "
            f"one-hot rows of shape ({flat.size}, {num_classes})", "to_categorical") from None
    out[np.arange(flat.size), flat] = 1.0
    return out.reshape(shape + (num_classes,))


def set_random_seed(seed):
    """Seeds Python's ``random``, NumPy's and gpuaccel's generators with ``seed``."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError("Expected `seed` argument to be an integer. "
                         f"Received: seed={seed!r} (of type {type(seed)})")
    if not 0 <= seed < 2 ** 32:
        # NumPy's legacy global seed takes 32 bits; Keras passes the seed straight to it.
        raise ValueError(f"`seed` must be in [0, 2**32). Received: seed={seed}")
    seed = int(seed)
    _py_random.seed(seed)
    np.random.seed(seed)
    _random.set_seed(seed)


def normalize(x, axis=-1, order=2):
    """Rows scaled to unit L-``order`` norm (NumPy in, NumPy out, as Keras)."""
    array = np.asarray(x.numpy() if isinstance(x, Tensor) else x, dtype=np.float32)
    norm = np.linalg.norm(array, ord=order, axis=axis, keepdims=True)
    return array / np.where(norm == 0, 1, norm)


def img_to_array(img, data_format=None, dtype=None):
    """An image (a PIL image, or any array-like of ``(height, width[, channels])``) as a 3-D
    float32 (or ``dtype``) NumPy array, channels last unless ``data_format='channels_first'``;
    a 2-D image gains a channel axis, as in Keras."""
    data_format = "channels_last" if data_format is None else data_format
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"Unknown data_format: {data_format}")
    array = np.asarray(img.numpy() if isinstance(img, Tensor) else img,
                       dtype="float32" if dtype is None else dtype)
    if array.ndim == 2:
        array = array[None] if data_format == "channels_first" else array[..., None]
    elif array.ndim == 3:
        if data_format == "channels_first":
            array = array.transpose(2, 0, 1)
    else:
        raise ValueError(f"Unsupported image shape: {array.shape}")
    return array


def _pydot(caller):
    """pydot, or Keras's ImportError naming ``caller``."""
    try:
        import pydot
    except ImportError as error:
        raise ImportError(f"You must install pydot (`pip install pydot`) for {caller} to "
                          "work.") from error
    return pydot


def _require_built(model):
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by calling "
                         "`build()` or by calling the model on a batch of data.")


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                 rankdir="TB", expand_nested=False, dpi=200, subgraph=False,
                 show_layer_activations=False, show_trainable=False, splines="ortho", **kwargs):
    """A ``pydot.Dot`` of a built model's layers in order (one record node each, edges from each
    layer to the next), as ``plot_model`` draws it. Needs pydot, as Keras's; the ``show_*``
    options and ``expand_nested`` are accepted and draw nothing more."""
    _require_built(model)
    pydot = _pydot("model_to_dot")
    if kwargs.pop("layer_range", None) is not None:
        raise ValueError("Argument `layer_range` is no longer supported.")
    if kwargs:
        raise ValueError(f"Unrecognized keyword arguments: {kwargs}")
    graph = pydot.Dot(graph_type="digraph", rankdir=rankdir)
    previous = None
    for layer in model.layers:
        label = f"{layer.name} ({type(layer).__name__})"
        graph.add_node(pydot.Node(layer.name, label=label, shape="record"))
        if previous is not None:
            graph.add_edge(pydot.Edge(previous, layer.name))
        previous = layer.name
    return graph


def plot_model(model, to_file="model.png", **kwargs):
    """A diagram of a Sequential/functional model's layers, drawn with pydot + graphviz."""
    _require_built(model)
    _pydot("`plot_model`")
    graph = model_to_dot(model, rankdir=kwargs.get("rankdir", "TB"))
    extension = to_file.rsplit(".", 1)[-1] if "." in to_file else "png"
    graph.write(to_file, format="raw" if extension == "dot" else extension)
    return to_file


__getattr__ = _unsupported.module_getattr(__name__, "keras.utils", {
})
