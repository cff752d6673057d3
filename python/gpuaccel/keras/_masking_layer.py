"""Keras's Masking layer: marks the timesteps whose features all equal ``mask_value`` as
padding. Its output carries that timestep mask to the layers after it (_masking.py: the
recurrent layers skip the masked steps, _mask_flow.py says which layers pass it on), and
``compute_mask`` gives it for code that passes it on by hand
(``Attention(...)(..., mask=[...])``). Written in Python from gpuaccel's ops, traced into the
C++ step (_python_layer.py)."""
import numbers

from .. import _C
from ._layer_base import Layer
from ._masking import MaskSource


class Masking(MaskSource, Layer):
    """``keras.layers.Masking(mask_value=0.0)`` on (batch, steps, features): a timestep is
    kept when any of its features differs from ``mask_value``; the masked ones are zeroed."""

    def __init__(self, mask_value=0.0, **kwargs):
        if isinstance(mask_value, bool) or not isinstance(mask_value, numbers.Real):
            raise TypeError(f"Masking: `mask_value` must be a number, received "
                            f"mask_value={mask_value!r}")
        self.mask_value = mask_value
        self._mask_value = float(mask_value)  # what the TimestepMask compares with
        self.supports_masking = True
        super().__init__(**kwargs)

    def call(self, inputs):
        kept = self._mask_layer().call(inputs)  # (batch, steps, 1) of 1.0/0.0, float32
        return _C.binary("mul", inputs, _C.cast(kept, inputs._dtype_name))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def _layer_config(self):
        return {"mask_value": self.mask_value}
