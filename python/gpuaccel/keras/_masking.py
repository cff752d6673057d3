"""Keras's timestep masks (``Embedding(mask_zero=True)``, ``Masking`` in _masking_layer.py) as
far as gpuaccel carries them: from their source, through layers that leave the time steps as
they are, into the recurrent layers, which skip the masked steps.

Keras attaches a mask to a layer's output and every layer that supports masking uses or passes
it on; a layer graph node here has one output, so the mask is a value of its own: a hidden
``TimestepMask`` node computes it, as a (batch, time, 1) float tensor of 1 (kept) and 0
(masked), from the source layer's input, and a layer that uses it (RNN, Bidirectional) takes it
as one more input (its ``_call_inputs`` appends the ``_keras_mask`` it finds on its input).
How masks flow from layer to layer is _mask_flow.py's.
"""
from .. import _C
from .._tensor import Tensor
from ._layer_base import Layer


class TimestepMask(Layer):
    """A hidden node: the (batch, time, 1) keep-mask of a mask source's input, as 1.0/0.0 —
    ids other than 0 (``Embedding(mask_zero=True)``), or steps with any feature other than
    ``mask_value`` (``Masking``)."""

    _is_timestep_mask = True  # models leave it out of `layers`, summaries and configs

    def __init__(self, mask_value=None, **kwargs):
        self.mask_value = mask_value  # None: integer ids, 0 masked
        super().__init__(**kwargs)

    def call(self, inputs):
        masked_value = 0 if self.mask_value is None else self.mask_value
        equal = _C.cast(_C.binary("equal", inputs, _C.scalar_like(masked_value, inputs)),
                        "float32")
        differs = _C.binary("sub", _C.scalar_like(1.0, equal), equal)
        if self.mask_value is None:
            return _C.expand_dims(differs, -1)
        return _C.reduce("max", differs, [-1], True)

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:2]) + (1,)


class MaskSource:
    """Mixin (before Layer in the bases) for layers whose output carries a timestep mask when
    ``_masks_timesteps()``; ``_mask_value`` is None for integer ids (0 masked)."""

    _mask_value = None

    def _masks_timesteps(self):
        return True

    def compute_mask(self, inputs, mask=None):
        """Keras's boolean (batch, time) mask of ``inputs``, or None when this layer does not
        mask."""
        if not self._masks_timesteps():
            return None
        inputs = self._to_tensor(inputs)
        return _C.cast(_C.squeeze(self._mask_layer().call(inputs), [-1]), "bool")

    def _mask_layer(self):
        layer = self.__dict__.get("_timestep_mask")
        if layer is None:
            layer = self._timestep_mask = TimestepMask(self._mask_value,
                                                       name=f"{self.name}_mask")
        return layer

    def __call__(self, *args, **kwargs):
        output = super().__call__(*args, **kwargs)
        if self._masks_timesteps():
            source = args[0] if args else kwargs.get("inputs")
            if not isinstance(output, Tensor):  # a KerasTensor: the mask is a node of its own
                output._keras_mask = self._mask_layer()(source)
            else:
                output._keras_mask = self._mask_layer().call(self._to_tensor(source))
        return output

