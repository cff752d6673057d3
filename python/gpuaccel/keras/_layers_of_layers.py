"""What Python layers that hold other layers share (an RNN its cell, StackedRNNCells its cells,
Bidirectional its two RNNs, TimeDistributed its layer): the inner weights trained by the outer
layer's traced step, Keras's names for them, their groups in .weights.h5 files, and configs
that hold the inner layers' configs.

The outer layer's traced call runs the inner layers' ops, so their weights must be weights of
the outer C++ layer too: ``adopt_weights`` registers the same tensors there. A Keras weights
file keeps them in the inner layers' own groups (``lstm/cell/vars``), which
``_saved_sublayers`` names for the .weights.h5 reader and writer (_keras_h5.py).
"""
from ._layer_serialization import deserialize, serialize
from ._layer_variables import labelled


def adopt_weights(owner, child, weights=None):
    """Registers ``child``'s weights (the same tensors), or the (name, tensor, trainable)
    triples ``weights`` of them, on ``owner``'s C++ layer as ``child.name/name``, so
    ``owner``'s traced step trains them (where ``child`` is trainable)."""
    for name, value, trainable in child._cpp.weights if weights is None else weights:
        owner._cpp.add_weight_value(f"{child.name}/{name}", value,
                                    bool(trainable and child.trainable))


def _serialize_held(value):
    """A held layer (or list of layers) as Keras serializes one inside another's config."""
    if isinstance(value, list):
        return [_serialize_held(item) for item in value]
    return serialize(value)


def _deserialize_held(value, custom_objects=None):
    """A layer (or a list of them) from ``_serialize_held``'s form; layers pass through (a
    Keras file's configs become layers in the .keras reader before they reach a
    constructor)."""
    if isinstance(value, list):
        return [_deserialize_held(item, custom_objects) for item in value]
    if not isinstance(value, dict):
        return value
    return deserialize(value, custom_objects=custom_objects)


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
            config[key] = _serialize_held(getattr(self, attribute))
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        for key in cls._held_layers:
            if config.get(key) is not None:
                config[key] = _deserialize_held(config[key], custom_objects)
        return super().from_config(config)
