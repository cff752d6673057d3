"""Keras 3's ``keras.layers.TFSMLayer``: a SavedModel (from ``model.export`` or
``tf.saved_model.save`` in gpuaccel) used as a layer of a gpuaccel model.

The SavedModel comes back through ``_saved_model_reader`` as a gpuaccel model, so the layer's
call runs that model on gpuaccel. It is for inference: the model's forward pass is one native
graph call that the Python layer's trace cannot record, so fit cannot differentiate through it.
Its weights are registered as this layer's (the same tensors, so ``weights`` and weight files
see them), non-trainable whatever ``trainable`` says; Keras's TFSMLayer can fine-tune them
(docs/training.md, "TensorFlow SavedModels").
"""
from . import _python_layer, _saved_model_reader
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
        for path, value, _ in _python_layer._held_weights(loaded._model.layers):
            self._cpp.add_weight_value(path.replace("/", "_"), value, False)  # see the top

    def call(self, inputs, training=False):
        if training and self.call_training_endpoint_fn is not None:
            return self.call_training_endpoint_fn(inputs)
        return self.call_endpoint_fn(inputs)

    def get_config(self):
        config = super().get_config()
        config.update({"filepath": self.filepath, "call_endpoint": self.call_endpoint,
                       "call_training_endpoint": self.call_training_endpoint})
        return config
