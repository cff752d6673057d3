"""``tf.image``'s value adjustments: convert_image_dtype (TF's scaling between integer and
float images), grayscale conversions, brightness, contrast, per-image standardization, and the
random_* names that draw their parameter and apply one of these (or a flip or crop).

As in TF, integer images are taken as [0, MAX] of their dtype and float ones as [0, 1]: the
adjustments convert integer images to float32, adjust, and convert back with saturation.
All are compositions of gpuaccel ops, so float images get gradients.
"""
import numpy as np

from . import _C, errors
from . import math as _math
from ._array_ops import cast, saturate_cast, where
from ._convert import convert_to_tensor
from ._image_resize import flip_left_right, flip_up_down
from ._random_samplers import uniform
from .dtypes import as_dtype

__all__ = ["convert_image_dtype", "rgb_to_grayscale", "grayscale_to_rgb", "adjust_brightness",
           "adjust_contrast", "per_image_standardization", "random_flip_left_right",
           "random_flip_up_down", "random_crop", "random_brightness", "random_contrast",
           "GRAYSCALE_WEIGHTS"]

GRAYSCALE_WEIGHTS = np.array([0.2989, 0.5870, 0.1140], np.float32)  # TF's rgb_to_grayscale


def _integer_max(dtype):
    return int(np.iinfo(np.dtype(dtype.name)).max)


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """``tf.image.convert_image_dtype``: integer images span [0, MAX of their dtype] and float
    images [0, 1]; converting rescales between the two (float to integer multiplies by
    MAX + 0.5 and truncates), ``saturate`` clips before a cast that could wrap around."""
    x = convert_to_tensor(image)
    target, source = as_dtype(dtype), x.dtype
    for kind, checked in (("dtype", target), ("image dtype", source)):
        if checked.name == "bool":
            raise AttributeError(f"{kind} must be either floating point or integer")
    if target == source:
        return x
    if not source.is_floating and not target.is_floating:
        scale_in, scale_out = _integer_max(source), _integer_max(target)
        if scale_in > scale_out:
            scaled = _math.floordiv(x, (scale_in + 1) // (scale_out + 1))
            return saturate_cast(scaled, target) if saturate else cast(scaled, target)
        converted = saturate_cast(x, target) if saturate else cast(x, target)
        return _math.multiply(converted, (scale_out + 1) // (scale_in + 1))
    if source.is_floating and target.is_floating:
        return cast(x, target)
    if not source.is_floating:
        return _math.multiply(cast(x, target), 1.0 / _integer_max(source))
    scaled = _math.multiply(x, _integer_max(target) + 0.5)
    return saturate_cast(scaled, target) if saturate else cast(scaled, target)


def _as_float(x):
    """TF's working copy: float16 and float32 images as they are, others as float32 in [0, 1]."""
    return x if x._dtype_name in ("float16", "float32") else convert_image_dtype(x, "float32")


def rgb_to_grayscale(images, name=None):
    """``tf.image.rgb_to_grayscale``: the last axis's (R, G, B) mixed with TF's weights into one
    channel, in the images' dtype."""
    x = convert_to_tensor(images)
    if not x.ndim or x.shape[-1] != 3:
        raise errors.InvalidArgumentError(f"rgb_to_grayscale needs a last dimension of 3 "
                                          f"(R, G, B), got shape {list(x.shape)}")
    floats = convert_image_dtype(x, "float32")
    weights = _C.tensor_from_numpy(GRAYSCALE_WEIGHTS, floats._device_name, None, True)
    gray = _C.reduce("sum", _C.binary("mul", floats, weights), [-1], True)
    return convert_image_dtype(gray, x.dtype)


def grayscale_to_rgb(images, name=None):
    """``tf.image.grayscale_to_rgb``: the single channel repeated three times."""
    x = convert_to_tensor(images)
    if x.ndim < 2 or x.shape[-1] != 1:
        raise ValueError(f"Last dimension of a grayscale image should be size 1, got shape "
                         f"{list(x.shape)}")
    return _C.broadcast_to(x, list(x.shape[:-1]) + [3])


def _image_rank(x, at_least=3):
    if x.ndim < at_least:
        raise ValueError(f"'image' (shape {list(x.shape)}) must be at least three-dimensional.")


def adjust_brightness(image, delta):
    """``tf.image.adjust_brightness``: ``delta`` added to every value (of the [0, 1] float
    image for integer ones, which come back saturated)."""
    x = convert_to_tensor(image)
    adjusted = _math.add(_as_float(x), delta)
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def adjust_contrast(images, contrast_factor):
    """``tf.image.adjust_contrast``: each channel of each image moved from its mean by
    ``contrast_factor``: (x - mean) * factor + mean."""
    x = convert_to_tensor(images)
    _image_rank(x)
    floats = _as_float(x)
    mean = _math.reduce_mean(floats, axis=[-3, -2], keepdims=True)
    adjusted = _math.add(_math.multiply(_math.subtract(floats, mean), contrast_factor), mean)
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def per_image_standardization(image):
    """``tf.image.per_image_standardization``: each image (its last three axes) shifted to mean
    0 and divided by max(stddev, 1 / sqrt(number of values)), as float32."""
    x = convert_to_tensor(image)
    _image_rank(x)
    floats = cast(x, "float32")
    axes = [-3, -2, -1]
    mean = _math.reduce_mean(floats, axis=axes, keepdims=True)
    stddev = _math.reduce_std(floats, axis=axes, keepdims=True)
    min_stddev = 1.0 / np.sqrt(np.float32(np.prod(x.shape[-3:])))
    return _math.divide(_math.subtract(floats, mean), _math.maximum(stddev, float(min_stddev)))


def _random_flip(image, flip, seed):
    x = convert_to_tensor(image)
    flipped = flip(x)
    draws = [x.shape[0], 1, 1, 1] if x.ndim == 4 else []
    return where(_math.less(uniform(draws, 0.0, 1.0, seed=seed), 0.5), flipped, x)


def random_flip_left_right(image, seed=None):
    """``tf.image.random_flip_left_right``: each image flipped left-right with probability 1/2."""
    return _random_flip(image, flip_left_right, seed)


def random_flip_up_down(image, seed=None):
    """``tf.image.random_flip_up_down``: each image flipped upside down with probability 1/2."""
    return _random_flip(image, flip_up_down, seed)


def random_brightness(image, max_delta, seed=None):
    """``tf.image.random_brightness``: adjust_brightness by one delta drawn in
    [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = float(uniform([], -max_delta, max_delta, seed=seed).numpy()) if max_delta else 0.0
    return adjust_brightness(image, delta)


def random_contrast(image, lower, upper, seed=None):
    """``tf.image.random_contrast``: adjust_contrast by one factor drawn in [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    factor = float(uniform([], lower, upper, seed=seed).numpy())
    return adjust_contrast(image, factor)


def random_crop(value, size, seed=None, name=None):
    """``tf.random_crop`` / ``tf.image.random_crop``: a window of shape ``size`` (one entry per
    axis of ``value``) at an offset drawn uniformly among those that fit."""
    x = convert_to_tensor(value)
    sizes = [int(s) for s in (size.numpy() if hasattr(size, "numpy") else size)]
    if len(sizes) != x.ndim:
        raise ValueError(f"size must hold one entry per axis of value ({x.ndim}), got {sizes}")
    if any(s > d or s < 0 for s, d in zip(sizes, x.shape)):
        raise errors.InvalidArgumentError(f"Need value.shape >= size, got {list(x.shape)} and "
                                          f"{sizes}")
    fractions = uniform([x.ndim], 0.0, 1.0, seed=seed).numpy().astype(np.float64)
    starts = [int(f * (d - s + 1)) for f, s, d in zip(fractions, sizes, x.shape)]
    return _C.slice(x, [(b, b + s, 1) for b, s in zip(starts, sizes)])
