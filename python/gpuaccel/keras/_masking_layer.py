"""Keras's Masking layer: marks the timesteps whose features all equal ``mask_value`` as
padding. gpuaccel's layers do not propagate Keras masks between layers yet, so the layer gives
what Keras's computes (the input with the masked timesteps zeroed) and ``compute_mask`` gives
the mask for code that passes it on by hand (``Attention(...)(..., mask=[...])``). Written in
Python from gpuaccel's ops, traced into the C++ step (_python_layer.py)."""
import numbers

from .. import _C
from .. import math as _math
from ._layer_base import Layer


class Masking(Layer):
    """``keras.layers.Masking(mask_value=0.0)`` on (batch, steps, features): a timestep is
    kept when any of its features differs from ``mask_value``."""

    def __init__(self, mask_value=0.0, **kwargs):
        if isinstance(mask_value, bool) or not isinstance(mask_value, numbers.Real):
            raise TypeError(f"Masking: `mask_value` must be a number, received "
                            f"mask_value={mask_value!r}")
        self.mask_value = mask_value
        self.supports_masking = True
        super().__init__(**kwargs)

    def _kept(self, inputs, keepdims):
        """1.0 where the timestep holds a feature other than mask_value, else 0.0."""
        differs = _C.cast(_math.not_equal(inputs, _C.scalar_like(self.mask_value, inputs)),
                          inputs._dtype_name)
        return _C.reduce("max", differs, [-1], keepdims)

    def call(self, inputs):
        return _C.binary("mul", inputs, self._kept(inputs, True))

    def compute_mask(self, inputs, mask=None):
        """The (batch, steps) boolean mask of the kept timesteps."""
        return _C.cast(self._kept(self._to_tensor(inputs), False), "bool")

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def _layer_config(self):
        return {"mask_value": self.mask_value}
