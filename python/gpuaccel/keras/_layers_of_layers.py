"""What Python layers that hold other layers share (an RNN its cell, StackedRNNCells its cells,
Bidirectional its two RNNs, TimeDistributed its layer): the inner weights trained by the outer
layer's traced step, Keras's names for them, their groups in .weights.h5 files, and configs
that hold the inner layers' configs.

The outer layer's traced call runs the inner layers' ops, so their weights must be weights of
the outer C++ layer too: ``adopt_weights`` registers the same tensors there. A Keras weights
file keeps them in the inner layers' own groups (``lstm/cell/vars``), which
``_saved_sublayers`` names for the .weights.h5 reader and writer (_keras_h5.py).
"""
from ._layer_base import Layer
from ._layer_variables import labelled


def adopt_weights(owner, child, prefix):
    """Registers ``child``'s weights (the same tensors) on ``owner``'s C++ layer as
    ``prefix/name``, so ``owner``'s traced step trains them."""
    for name, value, trainable in child._cpp.weights:
        owner._cpp.add_weight_value(f"{prefix}/{name}", value, bool(trainable))


def serialize_layer(layer):
    """A layer as Keras serializes one inside another's config."""
    if isinstance(layer, list):
        return [serialize_layer(item) for item in layer]
    return {"module": "keras.layers", "class_name": type(layer).__name__,
            "config": layer.get_config(), "registered_name": None}


def deserialize_layer(config):
    """A layer (or a list of them) from ``serialize_layer``'s form; layers pass through. (A
    Keras file's configs become layers in the .keras reader before they reach a constructor.)"""
    if isinstance(config, list):
        return [deserialize_layer(item) for item in config]
    if not isinstance(config, dict):
        return config
    return _layer_class(config["class_name"]).from_config(config["config"])


def _layer_class(name):
    """The gpuaccel layer class called ``name``, found among Layer's subclasses (looking it up
    in keras.layers would import that module back)."""
    pending = [Layer]
    while pending:
        cls = pending.pop()
        if cls.__name__ == name and cls.__module__.startswith("gpuaccel."):
            return cls
        pending += cls.__subclasses__()
    raise ValueError(f"Unknown layer class {name!r} in a serialized layer config")


class LayerOfLayers:
    """Mixin (before Layer in the bases) for layers holding layers. ``_held_layers`` maps each
    config key holding a layer (or a list of layers) to the attribute holding it; subclasses
    name the weight groups of a Keras file in ``_saved_sublayers()``."""

    _held_layers = {}

    @property
    def weights(self):
        """Keras's names: a variable's ``name`` is its own ('kernel'), its ``path`` goes
        through the inner layers ('lstm/lstm_cell/kernel')."""
        out = []
        for name, value, trainable in self._cpp.weights:
            variable = labelled(self, name, value, trainable)
            variable.name = name.rsplit("/", 1)[-1]
            out.append(variable)
        return out

    def get_config(self):
        config = super().get_config()
        for key, attribute in self._held_layers.items():
            config[key] = serialize_layer(getattr(self, attribute))
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        for key in cls._held_layers:
            if config.get(key) is not None:
                config[key] = deserialize_layer(config[key])
        return super().from_config(config)
