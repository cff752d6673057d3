"""Keras's image preprocessing layers that are plain tensor ops (CenterCrop), written in Python
from gpuaccel's ops and traced once per input signature into the C++ step (_python_layer.py).
Rescaling is a C++ layer; the random augmentation layers are not here yet."""
import numbers

from .. import _C
from ._layer_base import Layer, _data_format


class CenterCrop(Layer):
    """``keras.layers.CenterCrop(height, width)``: the central height x width window of
    (batch, height, width, channels) images or one (height, width, channels) image. An image
    smaller than the window would be resized by Keras; gpuaccel has no resize op yet and says
    so."""

    def __init__(self, height, width, data_format=None, **kwargs):
        for value, arg in ((height, "height"), (width, "width")):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
                raise ValueError(f"CenterCrop: `{arg}` must be a positive integer, received "
                                 f"{arg}={value!r}")
        self.height, self.width = int(height), int(width)
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim not in (3, 4):
            raise ValueError(f"CenterCrop expects (batch, height, width, channels) images or one "
                             f"(height, width, channels) image, received shape "
                             f"{tuple(inputs.shape)}")
        h_axis = inputs.ndim - 3
        height, width = inputs.shape[h_axis], inputs.shape[h_axis + 1]
        if height < self.height or width < self.width:
            raise NotImplementedError(
                f"CenterCrop({self.height}, {self.width}) on images of {height}x{width}: Keras "
                "resizes images smaller than the window, and gpuaccel has no resize op yet; "
                "resize them before the model")
        top, left = (height - self.height) // 2, (width - self.width) // 2
        ranges = [(0, d, 1) for d in inputs.shape]
        ranges[h_axis] = (top, top + self.height, 1)
        ranges[h_axis + 1] = (left, left + self.width, 1)
        return _C.slice(inputs, ranges)

    def _layer_config(self):
        return {"data_format": self.data_format, "height": self.height, "width": self.width}
