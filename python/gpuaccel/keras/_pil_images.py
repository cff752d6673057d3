"""``keras.utils.load_img``, ``array_to_img`` and ``save_img``: image files to and from PIL images.

Why here and why PIL: keras-io's examples load images with ``load_img`` (19 example files) and
show arrays with ``array_to_img``; Keras itself reads and writes the files through PIL. gpuaccel
imports PIL only when one of these is called (a soft dependency, as in Keras), so gpuaccel
installs and imports without it, and calling them without PIL raises an ImportError that says to
``pip install pillow``. Sizes, colour conversions, the resampling filters and the
``keep_aspect_ratio`` centre crop follow Keras 3's rules, so the pixels are PIL's own.
"""
import io
import pathlib
import warnings

import numpy as np

from .._pil import pil_image as _pil_image
from .._tensor import Tensor
from ._layer_base import standardize_data_format

_INTERPOLATIONS = ("nearest", "bilinear", "bicubic", "hamming", "box", "lanczos")
_COLOR_MODES = {"grayscale": "L", "rgb": "RGB", "rgba": "RGBA"}


def array_to_img(x, data_format=None, scale=True, dtype=None):
    """A PIL image of a 3-D array: RGBA, RGB or (one channel) L, or I when a channel exceeds
    255; ``scale`` first stretches the values to [0, 255]."""
    data_format = standardize_data_format(data_format)
    image = _pil_image("array_to_img")
    x = np.asarray(x.numpy() if isinstance(x, Tensor) else x,
                   dtype="float32" if dtype is None else dtype)
    if x.ndim != 3:
        raise ValueError("Expected image array to have rank 3 (single image). "
                         f"Got array with shape: {x.shape}")
    if data_format == "channels_first":
        x = x.transpose(1, 2, 0)
    if scale:
        x = x - np.min(x)
        if np.max(x) != 0:
            x /= np.max(x)
        x *= 255
    channels = x.shape[2]
    if channels in (3, 4):
        return image.fromarray(x.astype("uint8"), "RGBA" if channels == 4 else "RGB")
    if channels == 1:
        if np.max(x) > 255:
            return image.fromarray(x[:, :, 0].astype("int32"), "I")
        return image.fromarray(x[:, :, 0].astype("uint8"), "L")
    raise ValueError(f"Unsupported channel number: {channels}")


def save_img(path, x, data_format=None, file_format=None, scale=True, **kwargs):
    """Writes a 3-D array as an image file; the format follows the file's extension unless
    ``file_format`` is given (an RGBA image is written as RGB to JPEG, with Keras's warning)."""
    if file_format is None and isinstance(path, (str, pathlib.Path)):
        file_format = pathlib.Path(path).suffix[1:].lower()
    if file_format and file_format.lower() == "jpg":
        file_format = "jpeg"
    img = array_to_img(x, data_format=data_format, scale=scale)
    if img.mode == "RGBA" and file_format == "jpeg":
        warnings.warn("The JPEG format does not support RGBA images, converting to RGB.")
        img = img.convert("RGB")
    img.save(path, format=file_format, **kwargs)


def _centre_crop_box(size, target):
    """The (left, upper, right, lower) box of the largest centred region of an image of
    ``size`` (width, height) with the aspect ratio of ``target`` (width, height)."""
    width, height = size
    target_width, target_height = target
    crop_height = min(height, (width * target_height) // target_width)
    crop_width = min(width, (height * target_width) // target_height)
    left, upper = (width - crop_width) // 2, (height - crop_height) // 2
    return [left, upper, left + crop_width, upper + crop_height]


def load_img(path, color_mode="rgb", target_size=None, interpolation="nearest",
             keep_aspect_ratio=False):
    """A PIL image read from a path or an io.BytesIO, converted to ``color_mode`` and resized
    to ``target_size`` (height, width), centre-cropped first to that aspect ratio with
    ``keep_aspect_ratio``."""
    image = _pil_image("load_img")
    if isinstance(path, io.BytesIO):
        img = image.open(path)
    elif isinstance(path, (pathlib.Path, bytes, str)):
        if isinstance(path, pathlib.Path):
            path = str(path.resolve())
        with open(path, "rb") as file:
            img = image.open(io.BytesIO(file.read()))
    else:
        raise TypeError(f"path should be path-like or io.BytesIO, not {type(path)}")
    if color_mode not in _COLOR_MODES:
        raise ValueError('color_mode must be "grayscale", "rgb", or "rgba"')
    keeps = ("L", "I;16", "I") if color_mode == "grayscale" else (_COLOR_MODES[color_mode],)
    if img.mode not in keeps:
        img = img.convert(_COLOR_MODES[color_mode])
    if target_size is None:
        return img
    width_height = (target_size[1], target_size[0])
    if img.size == width_height:
        return img
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"Invalid interpolation method {interpolation} specified. Supported "
                         f"methods are {', '.join(_INTERPOLATIONS)}")
    resample = getattr(image.Resampling, interpolation.upper())
    if keep_aspect_ratio:
        return img.resize(width_height, resample, box=_centre_crop_box(img.size, width_height))
    return img.resize(width_height, resample)
