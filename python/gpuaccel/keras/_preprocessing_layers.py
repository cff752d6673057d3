"""Keras's image preprocessing layers that are plain tensor ops (CenterCrop, Resizing), written
in Python from gpuaccel's ops and traced once per input signature into the C++ step
(_python_layer.py). Rescaling is a C++ layer; the random augmentation layers are in
_augmentation_layers.py.

Resizing is separable: each output row is a fixed mix of input rows, and each output column of
input columns, so a resize is two products with (out, in) interpolation matrices built on the
host from the sizes alone (``gpuaccel._resize_matrices``: ``tf.image.resize``'s weights, and so
Keras's on its TensorFlow backend; ``gpuaccel._image_resize`` applies them), and gradients
flow through the products.
"""
import numbers

import numpy as np

from .. import _C
from .. import math as _math
from ..dtypes import as_dtype
from .._image_resize import batched, resize_images
from .._resize_matrices import INTERPOLATIONS
from ._layer_base import Layer, _data_format


def center_crop_box(in_height, in_width, height, width):
    """(top, left, crop height, crop width) of the largest centred window of the target aspect
    ratio (Keras's crop_to_aspect_ratio, its float32 arithmetic and truncations)."""
    crop_height = int(np.float32(in_width * height) / np.float32(width))
    crop_height = max(min(in_height, crop_height), 1)
    crop_width = int(np.float32(in_height * width) / np.float32(height))
    crop_width = max(min(in_width, crop_width), 1)
    return (int(np.float32(in_height - crop_height) / 2), int(np.float32(in_width - crop_width) / 2),
            crop_height, crop_width)


def crop_to_aspect_ratio(images, height, width):
    """The largest centred window of (batch, h, w, c) ``images`` with height:width's ratio."""
    top, left, crop_height, crop_width = center_crop_box(images.shape[1], images.shape[2],
                                                         height, width)
    return _C.slice(images, [(0, images.shape[0], 1), (top, top + crop_height, 1),
                             (left, left + crop_width, 1), (0, images.shape[3], 1)])


def round_into(resized, integer_dtype):
    """Float ``resized`` images back in an integer dtype, as Keras: rounded, then saturated to
    the dtype's range."""
    limits = np.iinfo(np.dtype(integer_dtype))
    rounded = _math.round(resized)
    clipped = _C.binary("minimum", _C.binary("maximum", rounded, _C.scalar_like(
        float(limits.min), rounded)), _C.scalar_like(float(limits.max), rounded))
    return _C.cast(clipped, integer_dtype)


def window_size(layer_class, height, width):
    """An image layer's (height, width) output size: two positive integers."""
    for value, arg in ((height, "height"), (width, "width")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value <= 0:
            raise ValueError(f"{layer_class}: `{arg}` must be a positive integer, received "
                             f"{arg}={value!r}")
    return int(height), int(width)


class CenterCrop(Layer):
    """``keras.layers.CenterCrop(height, width)``: the central height x width window of
    (batch, height, width, channels) images or one (height, width, channels) image. Images
    smaller than the window are, as Keras's ``smart_resize``, cropped to the window's aspect
    ratio and resized (bilinear)."""

    def __init__(self, height, width, data_format=None, **kwargs):
        self.height, self.width = window_size("CenterCrop", height, width)
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
            images, restore = batched(inputs)
            return restore(resize_images(crop_to_aspect_ratio(images, self.height, self.width),
                                         self.height, self.width, "bilinear"))
        top, left = (height - self.height) // 2, (width - self.width) // 2
        ranges = [(0, d, 1) for d in inputs.shape]
        ranges[h_axis] = (top, top + self.height, 1)
        ranges[h_axis + 1] = (left, left + self.width, 1)
        return _C.slice(inputs, ranges)

    def _layer_config(self):
        return {"data_format": self.data_format, "height": self.height, "width": self.width}


class Resizing(Layer):
    """``keras.layers.Resizing(height, width, interpolation='bilinear',
    crop_to_aspect_ratio=False, antialias=False)``: images resized to height x width with
    ``tf.image.resize``'s weights (``_resize_matrices``), optionally after a centred crop to the
    target aspect ratio."""

    def __init__(self, height, width, interpolation="bilinear", crop_to_aspect_ratio=False,
                 pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0,
                 antialias=False, data_format=None, **kwargs):
        self.height, self.width = window_size("Resizing", height, width)
        if interpolation not in INTERPOLATIONS:
            raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                             f"{INTERPOLATIONS}. Received: interpolation={interpolation}")
        if pad_to_aspect_ratio:
            raise NotImplementedError("Resizing(pad_to_aspect_ratio=True) is not supported yet; "
                                      "use crop_to_aspect_ratio=True or pad the images first")
        if fill_mode != "constant":
            raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is "
                             f"supported. Received: fill_mode={fill_mode}")
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio, self.antialias = False, bool(antialias)
        self.fill_mode, self.fill_value = fill_mode, fill_value
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    _integer_inputs = True  # Keras gives integer images back in their dtype, rounded
    def call(self, inputs):
        if inputs.ndim not in (3, 4):
            raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 "
                             "(batch of images). Received input with shape: "
                             f"images.shape={tuple(inputs.shape)}")
        integer_dtype = None if as_dtype(inputs._dtype_name).is_floating else inputs._dtype_name
        if integer_dtype is not None:
            inputs = _C.cast(inputs, "float32")
        images, restore = batched(inputs)
        if self.crop_to_aspect_ratio:
            images = crop_to_aspect_ratio(images, self.height, self.width)
        resized = restore(resize_images(images, self.height, self.width, self.interpolation,
                                        self.antialias))
        return resized if integer_dtype is None else round_into(resized, integer_dtype)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[-3], shape[-2] = self.height, self.width  # channels-last
        return tuple(shape)

    def _layer_config(self):
        return {"height": self.height, "width": self.width, "interpolation": self.interpolation,
                "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
                "pad_to_aspect_ratio": self.pad_to_aspect_ratio, "fill_mode": self.fill_mode,
                "fill_value": self.fill_value, "antialias": self.antialias,
                "data_format": self.data_format}
