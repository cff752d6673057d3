"""Keras 3's ``keras.layers.TFSMLayer``: a SavedModel (from ``model.export`` or
``tf.saved_model.save`` in gpuaccel) used as a layer of a gpuaccel model.

The SavedModel comes back through ``_saved_model_reader`` as a gpuaccel model. A model's
forward pass is one native graph call that a Python layer's trace cannot record, so where the
model is a plain stack of layer calls (a Sequential, or a functional model whose nodes each call
one layer on tensors) this layer's call runs those layers one by one, which the trace records,
and their weights, registered as this layer's (the same tensors), train with ``fit`` as Keras's
TFSMLayer fine-tunes them. Any other model runs whole, for inference, its weights registered
non-trainable (docs/training.md, "TensorFlow SavedModels").
"""
from . import _layer_outputs, _model_classes, _python_layer, _saved_model_reader
from ._layer_base import Layer


def _endpoint(loaded, name, filepath):
    """The callable Keras's TFSMLayer picks: an attribute of the loaded object, else a
    signature."""
    if hasattr(loaded, name):
        return getattr(loaded, name)
    if name in loaded.signatures:
        raise NotImplementedError(
            f"TFSMLayer: endpoint {name!r} of {filepath!r} is a signature, which returns a dict "
            "of tensors, and a gpuaccel layer returns tensors: use call_endpoint='serve' (what "
            f"model.export writes), or tf.saved_model.load(path).signatures[{name!r}] outside "
            "a model")
    raise ValueError(f"The endpoint '{name}' is neither an attribute of the reloaded SavedModel, "
                     "nor an entry in the `signatures` field of the reloaded SavedModel. Select "
                     "another endpoint via the `call_endpoint` argument. Available endpoints for "
                     f"this SavedModel: {list(loaded.signatures)}")


def _one_plain_layer(layer):
    """Whether calling ``layer`` on tensors is all a graph step does with it: no model used as
    a layer, no timestep mask, no output split in parts."""
    return not (isinstance(layer, _model_classes.model_class())
                or getattr(layer, "_masks_timesteps", lambda: False)()
                or getattr(layer, "_is_timestep_mask", False)
                or _layer_outputs.is_output_part(layer))


def _layer_by_layer(model):
    """A function running ``model``'s forward pass as its layers' calls, or None where the
    model is not a plain stack of layer calls."""
    if type(model) is _model_classes.sequential_class():
        if not all(_one_plain_layer(layer) for layer in model._graph_layers()):
            return None

        def run_sequential(inputs, training):
            for layer in model._graph_layers():
                inputs = layer(inputs, training=training)
            return inputs
        return run_sequential
    nodes = model._nodes
    if model._has_several_outputs() or not all(
            _one_plain_layer(node.layer) and node.call_layer is None and not node.models
            for node in nodes):
        return None

    def run_functional(inputs, training):
        values = dict(zip(map(id, model.inputs), inputs if len(model.inputs) > 1 else [inputs]))
        for node in nodes:
            args = [values[id(t)] for t in node.inputs]
            values[id(node.output)] = node.layer(args[0] if len(args) == 1 else args,
                                                 training=training)
        return values[id(model.outputs[0])]
    return run_functional


class TFSMLayer(Layer):
    def __init__(self, filepath, call_endpoint="serve", call_training_endpoint=None,
                 trainable=True, name=None, dtype=None, **kwargs):
        super().__init__(name=name, dtype=dtype, trainable=trainable, **kwargs)
        self.filepath, self.call_endpoint = filepath, call_endpoint
        self.call_training_endpoint = call_training_endpoint
        loaded = _saved_model_reader.load(filepath, what="TFSMLayer")
        self.call_endpoint_fn = _endpoint(loaded, call_endpoint, filepath)
        self.call_training_endpoint_fn = None if call_training_endpoint is None else _endpoint(
            loaded, call_training_endpoint, filepath)
        self._run_layers = _layer_by_layer(loaded._model)
        for path, value, trainable_weight in _python_layer._held_weights(loaded._model._graph_layers()):
            self._cpp.add_weight_value(path.replace("/", "_"), value,
                                       trainable_weight and self._run_layers is not None)

    def call(self, inputs, training=False):
        if training and self.call_training_endpoint_fn is not None:
            return self.call_training_endpoint_fn(inputs)
        if self._run_layers is not None:  # the same computation, recorded by the trace
            return self._run_layers(inputs, training=False)
        return self.call_endpoint_fn(inputs)

    def get_config(self):
        config = super().get_config()
        config.update({"filepath": self.filepath, "call_endpoint": self.call_endpoint,
                       "call_training_endpoint": self.call_training_endpoint})
        return config
