"""Keras 3's image augmentation layers (RandomFlip, RandomCrop, RandomContrast, RandomBrightness,
RandomGrayscale, RandomInvert, Solarization, AutoContrast) and Pipeline, written in Python from
gpuaccel's ops and traced into the C++ step like any Python layer (_python_layer.py); their base
also takes Keras's dict form of inputs.

Each layer, as Keras's, splits into ``get_random_transformation(images, training)`` (the random
draws, as tensors, from ``_random_draws`` so that every replay of the trace draws again) and
``transform_images(images, transformation, training)`` (a deterministic function of the two),
so the same transformation can be handed to Keras's layer to compare. Per-image choices (flip
or not, invert or not) blend the two candidates with a 0/1 mask, and crops and flips are
products with 0/1 matrices (``mix_rows_and_columns``): the forward pass never reads a value
back to the host. Called directly (``layer(images)``), the layers augment, as Keras's call
defaults to training=True; inside a model, ``fit`` augments and ``predict``/``evaluate`` do
not.
"""
import numbers

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor as _make_tensor
from . import _random_draws
from ._layer_base import Layer, _data_format
from ._layer_serialization import deserialize, serialize
from .._image_adjust import GRAYSCALE_WEIGHTS
from .._image_resize import batched, mix_rows_and_columns, resize_images
from ._preprocessing_layers import center_crop_box, window_size



def _as_float_tensor(value, like):
    """A transformation entry (a tensor, array, bool or number) as ``like``'s dtype and device."""
    if not isinstance(value, Tensor):
        value = _make_tensor(np.asarray(value, np.float32), device=like._device_name)
    return value if value._dtype_name == like._dtype_name else _C.cast(value, like._dtype_name)


def _blend(mask, chosen, otherwise):
    """where(mask, chosen, otherwise) for a 0/1 ``mask`` and finite values."""
    return _C.binary("add", _C.binary("mul", mask, chosen), _C.binary(
        "mul", _C.binary("sub", _C.scalar_like(1.0, mask), mask), otherwise))


def _clip(x, low, high):
    return _C.binary("minimum", _C.binary("maximum", x, _C.scalar_like(low, x)),
                     _C.scalar_like(high, x))


def _rescale_range(images, source, target):
    """Keras's _transform_value_range: a linear map of ``source`` onto ``target``."""
    if tuple(source) == tuple(target):
        return images
    scale = (target[1] - target[0]) / (source[1] - source[0])
    return _C.binary("add", _C.binary("mul", _C.binary(
        "sub", images, _C.scalar_like(source[0], images)), _C.scalar_like(scale, images)),
        _C.scalar_like(target[0], images))


def _value_range(value_range):
    if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
        raise ValueError("The `value_range` argument should be a list of two numbers. "
                         f"Received: value_range={value_range}")
    return sorted(value_range)


def _factor_pair(factor, bounds, name="factor"):
    """Keras's base ``_set_factor``: a number f is (max(-f, lower bound), f), a pair is sorted;
    both must lie within ``bounds``. (Keras names the argument in its message; the value
    always follows 'factor=' there.)"""
    message = (f"The `{name}` argument should be a number (or a list of two numbers) in the "
               f"range [{bounds[0]}, {bounds[1]}]. Received: factor={factor}")
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2 or factor[0] > bounds[1] or factor[1] < bounds[0]:
            raise ValueError(message)
        return tuple(sorted(factor))
    if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or \
            not bounds[0] <= factor <= bounds[1]:
        raise ValueError(message)
    factor = abs(factor)
    return (max(-factor, bounds[0]), factor)


class _ImageAugmentation(Layer):
    """What the augmentation layers share: rank-3 or rank-4 channels-last inputs, made
    (batch, h, w, c) for ``get_random_transformation`` and ``transform_images``, and Keras's
    default of training=True when the layer is called directly (outside any call())."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        self.seed = seed  # accepted as Keras's; draws come from gpuaccel's global generator
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    _default_training = True

    def call(self, inputs, training=True):
        if inputs.ndim not in (3, 4):
            raise ValueError("Expected the input image to be rank 3 or 4. Received "
                             f"inputs.shape={tuple(inputs.shape)}")
        images, restore = batched(inputs)
        transformation = self.get_random_transformation(images, training=training)
        return restore(self.transform_images(images, transformation, training=training))

    def _images(self, images):
        return images if isinstance(images, Tensor) else self._to_tensor(images)

    def transform_labels(self, labels, transformation, training=True):
        return labels  # Keras's default: only the label-mixing layers change them

    def __call__(self, inputs, training=None, **kwargs):
        """Keras's dict form, {"images": ..., "labels": ..., "bounding_boxes": ...}, every
        entry transformed with one draw, runs eagerly, op by op (the traced C++ call takes
        tensors, not dicts): the form of ``Dataset.map``. Image tensors take the traced path."""
        if not isinstance(inputs, dict):
            return super().__call__(inputs, training=training, **kwargs)
        training = self._default_training if training is None else training
        images, restore = batched(self._images(inputs["images"]))
        transformation = self.get_random_transformation(images, training=training)
        out = dict(inputs)
        out["images"] = restore(self.transform_images(images, transformation, training))
        if "labels" in inputs:
            out["labels"] = self.transform_labels(inputs["labels"], transformation, training)
        if "bounding_boxes" in inputs:
            if not getattr(self, "bounding_box_format", None):
                raise ValueError(
                    "You passed an input with a 'bounding_boxes' key, but you didn't specify a "
                    "bounding box format. Pass a `bounding_box_format` argument to your "
                    f"{type(self).__name__} layer, e.g. `bounding_box_format='xyxy'`.")
            if not hasattr(self, "transform_bounding_boxes"):
                raise NotImplementedError(f"{type(self).__name__} does not transform bounding "
                                          "boxes yet; pass images and labels only")
            out["bounding_boxes"] = self.transform_bounding_boxes(
                inputs["bounding_boxes"], transformation, training)
        return out

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def _layer_config(self):
        return {"seed": self.seed, "data_format": self.data_format}


class RandomFlip(_ImageAugmentation):
    """``keras.layers.RandomFlip(mode='horizontal_and_vertical')``: each image flipped left-right
    and/or up-down with probability 1/2 (one draw per image, shared by both flips)."""

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        if mode not in ("horizontal", "vertical", "horizontal_and_vertical"):
            raise ValueError(f"RandomFlip layer {kwargs.get('name')} received an unknown mode "
                             f"argument {mode}")
        self.mode = mode
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        return {"flips": _random_draws.bernoulli([images.shape[0], 1, 1, 1], 0.5, images),
                "input_shape": tuple(images.shape)}

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        flips = _as_float_tensor(transformation["flips"], images)
        height, width = images.shape[1], images.shape[2]

        def reversal(n, flip):
            eye = np.eye(n, dtype=np.float32)
            return _C.tensor_from_numpy(np.ascontiguousarray(eye[::-1] if flip else eye),
                                        images._device_name, None, True)

        horizontal = self.mode in ("horizontal", "horizontal_and_vertical")
        vertical = self.mode in ("vertical", "horizontal_and_vertical")
        flipped = mix_rows_and_columns(images, _C.cast(reversal(height, vertical),
                                                       images._dtype_name),
                                       _C.cast(reversal(width, horizontal), images._dtype_name))
        return _blend(flips, flipped, images)

    def _layer_config(self):
        return {**super()._layer_config(), "mode": self.mode}


class RandomCrop(_ImageAugmentation):
    """``keras.layers.RandomCrop(height, width)``: while training, one random height x width
    window (the same offset for the whole batch); images smaller than the window are centre
    cropped to its aspect ratio and resized. At inference the images pass unchanged (Keras
    3's rule)."""

    def __init__(self, height, width, seed=None, data_format=None, name=None, **kwargs):
        self.height, self.width = window_size("RandomCrop", height, width)
        super().__init__(seed=seed, data_format=data_format, name=name, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        in_height, in_width = images.shape[1], images.shape[2]
        if training and in_height > self.height and in_width > self.width:
            # floor(uniform(0, n + 1)) for n = in - out: each start equally likely.
            starts = _random_draws.uniform([2], images)
            limits = _C.tensor_from_numpy(np.array([in_height - self.height + 1,
                                                    in_width - self.width + 1], np.float32),
                                          images._device_name, None, True)
            starts = _C.cast(_C.binary("mul", starts, limits), "int64")
            return _C.select(starts, 0, 0), _C.select(starts, 0, 1)
        top, left, _, _ = center_crop_box(in_height, in_width, self.height, self.width)
        return top, left

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training:
            return images
        top, left = transformation
        in_height, in_width = images.shape[1], images.shape[2]
        if isinstance(top, numbers.Integral) and isinstance(left, numbers.Integral):
            height = min(self.height, in_height - top)
            width = min(self.width, in_width - left)
            cropped = _C.slice(images, [(0, images.shape[0], 1), (top, top + height, 1),
                                        (left, left + width, 1), (0, images.shape[3], 1)])
            if (height, width) == (self.height, self.width):
                return cropped
            return resize_images(cropped, self.height, self.width, "bilinear")
        rows = self._window(top, self.height, in_height, images)           # (height, h)
        columns = _C.transpose(self._window(left, self.width, in_width, images), 0, 1)
        return mix_rows_and_columns(images, rows, _C.contiguous(columns))

    @staticmethod
    def _window(start, size, length, like):
        """The (size, length) 0/1 matrix picking rows start .. start + size - 1."""
        start = start if isinstance(start, Tensor) else _make_tensor(np.int64(start))
        positions = _C.binary("add", _C.tensor_arange(0, size, 1, "int64", like._device_name),
                              _C.cast(start, "int64"))
        return _C.one_hot(positions, length, like._dtype_name)

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[-3], shape[-2] = self.height, self.width  # channels-last
        return tuple(shape)

    def _layer_config(self):
        return {**super()._layer_config(), "height": self.height, "width": self.width}


class RandomContrast(_ImageAugmentation):
    """``keras.layers.RandomContrast(factor, value_range=(0, 255))``: each image's channels
    pulled towards or pushed from their mean by a factor drawn in [1 - lower, 1 + upper],
    clipped to ``value_range``."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        self.factor = _factor_pair(factor, (0, 1))
        self.value_range = value_range
        super().__init__(seed=seed, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        shape = [images.shape[0], 1, 1, 1]
        if not training:
            return {"contrast_factor": _C.tensor_full(shape, 0.0, "float32",
                                                      images._device_name)}
        return {"contrast_factor": _random_draws.uniform(shape, images, 1.0 - self.factor[0],
                                                         1.0 + self.factor[1])}

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training:
            return images
        factor = _as_float_tensor(transformation["contrast_factor"], images)
        mean = _C.reduce("mean", _C.reduce("mean", images, [1], True), [2], True)
        adjusted = _C.binary("add", _C.binary("mul", _C.binary("sub", images, mean), factor),
                             mean)
        return _clip(adjusted, self.value_range[0], self.value_range[1])

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor,
                "value_range": self.value_range}


class RandomBrightness(_ImageAugmentation):
    """``keras.layers.RandomBrightness(factor, value_range=(0, 255))``: adds to each image a
    delta drawn in [lower, upper] times the width of ``value_range``, clipped to it."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        self.factor = _factor_pair(factor, (-1, 1))
        self.value_range = _value_range(value_range)
        super().__init__(seed=seed, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data)
        shape = [images.shape[0], 1, 1, 1]
        if not training:
            return {"rgb_delta": _C.tensor_full(shape, 0.0, "float32", images._device_name)}
        width = self.value_range[1] - self.value_range[0]
        return {"rgb_delta": _random_draws.uniform(shape, images, self.factor[0] * width,
                                                   self.factor[1] * width)}

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training:
            return images
        delta = _as_float_tensor(transformation["rgb_delta"], images)
        return _clip(_C.binary("add", images, delta), *self.value_range)

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor,
                "value_range": self.value_range}


class RandomGrayscale(_ImageAugmentation):
    """``keras.layers.RandomGrayscale(factor=0.5)``: each RGB image replaced, with probability
    ``factor``, by its luma (tf.image.rgb_to_grayscale) in all three channels."""

    def __init__(self, factor=0.5, data_format=None, seed=None, **kwargs):
        if isinstance(factor, bool) or not isinstance(factor, numbers.Real) or \
                not 0 <= factor <= 1:
            raise ValueError(f"`factor` should be between 0 and 1. Received: factor={factor}")
        self.factor = float(factor)
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, images, training=True, seed=None):
        images = self._images(images)
        return _random_draws.bernoulli([images.shape[0], 1, 1, 1], self.factor, images)

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training:
            return images
        if images.shape[-1] != 3:
            raise ValueError("RandomGrayscale expects RGB images (3 channels); received images "
                             f"of shape {tuple(images.shape)}")
        weights = _C.cast(_C.tensor_from_numpy(GRAYSCALE_WEIGHTS, images._device_name, None,
                                               True), images._dtype_name)
        gray = _C.reduce("sum", _C.binary("mul", images, weights), [-1], True)
        return _blend(_as_float_tensor(transformation, images), _C.broadcast_to(
            gray, list(images.shape)), images)

    def _layer_config(self):
        return {"factor": self.factor, "data_format": self.data_format}  # no seed, as Keras


class RandomInvert(_ImageAugmentation):
    """``keras.layers.RandomInvert(factor=1.0, value_range=(0, 255))``: each image replaced by
    value_range[1] - image with a probability drawn in [lower, upper] of ``factor``."""

    def __init__(self, factor=1.0, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        self.factor = _factor_pair(factor, (0, 1))
        self.value_range = value_range
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        batch = [images.shape[0]]
        probability = _random_draws.uniform(batch, images, self.factor[0], self.factor[1])
        threshold = _random_draws.uniform(batch, images)
        return {"apply_inversion": _C.binary("less", threshold, probability)}

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        apply = _C.reshape(_as_float_tensor(transformation["apply_inversion"], images),
                           [images.shape[0], 1, 1, 1])
        inverted = _C.binary("sub", _C.scalar_like(self.value_range[1], images), images)
        return _blend(apply, inverted, images)

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor,
                "value_range": self.value_range}


class Solarization(_ImageAugmentation):
    """``keras.layers.Solarization(addition_factor=0.0, threshold_factor=0.0,
    value_range=(0, 255))``: on the 0..255 scale, adds a random amount, clips, and inverts
    (255 - x) the values at or above a random threshold."""

    def __init__(self, addition_factor=0.0, threshold_factor=0.0, value_range=(0, 255),
                 seed=None, **kwargs):
        self.addition_factor = self._factor(addition_factor, "addition_factor")
        self.threshold_factor = self._factor(threshold_factor, "threshold_factor")
        self.value_range = _value_range(value_range)
        super().__init__(seed=seed, **kwargs)

    @staticmethod
    def _factor(factor, name):
        message = ("The `addition_factor` and `threshold_factor` arguments should be a number "
                   "(or a list of two numbers) in the range [0, 1]. ")
        if isinstance(factor, (tuple, list)):
            if len(factor) != 2:
                raise ValueError(message + f"Received: {name}={factor}")
            values = factor
        elif isinstance(factor, numbers.Real) and not isinstance(factor, bool):
            values = (factor,)
        else:
            raise ValueError(message + f"Received: {name}={factor}")
        for value in values:
            if value > 1.0 or value < 0:
                raise ValueError(message + f"Received: input_number={value}")
        return tuple(sorted(factor)) if len(values) == 2 else (0, factor)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        shape = [images.shape[0], 1, 1, 1]
        return {"additions": _random_draws.uniform(shape, images, self.addition_factor[0],
                                                   self.addition_factor[1] * 255),
                "thresholds": _random_draws.uniform(shape, images, self.threshold_factor[0],
                                                    self.threshold_factor[1] * 255)}

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        scaled = _rescale_range(images, self.value_range, (0, 255))
        added = _clip(_C.binary("add", scaled, _as_float_tensor(transformation["additions"],
                                                                 images)), 0, 255)
        below = _C.cast(_C.binary("less", added, _as_float_tensor(transformation["thresholds"],
                                                                   images)), images._dtype_name)
        solarized = _blend(below, added, _C.binary("sub", _C.scalar_like(255.0, added), added))
        return _rescale_range(solarized, (0, 255), self.value_range)

    def _layer_config(self):
        return {**super()._layer_config(), "addition_factor": self.addition_factor,
                "threshold_factor": self.threshold_factor, "value_range": self.value_range}


class AutoContrast(_ImageAugmentation):
    """``keras.layers.AutoContrast(value_range=(0, 255))``: each channel of each image
    stretched linearly so that its minimum and maximum span ``value_range`` (a constant
    channel stays as it is). Deterministic: applied whatever ``training``."""

    def __init__(self, value_range=(0, 255), **kwargs):
        self.value_range = _value_range(value_range)
        super().__init__(**kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        return None

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        scaled = _rescale_range(images, self.value_range, (0, 255))
        low = _C.reduce("min", scaled, [1, 2], True)
        high = _C.reduce("max", scaled, [1, 2], True)
        flat = _C.cast(_C.binary("equal", high, low), images._dtype_name)
        spread = _C.binary("add", _C.binary("sub", high, low), flat)  # 1 where flat: finite
        stretched = _clip(_C.binary("mul", _C.binary("sub", scaled, low), _C.binary(
            "div", _C.scalar_like(255.0, spread), spread)), 0.0, 255.0)
        return _blend(flat, images, _rescale_range(stretched, (0, 255), self.value_range))

    def _layer_config(self):
        return {"value_range": self.value_range, "data_format": self.data_format}


class Pipeline(Layer):
    """``keras.layers.Pipeline(layers)``: the layers applied in order, each with the call's
    ``training`` (augmentation pipelines for Dataset.map or the start of a model). Its config
    lists the layers as Keras's does; entries given as such configs are rebuilt."""
    _default_training = True

    def __init__(self, layers, name=None, **kwargs):
        self.layers = [deserialize(layer) if isinstance(layer, dict) else layer
                       for layer in layers]
        super().__init__(name=name, **kwargs)

    def call(self, inputs, training=True):
        for layer in self.layers:
            inputs = layer(inputs, training=training)
        return inputs

    def compute_output_shape(self, input_shape):
        for layer in self.layers:
            input_shape = layer.compute_output_shape(input_shape)
        return input_shape

    def get_config(self):  # Keras's Pipeline config: its name and layers only
        return {"name": self.name, "layers": [serialize(layer) for layer in self.layers]}
