"""Keras 3's colour and filter augmentation layers (RandomHue, RandomSaturation,
RandomColorDegeneration, RandomColorJitter, RandomPosterization, RandomSharpness,
RandomGaussianBlur, Equalization): per-pixel value changes, built as the layers of
``_augmentation_layers``: a ``get_random_transformation`` of tensors drawn from
``_random_draws`` (drawn afresh on each replay of the trace) and a deterministic
``transform_images``, so Keras's layer can be handed the same transformation. The colour-space
arithmetic is tf.image's own (``_image_color_spaces``), as Keras's TensorFlow backend calls
tf.image; nothing reads a value back to the host in the forward pass.
"""
import numpy as np

from .. import _C
from .. import math as _math
from .. import nn as _nn
from .._image_adjust import GRAYSCALE_WEIGHTS
from .._image_color_spaces import from_hsv_channels, hsv_channels
from . import _random_draws
from ._augmentation_layers import (RandomBrightness, RandomContrast, _ImageAugmentation,
                                   _as_float_tensor, _blend, _clip, _factor_pair,
                                   _rescale_range, _value_range)

_EPSILON = 1e-7  # keras.config.epsilon(), in RandomSaturation's factor / (1 - factor + eps)


def _per_image(values, images, trailing):
    """A (batch,) transformation entry as ``images``' dtype, shaped (batch,) + (1,) * trailing."""
    values = _as_float_tensor(values, images)
    return _C.reshape(values, [values.shape[0]] + [1] * trailing)


def _constant(array, like):
    return _C.cast(_C.tensor_from_numpy(np.ascontiguousarray(array, np.float32),
                                        like._device_name, None, True), like._dtype_name)


class _ColorAugmentation(_ImageAugmentation):
    """A factor (Keras's base ``_set_factor`` within ``_FACTOR_BOUNDS``) and a value range."""
    _FACTOR_BOUNDS = (-1, 1)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        self.factor = _factor_pair(factor, self._FACTOR_BOUNDS)
        self.value_range = _value_range(value_range)
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def _uniform_factors(self, images, shape=None):
        return _random_draws.uniform(shape or [images.shape[0]], images, self.factor[0],
                                     self.factor[1])

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor,
                "value_range": self.value_range}


class RandomHue(_ColorAugmentation):
    """``keras.layers.RandomHue(factor, value_range=(0, 255))``: each image's hue turned by a
    draw in [lower, upper] / 2 of the colour wheel, in a random direction."""
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor, value_range=(0, 255), data_format=None, seed=None, **kwargs):
        super().__init__(factor, value_range, data_format, seed, **kwargs)
        self.value_range = value_range  # Keras keeps RandomHue's as given (not sorted)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        batch = [images.shape[0]]
        backwards = _random_draws.bernoulli(batch, 0.5, images)  # draw > 0.5: -1
        direction = _C.binary("sub", _C.scalar_like(1.0, backwards),
                              _C.binary("mul", backwards, _C.scalar_like(2.0, backwards)))
        turn = _C.binary("mul", _C.binary("mul", direction, self._uniform_factors(images)),
                         _C.scalar_like(0.5, direction))
        return {"factor": turn}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        unit = _rescale_range(images, self.value_range, (0, 1))
        hue, saturation, value = hsv_channels(unit)
        hue = _C.binary("add", hue, _per_image(transformation["factor"], images, 2))
        above, below = (_C.cast(_C.binary(op, hue, _C.scalar_like(bound, hue)), hue._dtype_name)
                        for op, bound in (("greater", 1.0), ("less", 0.0)))
        hue = _C.binary("add", _C.binary("sub", hue, above), below)  # back into [0, 1]
        rgb = _clip(from_hsv_channels(hue, saturation, value), 0.0, 1.0)
        return _rescale_range(rgb, (0, 1), self.value_range)


class RandomSaturation(_ColorAugmentation):
    """``keras.layers.RandomSaturation(factor, value_range=(0, 255))``: each image's HSV
    saturation multiplied by f / (1 - f) for a draw f in [lower, upper], clipped to
    ``value_range`` (Keras works on the images as they come, without rescaling them)."""

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        factor = self._uniform_factors(images)
        return {"factor": _C.binary("div", factor, _C.binary(
            "add", _C.binary("sub", _C.scalar_like(1.0, factor), factor),
            _C.scalar_like(_EPSILON, factor)))}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        hue, saturation, value = hsv_channels(images)
        saturation = _clip(_C.binary("mul", saturation, _per_image(
            transformation["factor"], images, 2)), *self.value_range)
        return from_hsv_channels(hue, saturation, value)


class RandomColorDegeneration(_ColorAugmentation):
    """``keras.layers.RandomColorDegeneration(factor, value_range=(0, 255))``: each image
    moved towards its grayscale version by a draw in [lower, upper], clipped to
    ``value_range``."""

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        return {"factor": self._uniform_factors(images, [images.shape[0], 1, 1, 1])}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        gray = _C.reduce("sum", _C.binary("mul", images, _constant(GRAYSCALE_WEIGHTS, images)),
                         [-1], True)
        factor = _as_float_tensor(transformation["factor"], images)
        moved = _C.binary("add", images, _C.binary("mul", factor, _C.binary("sub", gray,
                                                                            images)))
        return _clip(moved, *self.value_range)


class RandomSharpness(_ColorAugmentation):
    """``keras.layers.RandomSharpness(factor, value_range=(0, 255))``: each image blended with
    its 3x3 smoothing (Keras's kernel: 1/13 around, 5/13 in the middle, zero padding) by
    1 - 2f for a draw f in [lower, upper]; f above 1/2 sharpens."""
    _FACTOR_BOUNDS = (0, 1)
    _SMOOTHING = np.array([[1, 1, 1], [1, 5, 1], [1, 1, 1]], np.float32) / 13.0

    def get_random_transformation(self, data, training=True, seed=None):
        return {"factor": self._uniform_factors(self._images(data))}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        channels = images.shape[-1]
        kernel = _constant(np.tile(self._SMOOTHING[:, :, None, None], (1, 1, channels, 1)),
                           images)
        smoothed = _nn.depthwise_conv2d(images, kernel, 1, "SAME")
        weight = _C.binary("sub", _C.scalar_like(1.0, images), _C.binary(
            "mul", _per_image(transformation["factor"], images, 3), _C.scalar_like(2.0, images)))
        return _clip(_C.binary("add", images, _C.binary("mul", weight, _C.binary(
            "sub", smoothed, images))), *self.value_range)


class RandomGaussianBlur(_ColorAugmentation):
    """``keras.layers.RandomGaussianBlur(factor=1.0, kernel_size=3, sigma=1.0,
    value_range=(0, 255))``: each image, with a probability drawn in [lower, upper] of
    ``factor``, blurred by a Gaussian kernel ('same' zero padding) whose (x, y) sigmas are two
    draws in the ``sigma`` range shared by the batch; clipped to ``value_range``."""
    _FACTOR_BOUNDS = (0, 1)

    def __init__(self, factor=1.0, kernel_size=3, sigma=1.0, value_range=(0, 255),
                 data_format=None, seed=None, **kwargs):
        super().__init__(factor, (0, 255), data_format, seed, **kwargs)
        self.kernel_size = self._kernel_size(kernel_size)
        self.sigma = _factor_pair(sigma, self._FACTOR_BOUNDS, "sigma")
        self.value_range = value_range

    @staticmethod
    def _kernel_size(size):
        message = f"kernel_size must be an odd number. Received: kernel_size={size}"
        if isinstance(size, (tuple, list)):
            if len(size) != 2:
                raise ValueError("The `kernel_size` argument should be a number (or a list of "
                                 f"two numbers) Received: kernel_size={size}")
            if size[0] % 2 == 0 or size[1] % 2 == 0:
                raise ValueError(message)
            return tuple(size)
        if isinstance(size, (int, float)) and not isinstance(size, bool):
            if size % 2 == 0:
                raise ValueError(message)
            return (size, size)
        raise ValueError(message)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        batch = [images.shape[0]]
        probability = self._uniform_factors(images)
        threshold = _random_draws.uniform(batch, images)
        sigmas = _random_draws.uniform([2], images, self.sigma[0], self.sigma[1])
        return {"should_apply_blur": _C.binary("less", threshold, probability),
                "blur_factor": _C.binary("add", sigmas, _C.scalar_like(1e-6, sigmas))}

    def _kernel(self, sigmas, images):
        """Keras's gaussian_blur kernel: outer(y's 1-D kernel, x's), laid out as
        (kernel_size[0], kernel_size[1]) per channel."""
        def one_axis(size, sigma):  # exp(-x^2 / (2 sigma^2)), normalised
            offsets = _constant(np.arange(size) - (size - 1) / 2.0, images)
            scaled = _C.binary("div", offsets, sigma)
            weights = _C.unary("exp", _C.binary("mul", _C.binary("mul", scaled, scaled),
                                                _C.scalar_like(-0.5, scaled)))
            return _C.binary("div", weights, _C.reduce("sum", weights, [0], True))

        sigmas = _as_float_tensor(sigmas, images)
        along_x = one_axis(self.kernel_size[0], _C.select(sigmas, 0, 0))
        along_y = one_axis(self.kernel_size[1], _C.select(sigmas, 0, 1))
        outer = _C.binary("mul", _C.expand_dims(along_y, 1), _C.expand_dims(along_x, 0))
        kernel = _C.reshape(_C.contiguous(outer), [*self.kernel_size, 1, 1])
        return _C.contiguous(_C.broadcast_to(kernel, [*self.kernel_size, images.shape[3], 1]))

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        blurred = _nn.depthwise_conv2d(images, self._kernel(transformation["blur_factor"],
                                                            images), 1, "SAME")
        apply = _per_image(transformation["should_apply_blur"], images, 3)
        return _clip(_blend(apply, blurred, images), *self.value_range)

    def _layer_config(self):
        return {**super()._layer_config(), "kernel_size": self.kernel_size,
                "sigma": self.sigma}


class RandomPosterization(_ColorAugmentation):
    """``keras.layers.RandomPosterization(factor, value_range=(0, 255))``: on the 0..255
    scale, each image keeps its k highest bits of every (truncated) value, k drawn among the
    integers in [lower, upper) (``factor`` is at most 8 bits)."""
    _FACTOR_BOUNDS = (1, 8)
    _BITS = 8

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        lower, upper = self.factor
        if lower != upper:  # floor(u * (upper - lower)) + lower, u in (0, 1)
            bits = _C.binary("add", _math.floor(_random_draws.uniform(
                [images.shape[0]], images, 0.0, float(upper - lower))),
                _C.scalar_like(float(lower), images))
        else:
            bits = _C.tensor_full([images.shape[0]], float(lower), "float32",
                                  images._device_name)
        return {"shift_factor": _C.binary("sub", _C.scalar_like(float(self._BITS), bits), bits)}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        shift = _C.cast(_as_float_tensor(transformation["shift_factor"], images), "int64")
        # 2 ** shift, looked up exactly rather than computed with pow
        step = _C.reduce("sum", _C.binary("mul", _C.one_hot(_C.contiguous(shift), self._BITS + 1,
                                                           images._dtype_name),
                                          _constant(2.0 ** np.arange(self._BITS + 1), images)),
                         [-1], False)
        step = _C.reshape(step, [images.shape[0], 1, 1, 1])
        values = _math.floor(_rescale_range(images, self.value_range, (0, 255)))
        kept = _C.binary("mul", _math.floor(_C.binary("div", values, step)), step)
        return _rescale_range(kept, (0, 255), self.value_range)


class Equalization(_ImageAugmentation):
    """``keras.layers.Equalization(value_range=(0, 255), bins=256)``: each channel's values
    (over the whole batch, as Keras's) mapped through the normalised cumulative histogram of
    ``bins`` bins, so that they spread over 0..255; a channel of one bin stays as it is. The
    histogram is a one-hot sum (bins floats per value: gpuaccel has no scatter-add kernel)."""

    def __init__(self, value_range=(0, 255), bins=256, data_format=None, **kwargs):
        self.bins = bins
        self.value_range = _value_range(value_range)
        super().__init__(data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        return None

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        scaled = _rescale_range(images, self.value_range, (0, 255))
        channels = [self._equalized(_C.select(scaled, 3, c)) for c in range(images.shape[3])]
        return _rescale_range(_C.concat([_C.expand_dims(c, 3) for c in channels], 3), (0, 255),
                              self.value_range)

    def _bin_of(self, scaled):
        """Keras's int32 cast (toward zero) of ``scaled``, clipped to the bins."""
        return _C.cast(_clip(_C.cast(_C.cast(scaled, "int32"), "float32"), 0, self.bins - 1),
                       "int64")

    def _equalized(self, channel):
        bins = self.bins
        # the histogram's bins: (x - 0) * (bins - 1) / 255, in Keras's order of operations
        counted = self._bin_of(_C.binary("div", _C.binary("mul", channel, _C.scalar_like(
            float(bins - 1), channel)), _C.scalar_like(255.0, channel)))
        histogram = _C.reduce("sum", _C.one_hot(_C.reshape(counted, [-1]), bins, "float32"),
                              [0], False)
        cdf = _C.matmul(_C.reshape(histogram, [1, bins]),
                        _constant(np.triu(np.ones((bins, bins))), histogram))  # (1, bins)
        occupied = _C.cast(_C.binary("greater", cdf, _C.scalar_like(0.0, cdf)), "float32")
        # the first nonzero cdf entry is the smallest nonzero one (the cdf never decreases)
        cdf_min = _C.reduce("min", _blend(occupied, cdf, _C.scalar_like(float(2 ** 30), cdf)),
                            [1], True)
        total = _C.slice(cdf, [(0, 1, 1), (bins - 1, bins, 1)])
        denominator = _C.binary("sub", total, cdf_min)
        empty = _C.cast(_C.binary("equal", denominator, _C.scalar_like(0.0, denominator)),
                        "float32")
        denominator = _C.binary("add", denominator, empty)
        table = _clip(_math.round(_C.binary("div", _C.binary("mul", _C.binary(
            "sub", cdf, cdf_min), _C.scalar_like(255.0, cdf)), denominator)), 0.0, 255.0)
        # the lookup: (x / 255) * (bins - 1), Keras's order again
        looked_up = self._bin_of(_C.binary("mul", _C.binary("div", channel, _C.scalar_like(
            255.0, channel)), _C.scalar_like(float(bins - 1), channel)))
        equalized = _C.reshape(_C.embedding(_C.contiguous(looked_up), _C.reshape(
            _C.cast(table, channel._dtype_name), [bins, 1])), list(channel.shape))
        filled_bins = _C.reduce("sum", _C.cast(_C.binary(
            "greater", histogram, _C.scalar_like(0.0, histogram)), "float32"), [0], False)
        one_bin = _C.cast(_C.binary("less", filled_bins, _C.scalar_like(1.5, filled_bins)),
                          channel._dtype_name)
        return _blend(one_bin, channel, equalized)

    def _layer_config(self):
        return {"data_format": self.data_format, "bins": self.bins,
                "value_range": self.value_range}


class RandomColorJitter(_ImageAugmentation):
    """``keras.layers.RandomColorJitter(value_range=(0, 255), brightness_factor=None,
    contrast_factor=None, saturation_factor=None, hue_factor=None)``: RandomBrightness,
    RandomContrast, RandomSaturation and RandomHue in that order, each where its factor is
    given. Its transformation is the dict of theirs (Keras's layer draws inside
    transform_images; given None, this one does too)."""
    _PARTS = (("brightness", "brightness_factor", RandomBrightness),
              ("contrast", "contrast_factor", RandomContrast),
              ("saturation", "saturation_factor", RandomSaturation),
              ("hue", "hue_factor", RandomHue))

    def __init__(self, value_range=(0, 255), brightness_factor=None, contrast_factor=None,
                 saturation_factor=None, hue_factor=None, seed=None, data_format=None,
                 **kwargs):
        self.value_range = value_range
        self.brightness_factor, self.contrast_factor = brightness_factor, contrast_factor
        self.saturation_factor, self.hue_factor = saturation_factor, hue_factor
        self._parts = [(key, layer(factor=getattr(self, argument), value_range=value_range,
                                   seed=seed))
                       for key, argument, layer in self._PARTS
                       if getattr(self, argument) is not None]
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        return {key: part.get_random_transformation(images, training=training)
                for key, part in self._parts}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        for key, part in self._parts:
            drawn = (part.get_random_transformation(images) if transformation is None
                     else transformation[key])
            images = part.transform_images(images, drawn, training=True)
        return images

    def _layer_config(self):
        return {**super()._layer_config(), "value_range": self.value_range,
                **{argument: getattr(self, argument) for _, argument, _ in self._PARTS}}
