"""Keras 3's ``.keras`` archive for Sequential models: ``model.save('x.keras')`` and
``keras.models.load_model('x.keras')``, readable by real Keras and reading its files.

The archive (Keras 3's ``saving_lib``: facts, not its code) is a zip of ``metadata.json``
(``keras_version``, ``date_saved``), ``config.json`` (the model serialized as
``{"module", "class_name", "config", "registered_name"}``; a Sequential's config lists its
layers, an ``InputLayer`` with ``batch_shape`` first) and ``model.weights.h5`` (the layout of
``_keras_h5``). Sequential and functional models are written and read (a functional config
lists each layer's ``inbound_nodes``, the ``keras_history`` of the tensors each call took);
subclassed models are rebuilt from their code. ``from_keras`` rebuilds a live Keras model
through the same reader.
"""
import datetime
import inspect
import io
import json
import os
import zipfile

import numpy as np

from .. import nest, version as _version
from .._atomic_file import atomic_write_bytes
from ..errors import DataLossError
from . import (_call_arguments, _keras_h5, _layer_outputs, _model_classes, _nested_models,
               _object_registration, _object_serialization, _saved_model_format)

_CONFIG = "config.json"
_METADATA = "metadata.json"
_WEIGHTS = "model.weights.h5"
# The Keras saving format this writer follows (read back by Keras 3.0 and later).
_FORMAT_KERAS_VERSION = "3.0.0"


def _layer_entry(layer, input_shape=None):
    """A layer's entry in a model's config; ``input_shape`` (a model's, where it is a layer)
    becomes Keras's ``build_config``."""
    model_types = (_model_classes.model_class(),)
    if isinstance(layer, model_types) and not layer._is_subclassed():
        return _model_config(layer)  # a Sequential or functional model used as a layer
    config = dict(layer.get_config())
    for key, value in config.items():
        if key.endswith("activation") and callable(value):  # a custom activation function
            config[key] = _object_serialization.serialize_keras_object(value)
    cls = type(layer)
    # A Python layer is named as Keras names a custom class (its module, its class name as the
    # registered name), so load_model finds it in custom_objects here and in Keras. gpuaccel's
    # own Python-written layers (keras/_*_layers.py) are built-ins: Keras's class name
    # (`_keras_class_name` where it differs, e.g. ClippedReLU is a ReLU).
    class_name = getattr(cls, "_keras_class_name", cls.__name__)
    custom = cls.__module__ != __package__ + ".layers" and not (
        cls.__module__.startswith(__package__ + "._") and hasattr(_builtin_layers(), class_name))
    try:
        serialized = json.loads(json.dumps(config, default=list))
    except TypeError as error:  # e.g. a Lambda's function object
        raise NotImplementedError(
            f"save: the config of layer '{layer.name}' ({cls.__name__}) cannot be written to "
            f"JSON ({error}); save the weights with save_weights() and rebuild the model in "
            "code") from None
    entry = {"module": cls.__module__ if custom else "keras.layers", "class_name": class_name,
             "config": serialized,
             "registered_name": _object_registration.get_registered_name(cls) if custom else None}
    if isinstance(layer, model_types):  # Keras builds a subclassed model from this
        entry["build_config"] = {"input_shape": list(input_shape)}
    return entry


def _builtin_layers():
    from . import layers
    return layers


def _input_entry(tensor):
    return {"module": "keras.layers", "class_name": "InputLayer",
            "config": {"batch_shape": list(tensor.shape), "dtype": str(tensor.dtype),
                       "sparse": False, "name": tensor.name},
            "registered_name": None, "name": tensor.name, "inbound_nodes": []}


def _sequential_config(model):
    input_entry = _input_entry(_symbolic_input([None] + [int(d) for d in model.input_shape[1:]]))
    del input_entry["inbound_nodes"], input_entry["name"]
    return {"module": "keras", "class_name": "Sequential",
            "config": {"name": model.name, "trainable": bool(model.trainable),
                       "dtype": "float32",
                       "layers": [input_entry] + [
                           _layer_entry(layer, shape) for layer, shape in zip(
                               model._graph_layers(), [model.input_shape] + model._output_shapes[:-1])],
                       "build_input_shape": input_entry["config"]["batch_shape"]},
            "registered_name": None}


def _symbolic_input(batch_shape):
    from ._symbolic import KerasTensor
    return KerasTensor(tuple(batch_shape), "float32", name="input_layer")


def _functional_config(model):
    """Keras 3's functional config: the inputs as InputLayers, then each layer with the
    ``keras_history`` (layer name, call index, 0) of the tensors each of its calls took."""
    from ._merging_layers import _Merge
    history = {}
    for tensor in model.inputs:
        history[id(tensor)] = [tensor.name, 0, 0]
    entries, by_layer = [_input_entry(t) for t in model.inputs], {}
    for unit in _config_units(model):
        if isinstance(unit, _nested_models.ModelCall):
            layer, inputs, outputs = unit.model, unit.inputs, unit.outputs
        else:
            node = unit
            layer, inputs, outputs = node.layer, node.inputs, [node.output]
        if getattr(layer, "_is_timestep_mask", False):
            continue  # a timestep mask: Keras carries it with the tensor, not as a layer
        if _layer_outputs.is_output_part(layer):  # output i of a call: (name, call, i)
            history[id(node.output)] = history[id(node.inputs[0])][:2] + [layer.index]
            continue
        if id(layer) not in by_layer:
            entry = _layer_entry(layer, inputs[0].shape)
            entry["name"], entry["inbound_nodes"] = layer.name, []
            by_layer[id(layer)] = entry
            entries.append(entry)
        entry = by_layer[id(layer)]
        args = [{"class_name": "__keras_tensor__",
                 "config": {"shape": list(t.shape), "dtype": str(t.dtype),
                            "keras_history": history[id(t)]}} for t in inputs
                if id(t) in history]  # not the timestep masks
        if getattr(unit, "call_arguments", None) is not None:  # a Python layer's extra ones
            args, kwargs = _call_arguments.keras_node_arguments(unit, args)
        elif hasattr(layer, "_keras_node_arguments"):  # a layer whose inputs carry call options
            args, kwargs = layer._keras_node_arguments(args)
        else:  # a list input is one argument (merge layers, a model of several inputs)
            one_list = isinstance(layer, _Merge) or (
                isinstance(layer, _model_classes.model_class()) and len(args) > 1)
            args, kwargs = ([args] if one_list else args), {}
        entry["inbound_nodes"].append({"args": args, "kwargs": kwargs})
        for index, output in enumerate(outputs):
            history[id(output)] = [layer.name, len(entry["inbound_nodes"]) - 1, index]
    ends = [[_end_history(history[id(t)], by_layer) for t in ts]
            for ts in (model.inputs, model.outputs)]
    ins, outs = [e[0] if len(e) == 1 else e for e in ends]
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": model.name, "trainable": bool(model.trainable), "layers": entries,
                       "input_layers": ins, "output_layers": outs},
            "registered_name": "Functional"}


def _end_history(history, entries):
    """A model input's or output's ``keras_history`` in ``input_layers``/``output_layers``:
    there Keras counts a functional model's calls from 1 (its node 0 is the one linking its
    own inputs to its outputs); ``inbound_nodes`` count them from 0."""
    name, node, index = history
    shifted = any(e["name"] == name and e["class_name"] == "Functional" for e in entries.values())
    return [name, node + 1 if shifted else node, index]


def _config_units(model):
    """``model._nodes`` in the order a config lists them, a model called in this one (inlined
    as the nodes whose ``model_call`` is that call) as one unit, its ``ModelCall``, which Keras
    records as one node of the model: each unit after the units it takes inputs from."""
    producer, units = {}, {}
    for node in model._nodes:
        unit = node.model_call or node
        units.setdefault(id(unit), unit)
        producer[id(node.output)] = unit
    placed, order = set(), []

    def place(unit):
        if id(unit) in placed:
            return
        placed.add(id(unit))
        for tensor in unit.inputs:
            if id(tensor) in producer:
                place(producer[id(tensor)])
        order.append(unit)

    for unit in units.values():
        place(unit)
    return order


def _model_config(model):
    """``model``'s serialized form in a .keras config (Sequential or functional)."""
    Sequential = _model_classes.sequential_class()
    if not model.built:
        raise ValueError("The model has not been built yet; call it on data or give it an "
                         "input shape before saving")
    if type(model) is Sequential:
        return _sequential_config(model)
    if not isinstance(model, Sequential) and not model._is_subclassed():
        return _functional_config(model)
    raise NotImplementedError(
        f"model.save('.keras') writes Sequential and functional models; a subclassed "
        f"{type(model).__name__} is rebuilt from its code: use "
        "model.save_weights('x.weights.h5')")


def save_model(model, filepath):
    filepath = os.fspath(filepath)
    if not filepath.endswith(".keras"):
        raise ValueError(f"Invalid `filepath` argument: expected a `.keras` extension. "
                         f"Received: filepath={filepath}")
    config = _model_config(model)
    metadata = {"keras_version": _FORMAT_KERAS_VERSION, "gpuaccel_version": _version.gpuaccel,
                "date_saved": datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S")}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(_METADATA, json.dumps(metadata))
        archive.writestr(_CONFIG, json.dumps(config))
        archive.writestr(_WEIGHTS, _keras_h5.to_bytes(model))
    atomic_write_bytes(filepath, buffer.getvalue())


def _plain_value(key, value):
    """A Keras-serialized config value as our layers take it (None: leave the default)."""
    if isinstance(value, dict) and "class_name" in value:
        if key == "dtype":  # a DTypePolicy
            return value.get("config", {}).get("name", "float32")
        return None  # initializers, regularizers...: weights are loaded afterwards anyway
    if isinstance(value, list):
        return tuple(value)
    return value


def _build_layer(entry, custom_objects=None):
    from . import layers as _layers
    name = entry.get("class_name")
    custom = _object_registration.find_custom_class((entry.get("registered_name"), name),
                                                    custom_objects)
    if custom is not None:
        # A Python layer or model: Keras rebuilds custom classes with their own from_config
        # (a subclassed model builds when it is called).
        return custom.from_config(dict(entry.get("config", {})))
    if name in ("Sequential", "Functional"):  # a model used as a layer
        return model_from_config(entry, custom_objects)
    cls = getattr(_layers, name, None)
    if not isinstance(cls, type) or not issubclass(cls, _layers.Layer):
        raise NotImplementedError(f"load_model: the layer class {name!r} is not supported by "
                                  "gpuaccel yet (see docs/compatibility.md); a Python layer "
                                  "class loads when registered with "
                                  "@keras.saving.register_keras_serializable() or passed in "
                                  "custom_objects={name: cls}")
    accepted = set()
    # SimpleRNN, LSTM and GRU take their cell's arguments too
    cell_classes = getattr(getattr(cls, "_cell_class", None), "__mro__", ())
    for klass in cls.__mro__ + cell_classes:
        if "__init__" in vars(klass):
            accepted |= set(inspect.signature(klass.__init__).parameters)
    accepted |= {"name", "dtype", "trainable"}
    kwargs = {}
    for key, value in entry.get("config", {}).items():
        if key in getattr(cls, "_held_layers", {}) and value is not None:
            # a wrapper's layer, an RNN's cell, StackedRNNCells's cells: built the same way
            kwargs[key] = [_build_layer(v, custom_objects) for v in value] \
                if isinstance(value, list) else _build_layer(value, custom_objects)
        elif key.endswith("activation") and isinstance(value, dict) and \
                value.get("class_name") == "function":  # a custom activation function
            kwargs[key] = _object_serialization.deserialize_keras_object(value, custom_objects)
        elif key in accepted and key not in ("self", "kwargs"):
            plain = _plain_value(key, value)
            if plain is not None:
                kwargs[key] = plain
    return cls(**kwargs)


def _input_from_config(layer_config):
    """``keras.Input`` for a serialized InputLayer (``batch_shape``, or Keras 2's
    ``batch_input_shape``)."""
    from ._symbolic import Input
    shape = layer_config.get("batch_shape") or layer_config.get("batch_input_shape")
    return Input(shape=tuple(shape[1:]), name=layer_config.get("name"))


def _sequential_from_config(body, custom_objects=None):
    Sequential = _model_classes.sequential_class()
    layers = []
    for entry in body.get("layers", []):
        if entry.get("class_name") == "InputLayer":
            layers.append(_input_from_config(entry.get("config", {})))
        else:
            layers.append(_build_layer(entry, custom_objects))
    model = Sequential(layers, name=body.get("name"))
    if not model.built and body.get("build_input_shape"):
        model.build(tuple(body["build_input_shape"]))
    return model


def _history_names(value):
    """The (layer name, node, tensor) triples a serialized call argument refers to."""
    if isinstance(value, dict):
        if value.get("class_name") == "__keras_tensor__":
            return [tuple(value["config"]["keras_history"])]
        return [h for v in value.values() for h in _history_names(v)]
    if isinstance(value, (list, tuple)):
        if len(value) == 3 and isinstance(value[0], str) and all(
                isinstance(v, int) for v in value[1:]):
            return [tuple(value)]
        return [h for v in value for h in _history_names(v)]
    return []


def _tensors_of(value, tensors):
    """The KerasTensors a serialized keyword argument names: a list for a list."""
    found = [tensors[tuple(h)] for h in _history_names(value)]
    return found if isinstance(value, list) else found[0]


def _functional_from_config(body, custom_objects=None):
    """A functional model from Keras 3's config: each layer's ``inbound_nodes`` name the
    tensors (``keras_history``) its call takes."""
    Model = _model_classes.model_class()
    tensors = {}
    for entry in body.get("layers", []):
        name = entry.get("name") or entry["config"]["name"]
        if entry.get("class_name") == "InputLayer":
            tensors[(name, 0, 0)] = _input_from_config(entry.get("config", {}))
            continue
        if entry.get("class_name") == "NotEqual" and entry.get("module") == "keras.src.ops.numpy":
            # Keras's op computing an Embedding(mask_zero=True) mask, which the layers' `mask`
            # arguments take; gpuaccel's layers carry that mask themselves (_masking.py)
            continue
        layer = _build_layer(entry, custom_objects)
        for node_index, node in enumerate(entry.get("inbound_nodes", [])):
            history = _history_names(node.get("args", node))
            # tensors passed by keyword (an RNN's initial_state); `mask` is Keras's mask op's
            # output, which gpuaccel's layers carry themselves
            keywords = {key: value for key, value in node.get("kwargs", {}).items()
                        if key != "mask" and _history_names(value)}
            needed = history + [h for value in keywords.values() for h in _history_names(value)]
            if any(tuple(h) not in tensors for h in needed):
                raise NotImplementedError(f"load_model: layer {name!r} takes inputs this reader "
                                          "cannot follow (shared layers or nested models)")
            args = [tensors[tuple(h)] for h in history]
            if hasattr(layer, "_call_keras_node"):
                result = layer._call_keras_node(args, node.get("kwargs", {}))
            elif _call_arguments.takes_keras_node_arguments(layer, node):
                result = layer(*[_tensors_of(a, tensors) for a in node.get("args", [])],
                               **_call_arguments.keras_node_keywords(node, tensors, _tensors_of,
                                                                      _history_names))
            else:
                keywords = {key: _tensors_of(value, tensors) for key, value in keywords.items()}
                result = layer(args[0] if len(args) == 1 else args, **keywords)
            for index, tensor in enumerate(nest.flatten(result)):
                tensors[(name, node_index, index)] = tensor
    # a functional model's calls count from 1 there (_end_history)
    functional = {entry.get("name") for entry in body.get("layers", [])
                  if entry.get("class_name") == "Functional"}
    inputs, outputs = [[tensors[(name, node - (name in functional), index)]
                        for name, node, index in _history_names(body[key])]
                       for key in ("input_layers", "output_layers")]
    return Model(inputs[0] if len(inputs) == 1 else inputs,
                 outputs[0] if len(outputs) == 1 else outputs, name=body.get("name"))


def model_from_config(config, custom_objects=None):
    """A gpuaccel model from a Keras 3 serialized model (Sequential or Functional); Python layer
    classes come from ``custom_objects`` (class name -> class)."""
    kind = config.get("class_name")
    if kind == "Sequential":
        return _sequential_from_config(config["config"], custom_objects)
    if kind in ("Functional", "Model"):
        return _functional_from_config(config["config"], custom_objects)
    raise NotImplementedError(f"gpuaccel can rebuild Sequential and functional Keras models; "
                              f"this is a {kind!r} (a subclassed model: rebuild it in code and "
                              "use load_weights)")


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """``keras.models.load_model('x.keras')`` for Sequential and functional models (compile
    state is not restored: compile the model again before ``fit``)."""
    filepath = os.fspath(filepath)
    if _saved_model_format.contains_saved_model(filepath):  # Keras 3's words, then gpuaccel's
        raise ValueError(f"File format not supported: filepath={filepath}. Note that the legacy "
                         "SavedModel format is not supported by `load_model()` in Keras 3. In "
                         "order to reload a TensorFlow SavedModel as an inference-only layer, "
                         f"use `keras.layers.TFSMLayer({filepath}, call_endpoint='serve')`, or "
                         "tf.saved_model.load(path) (gpuaccel loads the SavedModels it wrote)")
    if not filepath.endswith(".keras"):
        raise ValueError(f"Invalid filename: expected a `.keras` extension. Received: "
                         f"filepath={filepath}")
    if not os.path.exists(filepath):
        raise FileNotFoundError(f"No file or directory found at {filepath}")
    config_text, weights = _read_members(filepath, (_CONFIG, _WEIGHTS))
    try:
        config = json.loads(config_text)
    except ValueError as error:
        raise DataLossError(f"{filepath!r}: its {_CONFIG} is not JSON ({error})", "load_model",
                            filepath) from None
    if not isinstance(config, dict) or not isinstance(config.get("config"), dict):
        raise ValueError(f"{filepath!r}: its {_CONFIG} does not describe a Keras model (expected "
                         "an object with 'class_name' and a 'config' object)")
    try:
        model = model_from_config(config, custom_objects)
    except (KeyError, AttributeError, IndexError) as error:  # a config of another shape
        raise ValueError(f"{filepath!r}: its {_CONFIG} does not describe a Keras model this "
                         f"reader understands ({type(error).__name__}: {error})") from None
    _keras_h5.read_bytes(weights, model, repr(filepath))
    return model


def _read_members(filepath, names):
    """The bytes of ``names`` in the zip at ``filepath``; DataLossError (an OSError, as Keras
    raises) naming the file when it is no zip, is cut short or lacks one of them."""
    if os.path.isdir(filepath):
        raise IsADirectoryError(f"{filepath!r} is a directory, not a .keras archive")
    try:
        with zipfile.ZipFile(filepath, "r") as archive:
            present = set(archive.namelist())
            missing = [n for n in names if n not in present]
            if missing:
                raise DataLossError(f"{filepath!r} is not a complete .keras archive: it has no "
                                    f"{', '.join(missing)}", "load_model", filepath)
            return [archive.read(n) for n in names]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError) as error:
        raise DataLossError(f"{filepath!r} is not a readable .keras archive (a zip file): "
                            f"{error}; it may be truncated or not a Keras model file",
                            "load_model", filepath) from None


def from_keras(keras_model):
    """``gpuaccel.keras.models.from_keras(model)``: the same Sequential or functional model with
    the same weights, built from a live Keras model (for "compare against Keras" exercises)."""
    config = {"class_name": type(keras_model).__name__, "config": keras_model.get_config()}
    if config["class_name"] not in ("Sequential", "Functional", "Model"):
        raise NotImplementedError(f"from_keras rebuilds Sequential and functional models; "
                                  f"{config['class_name']} is a subclassed model")
    model = model_from_config(config)
    if not model.built:
        raise ValueError("from_keras needs a built Keras model (give it an Input or call it)")
    ours = {layer.name: layer for layer in model.layers}
    for layer in keras_model.layers:
        weights = layer.get_weights()
        if weights:
            if layer.name not in ours:
                raise ValueError(f"from_keras: layer {layer.name!r} has no gpuaccel twin")
            ours[layer.name].set_weights([np.asarray(w, dtype=np.float32) for w in weights])
    return model


def load_weights(model, filepath):
    """``model.load_weights('x.keras')``: the weights inside a .keras archive."""
    (weights,) = _read_members(os.fspath(filepath), (_WEIGHTS,))
    _keras_h5.read_bytes(weights, model, repr(os.fspath(filepath)))
