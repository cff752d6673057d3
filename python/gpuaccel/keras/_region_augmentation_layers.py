"""Keras 3's augmentation layers that replace or mix whole regions of images: RandomErasing (a
random box filled with noise or a value), MixUp (each image and its label mixed with another's
of the batch) and CutMix (a box of another image pasted in, the labels mixed by area), and
MaxNumBoundingBoxes (boxes cut or padded to a fixed count), built as the layers of
``_augmentation_layers`` (draws as tensors from ``_random_draws``, a deterministic
``transform_images``, no host reads in the forward pass).

Two draws need more than uniform numbers. The Beta(alpha, alpha) weights of MixUp and CutMix
are quantiles of uniform draws (``_random_draws.symmetric_beta_quantiles``), since gpuaccel has
no replayable Beta sampler; CutMix's alpha is itself a draw. The permutation pairing images is
the ranks of uniform draws (a (batch, batch) comparison, ties broken by position), so no sort
is needed; it is applied as a one-hot (batch, batch) product.
"""
import numbers

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor as _make_tensor
from . import _random_draws
from ._augmentation_layers import (_ImageAugmentation, _as_float_tensor, _blend, _clip,
                                   _factor_pair)
from ._random_draws import symmetric_beta_quantiles

def random_permutation(size, like):
    """A uniformly random permutation of 0 .. size - 1 (float32), as the ranks of uniform draws
    (ties, rare, broken by position)."""
    draws = _random_draws.uniform([size], like)
    mine, theirs = _C.expand_dims(draws, 1), _C.expand_dims(draws, 0)        # [i, j]
    below = _C.cast(_C.binary("less", theirs, mine), "float32")
    earlier = _C.tensor_from_numpy(np.tril(np.ones((size, size), np.float32), -1),
                                   like._device_name, None, True)
    tied = _C.binary("mul", _C.cast(_C.binary("equal", theirs, mine), "float32"), earlier)
    return _C.reduce("sum", _C.binary("add", below, tied), [1], False)


def take_rows(values, order):
    """values[order[i]] for each i: a one-hot (n, n) product, so gradients reach ``values``."""
    n = values.shape[0]
    picks = _C.one_hot(_C.contiguous(_C.cast(order, "int64")), n, values._dtype_name)
    flat = _C.reshape(_C.contiguous(values), [n, -1])
    return _C.reshape(_C.matmul(picks, flat), list(values.shape))


class RandomErasing(_ImageAugmentation):
    """``keras.layers.RandomErasing(factor=1.0, scale=(0.02, 0.33), fill_value=None,
    value_range=(0, 255))``: each image, with a probability drawn in [lower, upper] of
    ``factor``, gets a box whose sides are sqrt(a draw in ``scale``) of its own filled with
    ``fill_value`` (a number or an RGB triple) or, without one, Gaussian noise times
    value_range[1], clipped to ``value_range``."""

    def __init__(self, factor=1.0, scale=(0.02, 0.33), fill_value=None, value_range=(0, 255),
                 seed=None, data_format=None, **kwargs):
        self.factor = _factor_pair(factor, (0, 1))
        self.scale = _factor_pair(scale, (0, 1), "scale")
        self.fill_value = fill_value
        self.value_range = value_range
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def _fill(self, images):
        shape = list(images.shape)
        if self.fill_value is None:
            noise = _random_draws.normal(shape, images)
            fill = _C.binary("mul", noise, _C.scalar_like(float(self.value_range[1]), noise))
        elif isinstance(self.fill_value, (tuple, list)) and len(self.fill_value) == 3:
            fill = _C.broadcast_to(_C.tensor_from_numpy(np.asarray(
                self.fill_value, np.float32), images._device_name, None, True), shape)
        elif isinstance(self.fill_value, numbers.Real):
            fill = _C.tensor_full(shape, float(self.fill_value), "float32", images._device_name)
        else:
            raise ValueError("The `fill_value` argument should be a number (or a list of three "
                             "numbers) ")
        return _clip(fill, *self.value_range)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        batch, height, width = images.shape[0], images.shape[1], images.shape[2]
        sides = _C.unary("sqrt", _random_draws.uniform([batch, 2], images, self.scale[0],
                                                       self.scale[1]))
        boxes = [box_bounds(_C.select(sides, 1, axis), length, images)
                 for axis, length in ((0, width), (1, height))]
        probability = _random_draws.uniform([batch], images, self.factor[0], self.factor[1])
        threshold = _random_draws.uniform([batch], images)
        return {"apply_erasing": _C.binary("less", threshold, probability),
                "batch_masks": box_masks(images, *boxes[0], *boxes[1]),
                "fill_value": self._fill(images)}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        masks = _as_float_tensor(transformation["batch_masks"], images)
        apply = _as_float_tensor(transformation["apply_erasing"], images)
        masks = _C.binary("mul", masks, _C.reshape(apply, [images.shape[0], 1, 1, 1]))
        return _blend(masks, _as_float_tensor(transformation["fill_value"], images), images)

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor, "scale": self.scale,
                "fill_value": self.fill_value, "value_range": self.value_range}


def box_bounds(ratio, length, like):
    """Keras's _compute_crop_bounds: a box side ratio * length starting at a uniform draw
    times the room left; (start, end) per image."""
    side = _C.binary("mul", ratio, _C.scalar_like(float(length), ratio))
    room = _C.binary("sub", _C.scalar_like(float(length), side), side)
    start = _C.binary("mul", _random_draws.uniform([ratio.shape[0]], like), room)
    return start, _C.binary("add", start, side)


def box_masks(images, x0, x1, y0, y1):
    """(batch, h, w, c) 0/1: pixel (y, x) of image b lies in [x0, x1) x [y0, y1) of b's box."""
    batch, height, width, channels = images.shape

    def inside(start, end, length, axis):
        grid = _C.tensor_from_numpy(np.arange(length, dtype=np.float32), images._device_name,
                                    None, True)
        start, end = (_C.reshape(v, [batch, 1]) for v in (start, end))
        before = _C.cast(_C.binary("less", grid, start), "float32")  # grid >= start: 1 - this
        hit = _C.binary("mul", _C.binary("sub", _C.scalar_like(1.0, before), before),
                        _C.cast(_C.binary("less", grid, end), "float32"))
        return _C.reshape(hit, [batch] + ([length, 1] if axis == 1 else [1, length]))

    mask = _C.binary("mul", inside(y0, y1, height, 1), inside(x0, x1, width, 2))
    return _C.broadcast_to(_C.expand_dims(mask, 3), [batch, height, width, channels])


class _LabelMixing(_ImageAugmentation):
    """What MixUp and CutMix share: labels mixed as w y + (1 - w) y[perm] with the images'
    draw (given in Keras's dict form {"images": ..., "labels": ...})."""

    def transform_labels(self, labels, transformation, training=True):
        labels = self._images(labels)
        if not training or transformation is None:
            return labels
        weight = _C.reshape(_as_float_tensor(transformation["mix_weight"], labels),
                            [labels.shape[0], 1])
        return _blend(weight, labels, take_rows(labels, _order(transformation, labels)))


class MixUp(_LabelMixing):
    """``keras.layers.MixUp(alpha=0.2)``: each image (and, given {"images", "labels"}, its
    label) mixed with the batch's image at a random permutation, with weight w ~ Beta(alpha,
    alpha): w x + (1 - w) x[perm]."""

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        self.alpha = alpha
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data["images"] if isinstance(data, dict) else data)
        batch = images.shape[0] if images.ndim == 4 else 1
        alpha = _C.tensor_full([], float(self.alpha), "float32", images._device_name)
        return {"mix_weight": symmetric_beta_quantiles(_random_draws.uniform([batch], images),
                                                       alpha),
                "permutation_order": random_permutation(batch, images)}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        weight = _C.reshape(_as_float_tensor(transformation["mix_weight"], images),
                            [images.shape[0], 1, 1, 1])
        return _blend(weight, images, take_rows(images, _order(transformation, images)))

    def _layer_config(self):
        return {**super()._layer_config(), "alpha": self.alpha}


class CutMix(_LabelMixing):
    """``keras.layers.CutMix(factor=1.0)``: each image gets a box of the batch's image at a
    random permutation pasted in; the box's sides are sqrt(1 - w) of the image's for
    w ~ Beta(a, a), a drawn in [lower, upper] of ``factor`` once per call, and the labels mix
    by the area kept. Single images pass unchanged, as in Keras."""

    def __init__(self, factor=1.0, seed=None, data_format=None, **kwargs):
        self.factor = _factor_pair(factor, (0, 1))
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data["images"] if isinstance(data, dict) else data)
        if not training or images.ndim == 3:
            return None
        batch, height, width = images.shape[0], images.shape[1], images.shape[2]
        alpha = _C.binary("add", _C.reshape(_random_draws.uniform(
            [1], images, self.factor[0], self.factor[1]), []), _C.scalar_like(1e-6, images))
        weight = symmetric_beta_quantiles(_random_draws.uniform([batch], images), alpha)
        ratio = _C.unary("sqrt", _C.binary("sub", _C.scalar_like(1.0, weight), weight))
        x0, x1 = box_bounds(ratio, width, images)
        y0, y1 = box_bounds(ratio, height, images)
        area = _C.binary("mul", _C.binary("sub", x1, x0), _C.binary("sub", y1, y0))
        return {"permutation_order": random_permutation(batch, images),
                "batch_masks": box_masks(images, x0, x1, y0, y1),
                "mix_weight": _C.binary("sub", _C.scalar_like(1.0, area), _C.binary(
                    "mul", area, _C.scalar_like(1.0 / (width * height), area)))}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        masks = _as_float_tensor(transformation["batch_masks"], images)
        return _blend(masks, take_rows(images, _order(transformation, images)), images)

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor}


def _order(transformation, like):
    order = transformation["permutation_order"]
    return order if isinstance(order, Tensor) else _as_float_tensor(order, like)


class MaxNumBoundingBoxes(_ImageAugmentation):
    """``keras.layers.MaxNumBoundingBoxes(max_number, fill_value=-1, bounding_box_format=...)``:
    in the dict form, the boxes (batch, n, 4) and their labels (batch, n) cut or padded with
    ``fill_value`` to ``max_number`` per image; images and labels pass unchanged."""

    def __init__(self, max_number, fill_value=-1, bounding_box_format=None, data_format=None,
                 **kwargs):
        self.max_number, self.fill_value = int(max_number), int(fill_value)
        self.bounding_box_format = bounding_box_format
        super().__init__(data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        return None

    def transform_images(self, images, transformation=None, training=True):
        return self._images(images)

    def transform_bounding_boxes(self, bounding_boxes, transformation=None, training=True):
        out = dict(bounding_boxes)
        for key, tail in (("boxes", [4]), ("labels", [])):
            values = bounding_boxes[key]  # labels keep their (integer) dtype, as in Keras
            values = values if isinstance(values, Tensor) else _make_tensor(np.asarray(values))
            batch, count = values.shape[0], values.shape[1]
            kept = _C.slice(values, [(0, batch, 1), (0, min(count, self.max_number), 1)] +
                            [(0, d, 1) for d in tail])
            if count < self.max_number:
                padding = _C.tensor_full([batch, self.max_number - count] + tail,
                                         float(self.fill_value), values._dtype_name,
                                         values._device_name)
                kept = _C.concat([kept, padding], 1)
            out[key] = kept
        return out

    def _layer_config(self):
        return {"data_format": self.data_format, "bounding_box_format": self.bounding_box_format,
                "max_number": self.max_number}
