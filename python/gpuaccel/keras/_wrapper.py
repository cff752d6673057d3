"""Keras's ``Wrapper``: the base of layers that hold another layer and run it inside their own
call (TimeDistributed, Bidirectional, SpectralNormalization). The wrapped layer's weights are
registered in the wrapper's C++ layer as well (the same tensors), so the wrapper's weights,
``set_weights`` and the training step see them, as Keras lists them under the wrapper."""
from ._layer_base import Layer
from ._layer_serialization import deserialize, serialize


class Wrapper(Layer):
    """``keras.layers.Wrapper(layer)``: subclasses define ``call``, which calls
    ``self.layer``."""

    # Keras files keep the wrapped layer's weights in its own group (_keras_h5.py refuses).
    _keras_nests_weights = True

    def __init__(self, layer, **kwargs):
        if not isinstance(layer, Layer):
            raise ValueError(f"Layer {layer} supplied to Wrapper isn't a supported layer type. "
                             "Please ensure wrapped layer is a valid Keras layer.")
        self.layer = layer
        super().__init__(**kwargs)

    def build(self, input_shape=None):
        if not self.layer.built:
            self.layer.build(input_shape)
        self._adopt_weights(self.layer._cpp.weights)

    def _adopt_weights(self, weights):
        """Registers (name, tensor, trainable) triples of the wrapped layer as the wrapper's,
        named as Keras's paths below the wrapper ('dense/kernel')."""
        for name, value, trainable in weights:
            self._cpp.add_weight_value(f"{self.layer.name}/{name}", value,
                                       bool(trainable and self.layer.trainable))

    def call(self, inputs, *args, **kwargs):
        # Keras's Wrapper has no call of its own: a subclass supplies it.
        return Layer.call(self, inputs, *args, **kwargs)

    def get_config(self):
        config = super().get_config()
        config["layer"] = serialize(self.layer)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        layer = deserialize(config.pop("layer"), custom_objects=custom_objects)
        return cls(layer, **config)
