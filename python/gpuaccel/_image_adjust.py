"""``tf.image``'s value adjustments: convert_image_dtype (TF's scaling between integer and
float images), grayscale conversions, brightness, contrast, hue, saturation, gamma,
per-image standardization, and the random_* and stateless_random_* names that draw their
parameter and apply one of these (or a flip or crop). A random_* name draws from the global
stream; its stateless_random_* twin draws the same way from the stream its seed pair keys
(``_random_samplers.keyed_stream``, as ``tf.random.stateless_uniform``), so the two share one
body that takes the draw.

As in TF, integer images are taken as [0, MAX] of their dtype and float ones as [0, 1]: the
adjustments convert integer images to float32, adjust, and convert back with saturation.
All are compositions of gpuaccel ops, so float images get gradients.
"""
import numpy as np

from . import _C, errors
from . import math as _math
from ._array_ops import cast, saturate_cast, where
from ._convert import convert_to_tensor
from ._image_color_spaces import from_hsv_channels, hsv_channels
from ._image_resize import flip_left_right, flip_up_down
from ._random_samplers import key_of, keyed_stream, uniform
from .dtypes import as_dtype

__all__ = ["convert_image_dtype", "rgb_to_grayscale", "grayscale_to_rgb", "adjust_brightness",
           "adjust_contrast", "per_image_standardization", "random_flip_left_right",
           "random_flip_up_down", "random_crop", "random_brightness", "random_contrast",
           "adjust_hue", "adjust_saturation", "adjust_gamma", "random_hue", "random_saturation",
           "stateless_random_brightness", "stateless_random_contrast", "stateless_random_crop",
           "stateless_random_flip_left_right", "stateless_random_flip_up_down",
           "stateless_random_hue", "stateless_random_saturation", "GRAYSCALE_WEIGHTS"]

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


def adjust_hue(image, delta, name=None):
    """``tf.image.adjust_hue``: the hue of each RGB pixel turned by ``delta`` (in [-1, 1], a
    fraction of the colour wheel), saturation and value kept."""
    x = convert_to_tensor(image)
    if not -1.0 <= float(delta) <= 1.0:
        raise ValueError(f"delta must be in the interval [-1, 1], got {delta}")
    hue, saturation, value = _hsv_of(x, "adjust_hue")
    turned = _math.floormod(_math.add(hue, float(delta)), 1.0)
    return convert_image_dtype(from_hsv_channels(turned, saturation, value), x.dtype)


def adjust_saturation(image, saturation_factor, name=None):
    """``tf.image.adjust_saturation``: the HSV saturation of each pixel multiplied by
    ``saturation_factor`` and clipped to [0, 1]."""
    x = convert_to_tensor(image)
    hue, saturation, value = _hsv_of(x, "adjust_saturation")
    scaled = _math.minimum(_math.maximum(_math.multiply(saturation, saturation_factor), 0.0),
                           1.0)
    return convert_image_dtype(from_hsv_channels(hue, scaled, value), x.dtype)


def _hsv_of(x, name):
    if not x.ndim or x.shape[-1] != 3:
        raise errors.InvalidArgumentError(f"{name} needs a last dimension of 3 (R, G, B), got "
                                          f"shape {list(x.shape)}")
    return hsv_channels(_as_float(x))


def adjust_gamma(image, gamma=1, gain=1):
    """``tf.image.adjust_gamma``: gain * image ** gamma on the [0, 1] float image (integer
    images come back saturated)."""
    x = convert_to_tensor(image)
    if float(gamma) < 0:
        raise ValueError("Gamma should be a non-negative real number.")
    adjusted = _math.multiply(_math.pow(_as_float(x), gamma), gain)
    return convert_image_dtype(adjusted, x.dtype, saturate=True)


def _global_draw(seed):
    """draw(shape, minval, maxval): uniform floats from the global stream."""
    return lambda shape, minval, maxval: uniform(shape, minval, maxval, seed=seed)


def _stateless_draw(seed):
    """draw(shape, minval, maxval): uniform floats from the stream keyed by the pair ``seed``
    (TF's shape-[2] integer seed; the same pair gives the same draw)."""
    key = key_of(seed)

    def draw(shape, minval, maxval):
        with keyed_stream(key):
            return uniform(shape, minval, maxval)
    return draw


def _random_flip(image, flip, draw):
    x = convert_to_tensor(image)
    flipped = flip(x)
    draws = [x.shape[0], 1, 1, 1] if x.ndim == 4 else []
    return where(_math.less(draw(draws, 0.0, 1.0), 0.5), flipped, x)


def random_flip_left_right(image, seed=None):
    """``tf.image.random_flip_left_right``: each image flipped left-right with probability 1/2."""
    return _random_flip(image, flip_left_right, _global_draw(seed))


def random_flip_up_down(image, seed=None):
    """``tf.image.random_flip_up_down``: each image flipped upside down with probability 1/2."""
    return _random_flip(image, flip_up_down, _global_draw(seed))


def stateless_random_flip_left_right(image, seed):
    """``tf.image.stateless_random_flip_left_right``: random_flip_left_right drawn from the
    stream of the seed pair ``seed``."""
    return _random_flip(image, flip_left_right, _stateless_draw(seed))


def stateless_random_flip_up_down(image, seed):
    """``tf.image.stateless_random_flip_up_down``: random_flip_up_down drawn from the stream of
    the seed pair ``seed``."""
    return _random_flip(image, flip_up_down, _stateless_draw(seed))


def _one_draw(draw, minval, maxval):
    return float(draw([], minval, maxval).numpy()) if maxval > minval else float(minval)


def _random_brightness(image, max_delta, draw):
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_brightness(image, _one_draw(draw, -max_delta, max_delta))


def random_brightness(image, max_delta, seed=None):
    """``tf.image.random_brightness``: adjust_brightness by one delta drawn in
    [-max_delta, max_delta)."""
    return _random_brightness(image, max_delta, _global_draw(seed))


def stateless_random_brightness(image, max_delta, seed):
    """``tf.image.stateless_random_brightness``: random_brightness drawn from the stream of the
    seed pair ``seed``."""
    return _random_brightness(image, max_delta, _stateless_draw(seed))


def _factor_range(lower, upper):
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")


def _random_contrast(image, lower, upper, draw):
    _factor_range(lower, upper)
    return adjust_contrast(image, _one_draw(draw, lower, upper))


def random_contrast(image, lower, upper, seed=None):
    """``tf.image.random_contrast``: adjust_contrast by one factor drawn in [lower, upper)."""
    return _random_contrast(image, lower, upper, _global_draw(seed))


def stateless_random_contrast(image, lower, upper, seed):
    """``tf.image.stateless_random_contrast``: random_contrast drawn from the stream of the
    seed pair ``seed``."""
    return _random_contrast(image, lower, upper, _stateless_draw(seed))


def _random_hue(image, max_delta, draw):
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, _one_draw(draw, -max_delta, max_delta))


def random_hue(image, max_delta, seed=None):
    """``tf.image.random_hue``: adjust_hue by one delta drawn in [-max_delta, max_delta)
    (max_delta at most 0.5)."""
    return _random_hue(image, max_delta, _global_draw(seed))


def stateless_random_hue(image, max_delta, seed):
    """``tf.image.stateless_random_hue``: random_hue drawn from the stream of the seed pair
    ``seed``."""
    return _random_hue(image, max_delta, _stateless_draw(seed))


def _random_saturation(image, lower, upper, draw):
    _factor_range(lower, upper)
    return adjust_saturation(image, _one_draw(draw, lower, upper))


def random_saturation(image, lower, upper, seed=None):
    """``tf.image.random_saturation``: adjust_saturation by one factor drawn in
    [lower, upper)."""
    return _random_saturation(image, lower, upper, _global_draw(seed))


def stateless_random_saturation(image, lower, upper, seed):
    """``tf.image.stateless_random_saturation``: random_saturation drawn from the stream of
    the seed pair ``seed``."""
    return _random_saturation(image, lower, upper, _stateless_draw(seed))


def _random_crop(value, size, draw):
    x = convert_to_tensor(value)
    sizes = [int(s) for s in (size.numpy() if hasattr(size, "numpy") else size)]
    if len(sizes) != x.ndim:
        raise ValueError(f"size must hold one entry per axis of value ({x.ndim}), got {sizes}")
    if any(s > d or s < 0 for s, d in zip(sizes, x.shape)):
        raise errors.InvalidArgumentError(f"Need value.shape >= size, got {list(x.shape)} and "
                                          f"{sizes}")
    fractions = draw([x.ndim], 0.0, 1.0).numpy().astype(np.float64)
    starts = [int(f * (d - s + 1)) for f, s, d in zip(fractions, sizes, x.shape)]
    return _C.slice(x, [(b, b + s, 1) for b, s in zip(starts, sizes)])


def random_crop(value, size, seed=None, name=None):
    """``tf.random_crop`` / ``tf.image.random_crop``: a window of shape ``size`` (one entry per
    axis of ``value``) at an offset drawn uniformly among those that fit."""
    return _random_crop(value, size, _global_draw(seed))


def stateless_random_crop(value, size, seed, name=None):
    """``tf.image.stateless_random_crop``: random_crop drawn from the stream of the seed pair
    ``seed``."""
    return _random_crop(value, size, _stateless_draw(seed))
