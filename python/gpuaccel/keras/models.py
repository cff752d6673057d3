"""``keras.Model`` (the functional form ``Model(inputs, outputs)``) and ``keras.Sequential``.

A model is a graph of C++ layers (``_C.LayerGraph``): Sequential is a chain, the functional
form whatever DAG the KerasTensors recorded. Weights live in the layers; training is
``_trainer.Trainer``'s."""
import itertools
import json
import re
import weakref

import numpy as np

from .. import _C
from .._tensor import Tensor, from_numpy, no_grad, tape_active
from . import (_call_arguments, _keras_archive, _keras_h5, _layer_outputs, _mask_flow,
               _model_classes, _nested_models, _python_layer, _saved_model_writer, _summary,
               _weights_file)
from ._io_utils import print_msg
from ._data_adapter import first_inputs, inputs_in_order, shareable_array
from ._input_layer import InputLayer
from ._symbolic import Input, KerasTensor, is_symbolic
from ._trainer import Trainer

_model_counters = {}


def _auto_name(prefix):
    counter = _model_counters.setdefault(prefix, itertools.count())
    index = next(counter)
    return prefix if index == 0 else f"{prefix}_{index}"


def _with_batch(shape):
    return (None,) + tuple(shape)


class Model(Trainer):
    """``keras.Model(inputs, outputs, name=None)``: the functional API."""

    def __new__(cls, *args, **kwargs):
        model = super().__new__(cls)
        if not cls.__module__.startswith("gpuaccel."):
            # Keras 3 records a subclass's constructor arguments: get_config returns them
            model._auto_config = _python_layer.constructor_arguments(cls, args, kwargs)
        return model

    def __init__(self, inputs=None, outputs=None, name=None, trainable=True, **kwargs):
        _check_model_dtype(kwargs.pop("dtype", None))  # in Keras's configs of subclasses
        if kwargs:
            raise TypeError(f"Model() got unexpected keyword arguments {sorted(kwargs)}")
        self._init_trainer()
        self.name = name or _auto_name(re.sub(r"(?<!^)(?=[A-Z])", "_", type(self).__name__).lower()
                                       if type(self) not in (Model,) else "functional")
        self.trainable = trainable
        self._cpp_graph = None
        self._nodes = []
        if type(self) is Model or inputs is not None or outputs is not None:
            if inputs is None or outputs is None:
                raise ValueError("Model(inputs, outputs) needs both inputs and outputs, made "
                                 "with keras.Input and layer calls; or subclass keras.Model "
                                 "and define call()")
            self._init_functional(inputs, outputs)

    def to_json(self, **kwargs):
        """Keras's ``model.to_json()``: the model's config as JSON (Sequential and functional
        models; ``model_from_json`` rebuilds it, with new weights)."""
        return json.dumps(_keras_archive._model_config(self), **kwargs)

    def get_config(self):
        """A subclassed model's config, as Keras 3's: name, trainable, dtype and the
        constructor arguments (a Sequential's or functional model's is its .keras config)."""
        if not self._is_subclassed():
            return _keras_archive._model_config(self)["config"]
        config = {"name": self.name, "trainable": self.trainable, "dtype": "float32"}
        if type(self).get_config is Model.get_config and "_auto_config" in vars(self):
            config.update(_python_layer.auto_config(self))
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        if not issubclass(cls, Sequential) and cls.call is Model.call:
            return _keras_archive.model_from_config(
                {"class_name": "Functional", "config": config}, custom_objects)
        if cls is Sequential:
            return _keras_archive.model_from_config(
                {"class_name": "Sequential", "config": config}, custom_objects)
        try:
            return cls(**config)
        except Exception as error:  # Keras 3's type and words, naming the failing class
            raise TypeError(f"Error when deserializing class '{cls.__name__}' using "
                            f"config={config}.\n\nException encountered: {error}") from error

    def _is_subclassed(self):
        """A ``class M(keras.Model)`` with its own ``call`` (TF's expert quickstart style)."""
        return type(self).call is not Model.call and not isinstance(self, Sequential)

    def call(self, inputs, training=None, mask=None):
        raise NotImplementedError(f"{type(self).__name__} must define call(self, inputs) or be "
                                  "built as Model(inputs, outputs)")

    def _trace_subclassed(self, shapes):
        """Builds a subclassed model's graph by running its ``call`` once on keras.Input
        placeholders: the layers it calls record the graph, which then runs (and trains) in C++
        like a functional model. A ``call`` that also uses tensor ops (which need values) runs
        as one traced Python layer instead (``_init_traced_call``)."""
        from ._symbolic import Input
        inputs = [Input(shape=tuple(s[1:])) for s in shapes]
        single = inputs[0] if len(inputs) == 1 else inputs
        try:
            try:
                outputs = self.call(single, training=False)
            except TypeError as error:
                if "training" not in str(error):
                    raise
                outputs = self.call(single)
        except (TypeError, ValueError, NotImplementedError):
            outputs = None  # a tensor op met a KerasTensor
        if not _is_output_structure(outputs):
            self._init_traced_call(shapes)
            return
        self._init_functional(single, outputs)

    def _init_traced_call(self, shapes):
        """The graph of a subclassed model whose ``call`` uses tensor ops: one C++ layer that
        replays ``call`` traced once per input signature (keras/_python_layer.py), after one
        call on zeros has built the layers it uses."""
        from . import _python_layer
        from .._tensor import tensor as make_tensor
        zeros = [make_tensor(np.zeros(tuple(1 if d is None or d < 0 else int(d) for d in s),
                                      np.float32)) for s in shapes]
        self._pending_losses = []  # what its add_loss calls give on zeros is not kept
        try:
            with no_grad():
                x = zeros[0] if len(zeros) == 1 else zeros
                try:
                    returned = self.call(x, training=False)
                except TypeError as error:
                    if "training" not in str(error):
                        raise
                    returned = self.call(x)
        finally:
            self._pending_losses = None
        self._traced_layers = self._tracked_layers()
        cpp = self._call_layer_cpp = _python_layer.make_model_call_layer(self, self._traced_layers)
        graph = _C.LayerGraph(len(shapes))
        node = graph.add_node(cpp, list(range(len(shapes))))
        graph.set_outputs(self._traced_outputs(graph, node, returned))
        self._nodes = []
        self._cpp_graph = graph

    def _traced_outputs(self, graph, node, returned):
        """The graph's outputs for a traced ``call`` that returned ``returned`` (on zeros): its
        node, or for a list/tuple/dict of tensors (which the call packs into one, as a Python
        layer's several outputs: keras/_layer_outputs.py) one OutputPart node per output, and
        the structure predict and __call__ give back."""
        if not isinstance(returned, (list, tuple, dict)):
            return [node]
        self._output_keys = sorted(returned) if isinstance(returned, dict) else None
        self._output_dict_order = list(returned) if isinstance(returned, dict) else None
        self._outputs_as_tuple = isinstance(returned, tuple)
        flat = [returned[key] for key in self._output_keys] if self._output_keys else returned
        if not all(isinstance(t, Tensor) for t in flat):
            raise NotImplementedError(f"{type(self).__name__}.call() returned a nested "
                                      "structure: several outputs must be a flat list, tuple "
                                      "or dict of tensors")
        self._single_output = len(flat) == 1 and self._output_keys is None
        parts = self._output_parts = _layer_outputs.output_parts(
            self, [tuple(t.shape) for t in flat])
        self.output_names = [part.name for part in parts]
        return [graph.add_node(part._cpp, [node]) for part in parts]

    def _tracked_layers(self):
        """The layers this model's attributes hold (lists too), in assignment order, as Keras
        tracks a subclassed model's layers."""
        from .layers import Layer
        seen, out = set(), []
        for value in vars(self).values():
            for item in (value if isinstance(value, (list, tuple)) else [value]):
                if isinstance(item, (Layer, Model)) and id(item) not in seen:
                    seen.add(id(item))
                    out.append(item)
        return out

    # ---- graph ----

    def _init_functional(self, inputs, outputs):
        self._single_input = isinstance(inputs, KerasTensor)
        self.inputs = [inputs] if self._single_input else list(inputs)
        # Several outputs: a list (tuple) or a dict, flattened as Keras flattens them (a dict
        # by sorted keys); predict and __call__ return the same structure.
        self._output_keys = sorted(outputs) if isinstance(outputs, dict) else None
        self._output_dict_order = list(outputs) if isinstance(outputs, dict) else None
        self._outputs_as_tuple = isinstance(outputs, tuple)
        if isinstance(outputs, KerasTensor):
            self.outputs = [outputs]
        elif isinstance(outputs, dict):
            self.outputs = [outputs[key] for key in self._output_keys]
        else:
            self.outputs = list(outputs)
        for t in self.inputs + self.outputs:
            if not isinstance(t, KerasTensor):
                raise ValueError("Model inputs and outputs must be KerasTensors (from "
                                 f"keras.Input and layer calls); got {type(t).__name__}")
        self._single_output = isinstance(outputs, KerasTensor) or (
            not isinstance(outputs, dict) and len(self.outputs) == 1)
        if not self.outputs:
            raise ValueError("Model(inputs, outputs) needs at least one output")
        # Keras: the names of the layers that produce the outputs (they name the logs).
        self.output_names = [t.node.layer.name if t.node is not None else t.name
                             for t in self.outputs]
        # the first output carrying a timestep mask: a loss over it is refused (_trainer.py)
        self._output_mask = next((t._keras_mask for t in self.outputs
                                  if getattr(t, "_keras_mask", None) is not None), None)
        ids = {id(t): i for i, t in enumerate(self.inputs)}
        self._nodes = []

        def visit(tensor):
            if id(tensor) in ids:
                return
            if tensor.node is None:
                raise ValueError(f"Graph disconnected: cannot obtain value for tensor {tensor!r}: "
                                 "it is a keras.Input that is not in the model's inputs")
            for parent in tensor.node.inputs:
                visit(parent)
            self._nodes.append(tensor.node)
            ids[id(tensor)] = len(self.inputs) + len(self._nodes) - 1

        for out in self.outputs:
            visit(out)
        graph = _C.LayerGraph(len(self.inputs))
        _call_arguments.check_one_variant_per_layer(self._nodes, _nested_models.graph_layer)
        for node in self._nodes:
            graph.add_node(_nested_models.graph_layer(node), [ids[id(t)] for t in node.inputs])
        graph.set_outputs([ids[id(t)] for t in self.outputs])
        self._cpp_graph = graph

    def _graph(self):
        if self._cpp_graph is None:
            raise ValueError(f"The model '{self.name}' has not been built yet: give the first "
                             "layer an input_shape, start with keras.Input(shape), or call "
                             "fit/predict on data first")
        return self._cpp_graph

    def _ensure_built_for(self, data):
        if self._cpp_graph is None and self._is_subclassed():
            first = data.x if hasattr(data, "x") else first_inputs(data)
            if first is not None:
                self._build_from_shapes([_with_batch(a.shape[1:]) for a in first])
        self._graph()

    def _keeps_integer_inputs(self):
        if not hasattr(self, "inputs"):  # a subclassed model before its first call
            return False
        return any(not _is_float_dtype(t.dtype) for t in self.inputs)

    @property
    def layers(self):
        """Keras 3's list: a functional model's InputLayers first (``keras/_input_layer.py``),
        then its layers in graph order, a model called inside it as one entry; a subclassed
        model's, the layers its call ran."""
        return self._input_layers() + [layer for layer in _nested_models.keras_layers(self)
                               if not getattr(layer, "_is_timestep_mask", False)]

    def _input_layers(self):
        """A functional model's InputLayers, one per input, kept by the model (the same objects
        at every ``layers`` call, as Keras's)."""
        inputs = getattr(self, "inputs", None)
        if self._is_subclassed() or not inputs:
            return []
        kept = self.__dict__.get("_input_layer_objects")
        if kept is None or [layer.output for layer in kept] != list(inputs):
            kept = self.__dict__["_input_layer_objects"] = [InputLayer.of(t) for t in inputs]
        return list(kept)

    def _graph_layers(self):
        """The layers that compute (``layers`` without the InputLayers), which the weights,
        the graph and the weight files are made of."""
        if getattr(self, "_traced_layers", None) is not None:
            return list(self._traced_layers)
        seen, out = set(), []
        for node in self._nodes:
            if getattr(node.layer, "_is_timestep_mask", False):
                continue  # a hidden node: a timestep mask (keras/_masking.py)
            if id(node.layer) not in seen and not _layer_outputs.is_output_part(node.layer):
                seen.add(id(node.layer))
                out.append(node.layer)
        return out

    @property
    def built(self):
        return self._cpp_graph is not None

    def get_layer(self, name=None, index=None):
        if index is not None:
            if not 0 <= index < len(self.layers):
                raise ValueError(f"Was asked to retrieve layer at index {index} but model only "
                                 f"has {len(self.layers)} layers.")
            return self.layers[index]
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[layer.name for layer in self.layers]}.")

    # ---- calling ----

    def __call__(self, inputs, training=None, mask=None):
        if training is None:  # a model called inside a Python call() inherits its training
            training = _python_layer.outer_training()
        if is_symbolic(inputs):
            return _nested_models.call_symbolic(self, inputs)
        inputs = inputs_in_order(inputs, self._input_names())
        xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
        keep = self._keeps_integer_inputs()
        tensors = []
        for x in xs:
            if isinstance(x, Tensor):
                tensors.append(x if keep or x.dtype.is_floating else x.to("float32"))
            else:
                array = np.asarray(x)
                if array.dtype.kind not in "fiub" and array.dtype.name != "bfloat16":
                    # as predict: NumPy's cast would read '3' or a date as a number
                    raise ValueError(f"x has dtype {array.dtype}, which is not numeric")
                if array.dtype.kind in "iub" and keep:
                    array = array.astype(np.int64)
                elif array.dtype != np.float32:
                    array = array.astype(np.float32)
                tensors.append(from_numpy(shareable_array(array)))
        if not self.built:
            self._build_from_shapes([(None,) + tuple(t.shape[1:]) for t in tensors])
        if tape_active():
            return self._pack_outputs(self._forward(tensors, bool(training)))
        # Outside a GradientTape, TF records nothing: the result is a plain value (.numpy()).
        with no_grad():
            return self._pack_outputs(self._forward(tensors, bool(training)))

    def _forward(self, tensors, training):
        if _nested_models.traced_as_one_layer(self):
            # its one C++ layer, called as a layer is: inside another model's traced call()
            # that is one recorded op (a graph's forward is not recorded)
            packed = self._call_layer_cpp.call(tensors, training)
            if not self._has_several_outputs():
                return [packed]
            # several outputs travel packed in one tensor; its OutputPart layers unpack it
            return [part._cpp.call([packed], training) for part in self._output_parts]
        return self._graph().forward(tensors, training)

    def _has_several_outputs(self):
        return not getattr(self, "_single_output", True)

    def _pack_outputs(self, values):
        """The graph's output values in the structure the model was built with: the value of
        a one-output model, else a list, or a dict for Model(inputs, {name: output})."""
        values = list(values)
        if not self._has_several_outputs():
            return values[0]
        if self._output_keys is not None:  # Keras returns the dict in the order it was given
            by_key = dict(zip(self._output_keys, values))
            return {key: by_key[key] for key in self._output_dict_order}
        return tuple(values) if self._outputs_as_tuple else values

    def _build_from_shapes(self, shapes):
        if self._cpp_graph is None and self._is_subclassed():
            self._trace_subclassed(shapes)
        self._graph()
        self._run_after_build()

    def _run_after_build(self):
        """Runs what waited for this model's weights to exist: a tf.train.Checkpoint restored
        before the model was built restores into it now (gpuaccel.train, as TensorFlow defers)."""
        for callback in self.__dict__.pop("_after_build", []):
            callback()

    def build(self, input_shape):
        """Builds a subclassed model for inputs of ``input_shape`` (batch dimension included)."""
        shapes = input_shape if isinstance(input_shape, list) and input_shape and isinstance(
            input_shape[0], (tuple, list)) else [input_shape]
        self._build_from_shapes([tuple(s) for s in shapes])

    # ---- weights ----

    @property
    def weights(self):
        return [w for layer in self._graph_layers() for w in layer.weights]

    @property
    def trainable_weights(self):
        if not self.trainable:
            return []
        return [w for layer in self._graph_layers() for w in layer.trainable_weights]

    @property
    def non_trainable_weights(self):
        if not self.trainable:
            return self.weights
        return [w for layer in self._graph_layers() for w in layer.non_trainable_weights]

    trainable_variables = trainable_weights
    variables = weights

    @property
    def losses(self):
        """The losses the last call added (``add_loss`` in Python layers, and in a subclassed
        model's own call), which fit adds to the compiled loss; a GradientTape loop adds them
        itself."""
        call_layer = self.__dict__.get("_call_layer_cpp")
        if call_layer is not None and self.__dict__.get("_traced_layers") is not None:
            return list(call_layer.added_losses())  # its call's: the layers' and its own
        return self._layers_losses()

    def _layers_losses(self):
        return [loss for layer in self._graph_layers() for loss in getattr(layer, "losses", [])]

    def add_loss(self, loss):
        """Keras's ``self.add_loss(value)`` in a subclassed model's ``call``: the value (summed
        to a scalar) joins the loss of this step, as a layer's does."""
        _python_layer.add_loss(self, loss)

    def get_weights(self):
        return [w for layer in self._graph_layers() for w in layer.get_weights()]

    def set_weights(self, weights):
        weights = list(weights)
        expected = sum(len(layer.weights) for layer in self._graph_layers())
        if len(weights) != expected:
            raise ValueError(f"You called `set_weights(weights)` on model '{self.name}' with a "
                             f"weight list of length {len(weights)}, but the model was "
                             f"expecting {expected} weights.")
        start = 0
        for layer in self._graph_layers():
            count = len(layer.weights)
            layer.set_weights(weights[start:start + count])
            start += count

    def count_params(self):
        if not self.built:
            raise ValueError(f"You tried to call `count_params` on model '{self.name}', but the "
                             "model has not been built.")
        return sum(layer.count_params() for layer in self._graph_layers())

    def _weight_paths(self):
        paths = []
        for layer in self._graph_layers():
            if isinstance(layer, Model):  # a nested model: its paths under its name
                paths.extend(f"{layer.name}/{path}" for path in layer._weight_paths())
                continue
            names = [name for name, _, _ in layer._cpp.weights]
            paths.extend(f"{layer.name}/{name}" for name in names)
        return paths

    def save_weights(self, filepath, overwrite=True):
        """``.weights.h5`` paths get Keras 3's HDF5 layout (real Keras reads them); any other
        path gpuaccel's own .npz checkpoint."""
        import os
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"{filepath!r} exists and overwrite=False")
        if os.fspath(filepath).endswith(".weights.h5"):
            return _keras_h5.save_weights(self, filepath)
        _weights_file.save(filepath, self._weight_paths(), self.get_weights())

    def load_weights(self, filepath, skip_mismatch=False):
        import os
        if os.fspath(filepath).endswith(".weights.h5"):
            return _keras_h5.load_weights(self, filepath)
        if os.fspath(filepath).endswith(".keras"):
            return _keras_archive.load_weights(self, filepath)
        shapes = [w.shape for w in self.get_weights()]
        self.set_weights(_weights_file.load(filepath, self._weight_paths(), shapes))

    def save(self, filepath, overwrite=True, **kwargs):
        """``model.save('x.keras')``: Keras 3's archive (Sequential models), loadable by
        ``keras.models.load_model`` here and in real Keras."""
        import os
        if not overwrite and os.path.exists(filepath):
            raise FileExistsError(f"{filepath!r} exists and overwrite=False")
        _keras_archive.save_model(self, filepath)

    def export(self, filepath, format="tf_saved_model", verbose=None, input_signature=None,
               **kwargs):
        """Keras 3's ``model.export(path)``: a TensorFlow SavedModel for inference whose
        ``serve`` endpoint runs the model (TF Serving, ``keras.layers.TFSMLayer``,
        ``tf.saved_model.load``); TensorFlow writes it, so it must be installed."""
        return _saved_model_writer.export(self, filepath, format=format, verbose=verbose,
                                          input_signature=input_signature, **kwargs)

    # ---- description ----

    def _summary_rows(self):
        rows = [(t.name, "InputLayer", t.shape, 0) for t in self.inputs]
        several = {}  # a layer with several outputs: their shapes, not the packed one's
        for n in self._nodes:
            if _layer_outputs.is_output_part(n.layer):
                several.setdefault(id(n.inputs[0]), []).append(n.output.shape)
        rows += [(n.layer.name, type(n.layer).__name__, several.get(id(n.output), n.output.shape),
                  n.layer.count_params())
                 for n in self._nodes if not _layer_outputs.is_output_part(n.layer)
                 and not getattr(n.layer, "_is_timestep_mask", False)]
        return rows

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False, layer_range=None):
        if not self.built and not isinstance(self, Sequential):
            raise ValueError("This model has not yet been built. Build the model first by "
                             "calling `build()` or by calling the model on a batch of data.")
        if not self.built:  # Keras 3 lists a Sequential model's layers, unbuilt
            text = _summary.format_summary(self.name, [(layer.name, type(layer).__name__, None,
                                                        None) for layer in self.layers], 0, 0)
            (print_fn or print_msg)(text)
            return
        trainable = sum(int(np.prod(w.shape)) for w in self.trainable_weights)
        total = sum(int(np.prod(w.shape)) for w in self.weights)
        text = _summary.format_summary(self.name, self._summary_rows(), trainable,
                                       total - trainable)
        (print_fn or print_msg)(text)

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name}, built={self.built}>"


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """``keras.models.load_model('x.keras')`` (Sequential and functional models; compile again
    before fit)."""
    return _keras_archive.load_model(filepath, custom_objects, compile, safe_mode)


def model_from_json(json_string, custom_objects=None):
    """Keras's ``keras.models.model_from_json``: the model ``to_json`` described, with new
    weights; Python layer classes come from ``custom_objects`` or the registry."""
    return _keras_archive.model_from_config(json.loads(json_string), custom_objects)


def clone_model(model, input_tensors=None, clone_function=None, call_function=None,
                recursive=False, **kwargs):
    """``keras.models.clone_model(model)``: a Sequential or functional model of new layers
    made from the configs of ``model``'s (the same architecture and names, new weights
    initialized as the layers' own, as Keras)."""
    if input_tensors is not None or clone_function is not None or call_function is not None \
            or recursive or kwargs:
        raise NotImplementedError("clone_model(model) is supported with its defaults only; "
                                  "input_tensors, clone_function, call_function and recursive "
                                  "are not supported yet")
    if not isinstance(model, Model) or model._is_subclassed():
        raise ValueError("Arguments clone_function and input_tensors are only supported for "
                         f"Sequential models or Functional models. Received model of type "
                         f"'{type(model).__name__}'; gpuaccel clones Sequential and functional "
                         "models only")
    # the user's classes and functions (activations), which the configs name
    own_objects = {type(layer).__name__: type(layer) for layer in model._graph_layers()
                   if not type(layer).__module__.startswith(__package__)}
    own_objects.update({value.__name__: value for layer in model._graph_layers()
                        for value in layer.get_config().values()
                        if callable(value) and not isinstance(value, type)})
    return _keras_archive.model_from_config(_keras_archive._model_config(model), own_objects)


def from_keras(keras_model):
    """The same model with the same weights, built from a live (real) Keras model."""
    return _keras_archive.from_keras(keras_model)


def _check_model_dtype(dtype):
    """A model's ``dtype`` argument: float32 (a name or Keras's serialized DTypePolicy), the
    only one a model-wide policy here takes (mixed precision is set globally)."""
    name = dtype.get("config", {}).get("name") if isinstance(dtype, dict) else dtype
    if name not in (None, "float32"):
        raise NotImplementedError(f"keras.Model(dtype={name!r}) is not supported; set a global "
                                  "policy with keras.mixed_precision.set_global_policy")


def _is_output_structure(outputs):
    """Whether a traced ``call`` returned KerasTensors: one, a list or tuple, or a dict."""
    if isinstance(outputs, KerasTensor):
        return True
    values = list(outputs.values()) if isinstance(outputs, dict) else outputs
    return isinstance(values, (list, tuple)) and bool(values) and all(
        isinstance(v, KerasTensor) for v in values)


def _is_float_dtype(dtype):
    return str(dtype).startswith(("float", "bfloat"))


def _dataset_input_shape(data):
    """The per-example input shape a Dataset's element_spec declares (its batches' x), or None
    where it is not a single input of fully known shape: Keras builds an unbuilt Sequential
    from the first batch fit sees, and image_dataset_from_directory's batches declare theirs."""
    dataset = getattr(data, "dataset", None)
    spec = getattr(dataset, "element_spec", None)
    if isinstance(spec, tuple) and spec:
        spec = spec[0]
    shape = getattr(spec, "shape", None)
    if shape is None or len(shape) < 2 or any(d is None for d in tuple(shape)[1:]):
        return None
    return tuple(int(d) for d in tuple(shape)[1:])


class Sequential(Model):
    """``keras.Sequential([layers...])``: a chain; built as soon as the input shape is known
    (an ``input_shape=`` on the first layer, a leading ``keras.Input``, or the first data)."""

    def __init__(self, layers=None, trainable=True, name=None):
        Trainer._init_trainer(self)
        self.name = name or _auto_name("sequential")
        self.trainable = trainable
        self._cpp_graph = None
        self._layers = []
        self._input = None
        self._output_shapes = []
        for layer in layers or []:
            self.add(layer)

    def add(self, layer, rebuild=True):
        if isinstance(layer, KerasTensor):
            if self._layers or self._input is not None:
                raise ValueError("keras.Input can only be the first entry of a Sequential model")
            self._input = layer
            return
        if not hasattr(layer, "_cpp") and not isinstance(layer, Model):
            raise TypeError("The added layer must be an instance of class Layer. Received: "
                            f"layer={layer!r} of type {type(layer)}.")
        if any(existing.name == layer.name for existing in self._layers):
            raise ValueError(f"All layers added to a Sequential model should have unique names. "
                             f"Name '{layer.name}' is already the name of a layer in this model.")
        self._layers.append(layer)
        self._cpp_graph = None
        self._cpp_trainer = None
        if rebuild:
            shape = self._known_input_shape()
            if shape is not None:
                self._build_from_shapes([shape])

    def pop(self):
        if not self._layers:
            raise TypeError("There are no layers in the model.")
        layer = self._layers.pop()
        self._cpp_graph = None
        self._cpp_trainer = None
        shape = self._known_input_shape()
        if shape is not None and self._layers:
            self._build_from_shapes([shape])
        return layer

    def _known_input_shape(self):
        if self._input is not None:
            return self._input.shape
        if self._layers and getattr(self._layers[0], "_input_shape_arg", None) is not None:
            return _with_batch(self._layers[0]._input_shape_arg)
        return None

    def build(self, input_shape=None):
        input_shape = input_shape or self._known_input_shape()
        if input_shape is None:
            raise ValueError("You must provide an `input_shape` argument.")
        self._build_from_shapes([tuple(input_shape)])

    def _build_from_shapes(self, shapes):
        if not self._layers:
            raise ValueError(f"Sequential model '{self.name}' has no layers; add some first")
        shape = tuple(shapes[0])
        self._built_input_shape = shape
        output_shapes = []
        for layer in self._layers:
            if isinstance(layer, Model):  # a model used as a layer (_nested_models.py)
                shape = _nested_models.output_shape(layer, shape)
            else:
                if not layer.built:
                    layer.build(shape)
                shape = layer.compute_output_shape(shape)
                if isinstance(shape, _layer_outputs.SeveralShapes):
                    if layer is not self._layers[-1]:
                        raise NotImplementedError(
                            f"layer '{layer.name}' returns {len(shape)} tensors, which a "
                            "Sequential model allows only from its last layer; build the "
                            "model with the functional API, keras.Model(inputs, outputs)")
                    output_shapes.append(shape)  # the model's outputs (_several_outputs)
                    continue
                shape = tuple(shape)
            output_shapes.append(shape)
        graph = _C.LayerGraph(1)
        value, mask = 0, None  # mask: the graph value of the current timestep mask
        for layer, input_shape in zip(self._layers,
                                      [self._built_input_shape] + output_shapes[:-1]):
            if isinstance(layer, Model):
                _mask_flow.output_mask(layer, mask)  # refuses a mask
                value = _nested_models.add_to_graph(layer, graph, [value])
                continue
            uses_mask = mask is not None and hasattr(layer, "_keeps_timestep_mask")
            output = graph.add_node(layer._cpp, [value] + ([mask] if uses_mask else []))
            mask = _mask_flow.output_mask(layer, mask)
            if getattr(layer, "_masks_timesteps", lambda: False)():
                mask_layer = layer._mask_layer()
                if not mask_layer.built:
                    mask_layer.build(input_shape)
                mask = graph.add_node(mask_layer._cpp, [value])
            value = output
        self._output_mask = mask  # a loss over it is refused (_trainer.py)
        graph.set_outputs(self._several_outputs(graph, value, output_shapes[-1]))
        self._output_shapes = output_shapes
        self._cpp_graph = graph
        self._symbolic_input = None  # (the chain _call_layers_symbolically makes, once)
        for layer in self._layers:
            layer.__dict__["_sequential_owner"] = weakref.ref(self)
        self._run_after_build()

    def _call_layers_symbolically(self):
        """Keras builds a Sequential model as a functional one, so each layer's ``input`` and
        ``output`` are KerasTensors from the model's input (a ``keras.Model(inputs=seq.inputs,
        outputs=[layer.output ...])`` extracts features): the layers called on it, once."""
        if getattr(self, "_symbolic_input", None) is not None:
            return
        value = self._symbolic_input = self._input if self._input is not None else \
            Input(batch_shape=self._built_input_shape)
        for layer in self._layers:
            value = layer(value)

    def _several_outputs(self, graph, value, shape):
        """The graph's output ids: ``value``, or where the last layer returns several tensors
        (Keras allows it there) one ``OutputPart`` node per output, which predict and
        ``model(x)`` return as that layer's call does, and ``compile`` takes per output."""
        several = isinstance(shape, _layer_outputs.SeveralShapes)
        self._single_output = not several
        self._output_keys = self._output_dict_order = None
        if not several:
            return [value]
        leaves = _layer_outputs.shape_leaves(shape)
        parts = _layer_outputs.output_parts(self._layers[-1], leaves,
                                            getattr(shape, "dtypes", None))
        self._outputs_as_tuple = not shape.as_list
        self.output_names = [part.name for part in parts]
        return [graph.add_node(part._cpp, [value]) for part in parts]

    def _ensure_built_for(self, data):
        if self._cpp_graph is None:
            first = data.x[0] if hasattr(data, "x") else (first_inputs(data) or [None])[0]
            shape = first.shape[1:] if first is not None else _dataset_input_shape(data)
            if shape is None:
                raise ValueError(f"Sequential model '{self.name}' is not built: give the first "
                                 "layer input_shape= or start with keras.Input(shape)")
            self._build_from_shapes([_with_batch(shape)])

    def _keeps_integer_inputs(self):
        if self._input is not None:
            return not _is_float_dtype(self._input.dtype)
        return bool(self._layers) and type(self._layers[0]).__name__ == "Embedding"

    @property
    def layers(self):
        return list(self._layers)

    def _graph_layers(self):
        return list(self._layers)

    @property
    def inputs(self):
        return [self._input] if self._input is not None else None

    @property
    def input_shape(self):
        return getattr(self, "_built_input_shape", None) or self._known_input_shape()

    @property
    def output_shape(self):
        if not self._output_shapes:
            raise AttributeError(f"Sequential model '{self.name}' has not been built yet")
        return self._output_shapes[-1]

    def _summary_rows(self):
        return [(layer.name, type(layer).__name__, shape, layer.count_params())
                for layer, shape in zip(self._layers, self._output_shapes)]


_model_classes.register(Model, Sequential)
