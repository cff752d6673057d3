"""Keras 3's augmentation layers that replace or mix whole regions of images: RandomErasing (a
random box filled with noise or a value) and MixUp (each image and its label mixed with
another's of the batch), built as the layers of ``_augmentation_layers`` (draws as tensors from
``_random_draws``, a deterministic ``transform_images``, no host reads in the forward pass).

Two draws need more than uniform numbers. MixUp's Beta(alpha, alpha) weight is the quantile
of a uniform draw, read by linear interpolation from a table this layer computes on the host
once (its alpha is fixed), since gpuaccel has no replayable Beta sampler. The permutation
pairing images is the ranks of uniform draws (a (batch, batch) comparison, ties broken by
position), so no sort is needed; it is applied as a one-hot (batch, batch) product.
"""
import numbers

import numpy as np

from .. import _C
from .._tensor import Tensor
from . import _random_draws
from ._augmentation_layers import (_ImageAugmentation, _as_float_tensor, _blend, _clip,
                                   _factor_pair)
from .._image_resize import batched

_QUANTILE_STEPS = 4096


def symmetric_beta_quantiles(alpha, steps=_QUANTILE_STEPS):
    """Q(k / steps), k = 0 .. steps, of Beta(alpha, alpha). The CDF on [0, 1/2] integrates,
    after t = s^(1/alpha), the bounded (1 - s^(1/alpha))^(alpha - 1) over s in [0, t^alpha]
    (trapezoids on a fine grid, normalised so that F(1/2) = 1/2); the upper half mirrors."""
    s = np.linspace(0.0, 0.5 ** alpha, 200_001)
    integrand = np.power(np.clip(1.0 - np.power(s, 1.0 / alpha), 0.0, 1.0), alpha - 1.0,
                         where=s < 1.0, out=np.ones_like(s))
    cdf = np.concatenate([[0.0], np.cumsum((integrand[1:] + integrand[:-1]) / 2 * np.diff(s))])
    cdf *= 0.5 / cdf[-1]
    x = np.power(s, 1.0 / alpha)
    lower = np.interp(np.linspace(0.0, 0.5, steps // 2 + 1), cdf, x)
    return np.concatenate([lower, 1.0 - lower[-2::-1]]).astype(np.float32)


def read_table(table, positions):
    """Linear interpolation of the 1-D float32 ``table`` (a tensor) at float ``positions`` in
    [0, len - 1]."""
    top = table.shape[0] - 1
    low = _C.binary("minimum", _C.cast(_C.cast(positions, "int64"), "float32"),
                    _C.scalar_like(float(top - 1), positions))
    fraction = _C.binary("sub", positions, low)
    column = _C.reshape(table, [table.shape[0], 1])

    def at(index):
        return _C.reshape(_C.embedding(_C.cast(index, "int64"), column), list(positions.shape))

    below, above = at(low), at(_C.binary("add", low, _C.scalar_like(1.0, low)))
    return _C.binary("add", below, _C.binary("mul", fraction, _C.binary("sub", above, below)))


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


class MixUp(_ImageAugmentation):
    """``keras.layers.MixUp(alpha=0.2)``: each image (and, given {"images", "labels"}, its
    label) mixed with the batch's image at a random permutation, with weight w ~ Beta(alpha,
    alpha): w x + (1 - w) x[perm]."""

    def __init__(self, alpha=0.2, data_format=None, seed=None, **kwargs):
        self.alpha = alpha
        self._quantiles = symmetric_beta_quantiles(float(alpha))
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        images = self._images(data["images"] if isinstance(data, dict) else data)
        batch = images.shape[0] if images.ndim == 4 else 1
        table = _C.tensor_from_numpy(self._quantiles, images._device_name, None, True)
        positions = _C.binary("mul", _random_draws.uniform([batch], images),
                              _C.scalar_like(float(self._quantiles.shape[0] - 1), images))
        return {"mix_weight": read_table(table, positions),
                "permutation_order": random_permutation(batch, images)}

    def transform_images(self, images, transformation=None, training=True):
        images = self._images(images)
        if not training:
            return images
        weight = _C.reshape(_as_float_tensor(transformation["mix_weight"], images),
                            [images.shape[0], 1, 1, 1])
        return _blend(weight, images, take_rows(images, _order(transformation, images)))

    def transform_labels(self, labels, transformation, training=True):
        labels = self._images(labels)
        if not training:
            return labels
        weight = _C.reshape(_as_float_tensor(transformation["mix_weight"], labels),
                            [labels.shape[0], 1])
        return _blend(weight, labels, take_rows(labels, _order(transformation, labels)))

    def __call__(self, inputs, training=None, **kwargs):
        """Keras's dict form, {"images": ..., "labels": ...} (both mixed with one draw), runs
        eagerly, op by op (the traced C++ call takes tensors, not dicts): the form of
        ``Dataset.map``. Plain image tensors take the traced path."""
        if not isinstance(inputs, dict):
            return super().__call__(inputs, training=training, **kwargs)
        training = self._default_training if training is None else training
        images, restore = batched(self._images(inputs["images"]))
        transformation = self.get_random_transformation(images, training=training)
        out = dict(inputs)
        out["images"] = restore(self.transform_images(images, transformation, training))
        if "labels" in inputs:
            out["labels"] = self.transform_labels(inputs["labels"], transformation, training)
        return out

    def _layer_config(self):
        return {**super()._layer_config(), "alpha": self.alpha}


def _order(transformation, like):
    order = transformation["permutation_order"]
    return order if isinstance(order, Tensor) else _as_float_tensor(order, like)
