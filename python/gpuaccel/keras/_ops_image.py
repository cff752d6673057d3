"""``keras.ops.image``: ``resize``, ``rgb_to_grayscale`` and ``extract_patches`` (2-D).

Why: keras-io's examples call these from custom layers and data pipelines (``ops.image`` is in
14 example files). They are Keras's TensorFlow-backend behaviour composed from the ops the image
layers already use: ``tf.image.resize``'s separable interpolation (``_image_resize``), the
Resizing layer's aspect-ratio crop and integer rounding, ``tf.image.extract_patches``. Unlike
the layers, these functions take ``data_format='channels_first'`` too (by transposing), and the
result has the input's dtype, as Keras's. The other names of keras.ops.image are refused.
"""
import numbers

import numpy as np

from .. import _C, _unsupported
from .. import image as _image
from .._array_ops import pad as _pad
from .._convert import convert_to_tensor
from .._image_resize import batched, resize_images
from ..dtypes import as_dtype
from ._layer_base import standardize_data_format
from ._preprocessing_layers import crop_to_aspect_ratio as _crop_to_aspect_ratio, round_into

__all__ = ["extract_patches", "resize", "rgb_to_grayscale"]

# Keras's order (its error messages print the tuple)
RESIZE_INTERPOLATIONS = ("bilinear", "nearest", "lanczos3", "lanczos5", "bicubic", "area")


def _check_rank(images):
    if images.ndim not in (3, 4):
        raise ValueError("Invalid images rank: expected rank 3 (single image) or rank 4 (batch "
                         "of images). Received input with shape: "
                         f"images.shape={tuple(images.shape)}")


def _channels_last(images, data_format):
    """(channels-last images, the function that puts a result back in ``data_format``)."""
    if data_format == "channels_last":
        return images, lambda out: out
    first_to_last = [0, 2, 3, 1] if images.ndim == 4 else [1, 2, 0]
    last_to_first = [0, 3, 1, 2] if images.ndim == 4 else [2, 0, 1]
    return _C.permute(images, first_to_last), lambda out: _C.permute(out, last_to_first)


def _pad_to_aspect_ratio(images, height, width, fill_value):
    """(batch, h, w, c) images padded with ``fill_value`` on both sides of one axis to the
    target's aspect ratio (Keras's float32 arithmetic and truncations)."""
    in_height, in_width = images.shape[1], images.shape[2]
    pad_height = max(in_height, int(np.float32(in_width * height) / np.float32(width)))
    pad_width = max(in_width, int(np.float32(in_height * width) / np.float32(height)))
    top = int(np.float32(pad_height - in_height) / 2)
    left = int(np.float32(pad_width - in_width) / 2)
    return _pad(images, [[0, 0], [top, top], [left, left], [0, 0]],
                constant_values=fill_value)


def resize(images, size, interpolation="bilinear", antialias=False, crop_to_aspect_ratio=False,
           pad_to_aspect_ratio=False, fill_mode="constant", fill_value=0.0, data_format=None):
    """Images resized to ``size`` (height, width) with ``tf.image.resize``'s weights, after an
    optional centred crop or padding to the target's aspect ratio; in the input's dtype
    (integers rounded and saturated)."""
    images = convert_to_tensor(images)
    if len(size) != 2:
        raise ValueError(f"Expected `size` to be a tuple of 2 integers. Received: size={size}")
    if size[0] <= 0 or size[1] <= 0:
        raise ValueError(f"`size` must have positive height and width. Received: size={size}")
    _check_rank(images)
    if pad_to_aspect_ratio and crop_to_aspect_ratio:
        raise ValueError("Only one of `pad_to_aspect_ratio` & `crop_to_aspect_ratio` can be "
                         "`True`.")
    data_format = standardize_data_format(data_format)
    if interpolation not in RESIZE_INTERPOLATIONS:
        raise ValueError("Invalid value for argument `interpolation`. Expected of one "
                         f"{RESIZE_INTERPOLATIONS}. Received: interpolation={interpolation}")
    if fill_mode != "constant":
        raise ValueError("Invalid value for argument `fill_mode`. Only `'constant'` is "
                         f"supported. Received: fill_mode={fill_mode}")
    height, width = int(size[0]), int(size[1])
    dtype = images._dtype_name
    images, restore_format = _channels_last(images, data_format)
    images, restore_batch = batched(_C.cast(images, "float32") if dtype != "float32"
                                    else images)
    if crop_to_aspect_ratio:
        images = _crop_to_aspect_ratio(images, height, width)
    elif pad_to_aspect_ratio:
        images = _pad_to_aspect_ratio(images, height, width, fill_value)
    resized = restore_format(restore_batch(resize_images(images, height, width, interpolation,
                                                         antialias)))
    if dtype == "float32":
        return resized
    return _C.cast(resized, dtype) if as_dtype(dtype).is_floating else round_into(resized, dtype)


def rgb_to_grayscale(images, data_format=None):
    """RGB images to one channel (weights 0.2989, 0.5870, 0.1140); one-channel images as they
    are; in the input's dtype."""
    images = convert_to_tensor(images)
    data_format = standardize_data_format(data_format)
    _check_rank(images)
    channels = images.shape[-1 if data_format == "channels_last" else -3]
    if channels not in (1, 3):
        raise ValueError("Invalid channel size: expected 3 (RGB) or 1 (Grayscale). Received "
                         f"input with shape: images.shape={tuple(images.shape)}")
    if channels == 1:
        return images
    dtype = images._dtype_name
    images, restore_format = _channels_last(images, data_format)
    floats = images if as_dtype(dtype).is_floating else _C.cast(images, "float32")
    weights = _C.cast(convert_to_tensor(np.array([[0.2989], [0.5870], [0.1140]], np.float32)),
                      floats._dtype_name)
    pixels = _C.reshape(floats, [-1, 3])
    gray = restore_format(_C.reshape(_C.matmul(pixels, weights), list(floats.shape[:-1]) + [1]))
    return gray if gray._dtype_name == dtype else _C.cast(gray, dtype)


def _pair(value, name):
    if isinstance(value, numbers.Integral):
        return [1, int(value), int(value), 1]
    if len(value) != 2:
        raise ValueError(f"extract_patches: `{name}` must be an int or a pair of ints, got "
                         f"{name}={value}")
    return [1, int(value[0]), int(value[1]), 1]


def extract_patches(images, size, strides=None, dilation_rate=1, padding="valid",
                    data_format=None):
    """2-D patches of images: (batch, rows, cols, size_h * size_w * channels) channels-last,
    each patch's values row by row, then column, then channel; ``strides`` default to
    ``size``. (3-D patches, a 3-tuple ``size``, are not supported yet.)"""
    if not isinstance(size, int):
        if not isinstance(size, (tuple, list)):
            raise TypeError("Invalid `size` argument. Expected an int or a tuple. "
                            f"Received: size={size} of type {type(size).__name__}")
        if len(size) not in (2, 3):
            raise ValueError("Invalid `size` argument. Expected a tuple of length 2 or 3. "
                             f"Received: size={size} with length {len(size)}")
        if len(size) == 3:
            raise NotImplementedError("keras.ops.image.extract_patches with a 3-D `size` "
                                      "(volumes) is not supported by gpuaccel yet; use a 2-D size")
    images = convert_to_tensor(images)
    data_format = standardize_data_format(data_format)
    images, restore_format = _channels_last(images, data_format)
    images, restore_batch = batched(images)
    patches = _image.extract_patches(images, _pair(size, "size"),
                                     _pair(strides or size, "strides"),
                                     _pair(dilation_rate, "dilation_rate"), padding)
    return restore_format(restore_batch(patches))


__getattr__ = _unsupported.module_getattr(__name__, "keras.ops.image", {})
