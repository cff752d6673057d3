"""Keras's ``Wrapper``: the base of layers that hold another layer and run it inside their own
call (TimeDistributed, Bidirectional, SpectralNormalization). The wrapped layer's weights are
registered in the wrapper's C++ layer as well (the same tensors), so the wrapper's weights,
``set_weights`` and the training step see them, as Keras lists them under the wrapper; the
config holds the wrapped layer's (both as for any layer holding layers, _layers_of_layers.py)."""
from ._layer_base import Layer
from ._layers_of_layers import LayerOfLayers, adopt_weights


class Wrapper(LayerOfLayers, Layer):
    """``keras.layers.Wrapper(layer)``: subclasses define ``call``, which calls
    ``self.layer``."""

    # Keras files keep the wrapped layer's weights in its own group: _keras_h5.py refuses a
    # wrapper unless it names that group (_saved_sublayers, as TimeDistributed does).
    _keras_nests_weights = True
    _held_layers = {"layer": "layer"}

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
        adopt_weights(self, self.layer, weights)

    def call(self, inputs, *args, **kwargs):
        # Keras's Wrapper has no call of its own: a subclass supplies it.
        return Layer.call(self, inputs, *args, **kwargs)
