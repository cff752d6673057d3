"""``tf.image``'s colour-space conversions (RGB <-> HSV, YIQ, YUV), shared by the hue and
saturation adjustments of ``_image_adjust`` and by Keras's colour augmentation layers.

They are float-image functions, as TF's kernels are: the last axis holds the three channels.
HSV follows TF's RGBToHSV/HSVToRGB kernels (hue in [0, 1), 0 where the pixel is gray); YIQ and
YUV are products with TF's 3x3 matrices. Every step is a gpuaccel op on tensors, so a traced
layer replays them and autograd differentiates them; divisions use denominators made safe
where the branch is not taken, because gpuaccel's ``where`` computes both branches.
"""
import numpy as np

from . import _C, errors
from . import math as _math
from ._array_ops import stack, where
from ._convert import convert_to_tensor

__all__ = ["rgb_to_hsv", "hsv_to_rgb", "rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb",
           "hsv_channels", "from_hsv_channels"]

# TF's matrices (image_ops_impl): a row per input channel, a column per output channel.
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021],
               [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _three_channel_float(images, name, uint8_as_float32=False):
    """``images`` as a float tensor with three channels last. TF's HSV kernels take uint8
    values as float32 numbers (unscaled), so those do with ``uint8_as_float32``."""
    x = convert_to_tensor(images)
    if not x.ndim or x.shape[-1] != 3:
        raise errors.InvalidArgumentError(f"{name} needs a last dimension of 3, got shape "
                                          f"{list(x.shape)}")
    if uint8_as_float32 and x._dtype_name == "uint8":
        return _C.cast(x, "float32")
    if not x.dtype.is_floating_point:
        raise errors.InvalidArgumentError(
            f"{name} takes float images, got {x.dtype.name}; convert with "
            "tf.image.convert_image_dtype first")
    return x


def _channels(x):
    return [_C.select(x, x.ndim - 1, i) for i in range(3)]


def hsv_channels(x):
    """(hue, saturation, value) of float RGB ``x`` (channels last), each without the channel
    axis."""
    red, green, blue = _channels(x)
    value = _math.maximum(red, _math.maximum(green, blue))
    chroma = _math.subtract(value, _math.minimum(red, _math.minimum(green, blue)))
    positive_value = _math.greater(value, 0.0)
    saturation = where(positive_value, _math.divide(chroma, where(positive_value, value, 1.0)),
                       0.0)
    colourful = _math.greater(chroma, 0.0)
    sixth_of = _math.divide(1.0, _math.multiply(where(colourful, chroma, 1.0), 6.0))
    hue = where(_math.equal(red, value), _math.multiply(sixth_of, _math.subtract(green, blue)),
                where(_math.equal(green, value),
                      _math.add(_math.multiply(sixth_of, _math.subtract(blue, red)), 2.0 / 6),
                      _math.add(_math.multiply(sixth_of, _math.subtract(red, green)), 4.0 / 6)))
    hue = where(colourful, hue, 0.0)
    hue = where(_math.less(hue, 0.0), _math.add(hue, 1.0), hue)
    return hue, saturation, value


def from_hsv_channels(hue, saturation, value):
    """Float RGB (channels last) from hue, saturation and value tensors, as TF's HSVToRGB: a
    hue outside [0, 1) gives (value, m, m), m = value - chroma, as TF's kernel does."""
    chroma = _math.multiply(saturation, value)
    sixths = _math.multiply(hue, 6.0)
    channels = []
    for offset in (5.0, 3.0, 1.0):  # red, green, blue: v - c * clamp(min(k, 4 - k), 0, 1)
        k = _math.floormod(_math.add(sixths, offset), 6.0)
        ramp = _math.maximum(_math.minimum(_math.minimum(k, _math.subtract(4.0, k)), 1.0), 0.0)
        channels.append(_math.subtract(value, _math.multiply(chroma, ramp)))
    rgb = stack(channels, axis=-1)
    in_range = _math.logical_and(_math.greater_equal(sixths, 0.0), _math.less(sixths, 6.0))
    lowest = _math.subtract(value, chroma)
    return where(_C.expand_dims(in_range, -1), rgb, stack([value, lowest, lowest], axis=-1))


def rgb_to_hsv(images, name=None):
    """``tf.image.rgb_to_hsv``: float RGB in [0, 1] to (hue, saturation, value), each in
    [0, 1]."""
    x = _three_channel_float(images, "rgb_to_hsv", uint8_as_float32=True)
    return stack(list(hsv_channels(x)), axis=-1)


def hsv_to_rgb(images, name=None):
    """``tf.image.hsv_to_rgb``: float (hue, saturation, value) to RGB."""
    x = _three_channel_float(images, "hsv_to_rgb", uint8_as_float32=True)
    return from_hsv_channels(*_channels(x))


def _mixed(images, matrix, name):
    x = _three_channel_float(images, name)
    kernel = _C.cast(_C.tensor_from_numpy(np.asarray(matrix, np.float32), x._device_name, None,
                                          True), x._dtype_name)
    rows = _C.matmul(_C.reshape(_C.contiguous(x), [-1, 3]), kernel)
    return _C.reshape(rows, list(x.shape))


def rgb_to_yiq(images):
    """``tf.image.rgb_to_yiq``: RGB to luma Y and chroma I, Q (TF's matrix)."""
    return _mixed(images, _RGB_TO_YIQ, "rgb_to_yiq")


def yiq_to_rgb(images):
    """``tf.image.yiq_to_rgb``: YIQ back to RGB."""
    return _mixed(images, _YIQ_TO_RGB, "yiq_to_rgb")


def rgb_to_yuv(images):
    """``tf.image.rgb_to_yuv``: RGB to luma Y and chroma U, V (TF's matrix)."""
    return _mixed(images, _RGB_TO_YUV, "rgb_to_yuv")


def yuv_to_rgb(images):
    """``tf.image.yuv_to_rgb``: YUV back to RGB."""
    return _mixed(images, _YUV_TO_RGB, "yuv_to_rgb")
