"""Keras 3's geometric augmentation layers (RandomRotation, RandomTranslation, RandomZoom,
RandomShear, RandomPerspective) and the projective sampling they share, written from
gpuaccel's ops so a traced call replays them.

Keras's TensorFlow backend samples with ``ImageProjectiveTransformV3``: output pixel (x, y)
reads the input at ((a0 x + a1 y + a2) / k, (b0 x + b1 y + b2) / k), k = c0 x + c1 y + 1, for
each image's 8-vector [a0, a1, a2, b0, b1, b2, c0, c1]; a coordinate outside the image is
first mapped back by ``fill_mode`` (reflect about the edges, wrap, clamp to the nearest edge,
or left outside for 'constant', where it reads ``fill_value``), then read bilinearly or from
the nearest pixel. Here the coordinates are computed as tensors, the pixels read with the
embedding op (a row gather from the (batch*h*w, c) image table) at the four neighbours,
weighted as TensorFlow does; gradients reach the images through the gather.
"""
import functools
import math
import numbers

import numpy as np

from .. import _C
from .. import math as _math
from . import _random_draws
from ._augmentation_layers import _ImageAugmentation, _as_float_tensor, _blend, _factor_pair

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("nearest", "bilinear")


def _const(value, like):
    return _C.scalar_like(float(value), like)


def _where(mask, chosen, otherwise):
    return _blend(_C.cast(mask, chosen._dtype_name), chosen, otherwise)


def _map_coordinate(coordinate, length, fill_mode):
    """TensorFlow's MapCoordinate: an input coordinate brought inside [0, length - 1]."""
    if fill_mode == "constant":
        return coordinate
    if length <= 1 and fill_mode != "nearest":
        return _C.binary("mul", coordinate, _const(0.0, coordinate))
    top = length - 1
    if fill_mode == "reflect":  # [abcd] -> [dcba|abcd|dcba]
        period = 2.0 * length
        # below 0: into (-period, 0], then mirrored
        low = _C.binary("add", coordinate, _C.binary("mul", _math.trunc(_C.binary(
            "div", _C.unary("neg", coordinate), _const(period, coordinate))),
            _const(period, coordinate)))
        low = _where(_C.binary("less", low, _const(-length, low)),
                     _C.binary("add", low, _const(period, low)),
                     _C.binary("sub", _C.unary("neg", low), _const(1.0, low)))
        # above length - 1: into [0, period), then mirrored
        high = _C.binary("sub", coordinate, _C.binary("mul", _math.trunc(_C.binary(
            "div", coordinate, _const(period, coordinate))), _const(period, coordinate)))
        high = _where(_C.binary("less", high, _const(length, high)), high,
                      _C.binary("sub", _const(period - 1.0, high), high))
        mapped = _where(_C.binary("less", coordinate, _const(0.0, coordinate)), low,
                        _where(_C.binary("greater", coordinate, _const(top, coordinate)), high,
                               coordinate))
    elif fill_mode == "wrap":
        span = float(top)
        low = _C.binary("add", coordinate, _C.binary("mul", _C.binary("add", _math.trunc(
            _C.binary("div", _C.unary("neg", coordinate), _const(span, coordinate))),
            _const(1.0, coordinate)), _const(length, coordinate)))
        high = _C.binary("sub", coordinate, _C.binary("mul", _math.trunc(_C.binary(
            "div", coordinate, _const(span, coordinate))), _const(length, coordinate)))
        mapped = _where(_C.binary("less", coordinate, _const(0.0, coordinate)), low,
                        _where(_C.binary("greater", coordinate, _const(top, coordinate)), high,
                               coordinate))
    else:  # nearest
        mapped = coordinate
    return _C.binary("minimum", _C.binary("maximum", mapped, _const(0.0, mapped)),
                     _const(top, mapped))


def _gather_pixels(table, flat):
    """``table[flat]``: rows of the (pixels, channels) table. ``embedding`` is a one-hot
    product, (indices x pixels) in size: 1 TB for a batch of 32 180x180 images. Where no
    gradient has to reach the images (augmentation of input data, the usual case) a real
    gather along the last axis reads them in O(indices x channels); otherwise embedding
    keeps the gradient."""
    if table.requires_grad:
        return _C.embedding(flat, table)
    channels = table.shape[1]
    columns = _C.contiguous(_C.transpose(table, 0, 1))                # (c, pixels)
    picks = _C.reshape(_C.contiguous(flat), [1, -1])
    picks = _C.contiguous(_C.broadcast_to(picks, [channels, picks.shape[1]]))  # (c, indices)
    gathered = _C.take_along_last_axis(columns, picks)                 # (c, indices)
    return _C.reshape(_C.contiguous(_C.transpose(gathered, 0, 1)), list(flat.shape) + [channels])


def _read(table, batch_offsets, rows, columns, height, width, fill_value):
    """Pixels at integer-valued float (rows, columns) of each image, ``fill_value`` outside."""
    inside = _C.binary("mul", _C.binary("mul", _C.cast(_C.binary("greater", rows, _const(
        -1.0, rows)), "float32"), _C.cast(_C.binary("less", rows, _const(height, rows)),
                                          "float32")),
        _C.binary("mul", _C.cast(_C.binary("greater", columns, _const(-1.0, columns)),
                                 "float32"),
                  _C.cast(_C.binary("less", columns, _const(width, columns)), "float32")))
    row = _C.binary("minimum", _C.binary("maximum", rows, _const(0.0, rows)),
                    _const(height - 1, rows))
    column = _C.binary("minimum", _C.binary("maximum", columns, _const(0.0, columns)),
                       _const(width - 1, columns))
    flat = _C.binary("add", _C.binary("add", _C.binary("mul", row, _const(width, row)), column),
                     batch_offsets)
    pixels = _gather_pixels(table, _C.cast(flat, "int64"))           # (b, h, w, c)
    inside = _C.cast(_C.expand_dims(inside, -1), pixels._dtype_name)
    return _blend(inside, pixels, _const(fill_value, pixels))


def affine_transform(images, transforms, interpolation="bilinear", fill_mode="reflect",
                     fill_value=0.0):
    """Channels-last (batch, h, w, c) ``images`` resampled by per-image (batch, 8) projective
    ``transforms`` (output -> input coordinates), as ``keras.ops.image.affine_transform``."""
    batch, height, width, channels = images.shape
    device = images._device_name
    transforms = _as_float_tensor(transforms, _C.tensor_full([], 0.0, "float32", device))
    grid_x = _C.tensor_from_numpy(np.tile(np.arange(width, dtype=np.float32), (height, 1)),
                                  device, None, True)
    grid_y = _C.tensor_from_numpy(np.repeat(np.arange(height, dtype=np.float32)[:, None],
                                            width, 1), device, None, True)

    def coefficient(i):  # (batch, 1, 1)
        return _C.reshape(_C.contiguous(_C.select(transforms, 1, i)), [batch, 1, 1])

    def combine(i, offset):  # c_i x + c_(i+1) y + offset
        return _C.binary("add", _C.binary("add", _C.binary("mul", coefficient(i), grid_x),
                                          _C.binary("mul", coefficient(i + 1), grid_y)), offset)

    projection = combine(6, _const(1.0, grid_x))
    x = _map_coordinate(_C.binary("div", combine(0, coefficient(2)), projection), width,
                        fill_mode)
    y = _map_coordinate(_C.binary("div", combine(3, coefficient(5)), projection), height,
                        fill_mode)
    table = _C.reshape(_C.contiguous(images), [batch * height * width, channels])
    batch_offsets = _C.tensor_from_numpy(
        (np.arange(batch, dtype=np.float32) * height * width).reshape(batch, 1, 1), device, None,
        True)
    if interpolation == "nearest":  # std::round: halves away from zero
        def rounded(v):
            return _math.trunc(_C.binary("add", v, _C.binary("mul", _math.sign(v),
                                                             _const(0.5, v))))
        return _read(table, batch_offsets, rounded(y), rounded(x), height, width, fill_value)
    x0, y0 = _math.floor(x), _math.floor(y)
    x1, y1 = _C.binary("add", x0, _const(1.0, x0)), _C.binary("add", y0, _const(1.0, y0))

    def weight(w):
        return _C.cast(_C.expand_dims(w, -1), images._dtype_name)

    wx0, wx1 = weight(_C.binary("sub", x1, x)), weight(_C.binary("sub", x, x0))
    wy0, wy1 = weight(_C.binary("sub", y1, y)), weight(_C.binary("sub", y, y0))

    def row_value(row):
        return _C.binary("add", _C.binary("mul", wx0, _read(table, batch_offsets, row, x0,
                                                                 height, width, fill_value)),
                         _C.binary("mul", wx1, _read(table, batch_offsets, row, x1, height,
                                                     width, fill_value)))

    return _C.binary("add", _C.binary("mul", wy0, row_value(y0)),
                     _C.binary("mul", wy1, row_value(y1)))


def _check_fill_and_interpolation(fill_mode, interpolation):
    if fill_mode not in FILL_MODES:
        raise NotImplementedError(f"Unknown `fill_mode` {fill_mode}. Expected of one "
                                  f"{FILL_MODES}.")
    if interpolation not in INTERPOLATIONS:
        raise NotImplementedError(f"Unknown `interpolation` {interpolation}. Expected of one "
                                  f"{INTERPOLATIONS}.")


def _signed_pair(factor, name, lowest, message, lowest_included=True):
    """Keras's translation/zoom ``_set_factor``: a number f is (-|f|, |f|), a pair is sorted;
    each number within [lowest, 1] (zoom: (-1, 1])."""
    values = factor if isinstance(factor, (tuple, list)) else (factor,)
    if isinstance(factor, (tuple, list)) and len(factor) != 2 or any(
            isinstance(v, bool) or not isinstance(v, numbers.Real) for v in values):
        raise ValueError(message + f"Received: {name}={factor}")
    for value in values:
        if value > 1.0 or value < lowest or (value == lowest and not lowest_included):
            raise ValueError(message + f"Received: input_number={value}")
    if isinstance(factor, (tuple, list)):
        return tuple(sorted(factor))
    return (-abs(factor), abs(factor))


class _AffineAugmentation(_ImageAugmentation):
    """Shared by rotation, translation and zoom: the fill and interpolation arguments and the
    resampling of ``transform_images``."""

    def __init__(self, fill_mode, interpolation, seed, fill_value, data_format, **kwargs):
        _check_fill_and_interpolation(fill_mode, interpolation)
        self.fill_mode, self.interpolation = fill_mode, interpolation
        self.fill_value = fill_value
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        return affine_transform(images, self._matrix(transformation, images),
                                self.interpolation, self.fill_mode, self.fill_value)

    def _layer_config(self):
        return {**super()._layer_config(), "fill_mode": self.fill_mode,
                "interpolation": self.interpolation, "fill_value": self.fill_value}


def _rows_of(columns, like):
    """A (batch, 8) transform from 8 (batch, 1) columns (tensors or Python numbers)."""
    batch = next(c for c in columns if not isinstance(c, numbers.Real)).shape[0]
    parts = [c if not isinstance(c, numbers.Real) else
             _C.tensor_full([batch, 1], float(c), "float32", like._device_name) for c in columns]
    return _C.concat(parts, 1)


class RandomRotation(_AffineAugmentation):
    """``keras.layers.RandomRotation(factor, fill_mode='reflect', interpolation='bilinear')``:
    each image rotated about its centre by an angle drawn in [lower, upper] x 360 degrees."""

    def __init__(self, factor, fill_mode="reflect", interpolation="bilinear", seed=None,
                 fill_value=0.0, data_format=None, **kwargs):
        self.factor = _factor_pair(factor, (-1, 1))
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        angle = _random_draws.uniform([images.shape[0]], images, self.factor[0] * 360.0,
                                      self.factor[1] * 360.0)
        return {"angle": angle, "image_height": images.shape[1],
                "image_width": images.shape[2], "batch_size": images.shape[0]}

    def _matrix(self, transformation, images):
        if "rotation_matrix" in transformation:
            return transformation["rotation_matrix"]
        angle = _as_float_tensor(transformation["angle"], _C.tensor_full(
            [], 0.0, "float32", images._device_name))
        radians = _C.reshape(_C.binary("mul", angle, _const(math.pi / 180.0, angle)), [-1, 1])
        cos, sin = _math.cos(radians), _math.sin(radians)
        cx, cy = 0.5 * (images.shape[2] - 1), 0.5 * (images.shape[1] - 1)
        # about the centre: a2 = cx - cx a0 - cy a1, b2 = cy - cx b0 - cy b1
        a2 = _C.binary("add", _C.binary("sub", _const(cx, cos), _C.binary(
            "mul", cos, _const(cx, cos))), _C.binary("mul", sin, _const(cy, sin)))
        b2 = _C.binary("sub", _C.binary("sub", _const(cy, cos), _C.binary(
            "mul", sin, _const(cx, sin))), _C.binary("mul", cos, _const(cy, cos)))
        return _rows_of([cos, _C.unary("neg", sin), a2, sin, cos, b2, 0.0, 0.0], images)

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor}


class RandomTranslation(_AffineAugmentation):
    """``keras.layers.RandomTranslation(height_factor, width_factor, fill_mode='reflect')``:
    each image shifted by fractions of its height and width drawn in the factors' ranges."""
    _MESSAGE = ("The `factor` argument should be a number (or a list of two numbers) in the "
                "range [-1.0, 1.0]. ")

    def __init__(self, height_factor, width_factor, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _signed_pair(height_factor, "height_factor",
                                                            -1.0, self._MESSAGE)
        self.width_lower, self.width_upper = _signed_pair(width_factor, "width_factor", -1.0,
                                                          self._MESSAGE)
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        batch, height, width = images.shape[0], images.shape[1], images.shape[2]
        rows = _random_draws.uniform([batch, 1], images, self.height_lower * height,
                                     self.height_upper * height)
        columns = _random_draws.uniform([batch, 1], images, self.width_lower * width,
                                        self.width_upper * width)
        return {"translations": _C.concat([columns, rows], 1),
                "input_shape": tuple(images.shape)}

    def _matrix(self, transformation, images):
        shifts = _as_float_tensor(transformation["translations"], _C.tensor_full(
            [], 0.0, "float32", images._device_name))
        dx = _C.unary("neg", _C.slice(shifts, [(0, shifts.shape[0], 1), (0, 1, 1)]))
        dy = _C.unary("neg", _C.slice(shifts, [(0, shifts.shape[0], 1), (1, 2, 1)]))
        return _rows_of([1.0, 0.0, dx, 0.0, 1.0, dy, 0.0, 0.0], images)

    def _layer_config(self):
        return {**super()._layer_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class RandomZoom(_AffineAugmentation):
    """``keras.layers.RandomZoom(height_factor, width_factor=None, fill_mode='reflect')``: each
    image scaled about its centre by 1 + a draw in the factor's range (positive: zoom out);
    without ``width_factor`` both axes share the height's draw."""
    _MESSAGE = ("The `height_factor` and `width_factor` arguments should be a number (or a "
                "list of two numbers) in the range (-1.0, 1.0]. ")

    def __init__(self, height_factor, width_factor=None, fill_mode="reflect",
                 interpolation="bilinear", seed=None, fill_value=0.0, data_format=None,
                 **kwargs):
        self.height_factor, self.width_factor = height_factor, width_factor
        self.height_lower, self.height_upper = _signed_pair(
            height_factor, "height_factor", -1.0, self._MESSAGE, lowest_included=False)
        if width_factor is not None:
            self.width_lower, self.width_upper = _signed_pair(
                width_factor, "width_factor", -1.0, self._MESSAGE, lowest_included=False)
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        shape = [images.shape[0], 1]
        height_zoom = _random_draws.uniform(shape, images, 1.0 + self.height_lower,
                                            1.0 + self.height_upper)
        width_zoom = height_zoom if self.width_factor is None else _random_draws.uniform(
            shape, images, 1.0 + self.width_lower, 1.0 + self.width_upper)
        return {"height_zoom": height_zoom, "width_zoom": width_zoom,
                "input_shape": tuple(images.shape)}

    def _matrix(self, transformation, images):
        like = _C.tensor_full([], 0.0, "float32", images._device_name)
        zoom_x = _as_float_tensor(transformation["width_zoom"], like)
        zoom_y = _as_float_tensor(transformation["height_zoom"], like)
        half_width, half_height = (images.shape[2] - 1) / 2.0, (images.shape[1] - 1) / 2.0
        x_offset = _C.binary("mul", _C.binary("sub", _const(1.0, zoom_x), zoom_x),
                             _const(half_width, zoom_x))
        y_offset = _C.binary("mul", _C.binary("sub", _const(1.0, zoom_y), zoom_y),
                             _const(half_height, zoom_y))
        return _rows_of([zoom_x, 0.0, x_offset, 0.0, zoom_y, y_offset, 0.0, 0.0], images)

    def _layer_config(self):
        return {**super()._layer_config(), "height_factor": self.height_factor,
                "width_factor": self.width_factor}


class RandomShear(_AffineAugmentation):
    """``keras.layers.RandomShear(x_factor=0.0, y_factor=0.0, interpolation='bilinear',
    fill_mode='reflect')``: each image sheared by (x, y) amounts drawn in the factors' ranges,
    both negated for half the images: input (x + sx y, sy x + y) read at output (x, y)."""
    _MESSAGE = ("The `factor` argument should be a number (or a list of two numbers) in the "
                "range [0, 1.0]. ")

    def __init__(self, x_factor=0.0, y_factor=0.0, interpolation="bilinear",
                 fill_mode="reflect", fill_value=0.0, data_format=None, seed=None, **kwargs):
        self.x_factor = self._shear_range(x_factor, "x_factor")
        self.y_factor = self._shear_range(y_factor, "y_factor")
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)

    @classmethod
    def _shear_range(cls, factor, name):
        """Keras's _set_factor_with_name: each number in [0, 1]; a number f is (-f, f)."""
        if isinstance(factor, (tuple, list)) and len(factor) != 2 or not isinstance(
                factor, (tuple, list, int, float)) or isinstance(factor, bool):
            raise ValueError(cls._MESSAGE + f"Received: {name}={factor}")
        for value in factor if isinstance(factor, (tuple, list)) else (factor,):
            if value > 1.0 or value < 0.0:
                raise ValueError(cls._MESSAGE + f"Received: input_number={value}")
        if isinstance(factor, (tuple, list)):
            return tuple(sorted(factor))
        return (-abs(factor), abs(factor))

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        shape = [images.shape[0], 1]
        backwards = _random_draws.bernoulli(shape, 0.5, images)  # draw > 0.5: negated
        direction = _C.binary("sub", _const(1.0, backwards), _C.binary("mul", backwards,
                                                                        _const(2.0, backwards)))
        shear_y = _random_draws.uniform(shape, images, *self.y_factor)
        shear_x = _random_draws.uniform(shape, images, *self.x_factor)
        return {"shear_factor": _C.binary("mul", _C.concat([shear_x, shear_y], 1), direction),
                "input_shape": tuple(images.shape)}

    def _matrix(self, transformation, images):
        shears = _as_float_tensor(transformation["shear_factor"], _C.tensor_full(
            [], 0.0, "float32", images._device_name))
        batch = shears.shape[0]
        shear_x, shear_y = (_C.slice(shears, [(0, batch, 1), (i, i + 1, 1)]) for i in (0, 1))
        return _rows_of([1.0, shear_x, 0.0, shear_y, 1.0, 0.0, 0.0, 0.0], images)

    def _layer_config(self):
        return {**super()._layer_config(), "x_factor": self.x_factor,
                "y_factor": self.y_factor}


def _quad_from_square(corners):
    """Heckbert's projective map of the unit square onto the quadrilateral whose corners
    (x, y) are the images' (0, 0), (1, 0), (1, 1), (0, 1): 3x3 entries (row-major) as (batch,)
    tensors, taking (u, v, 1) to homogeneous (x, y, w)."""
    (x0, y0), (x1, y1), (x2, y2), (x3, y3) = corners
    sub, add, mul = (functools.partial(_C.binary, op) for op in ("sub", "add", "mul"))
    sum_x, sum_y = add(sub(x0, x1), sub(x2, x3)), add(sub(y0, y1), sub(y2, y3))
    dx1, dx2, dy1, dy2 = sub(x1, x2), sub(x3, x2), sub(y1, y2), sub(y3, y2)
    den = sub(mul(dx1, dy2), mul(dx2, dy1))
    g = _C.binary("div", sub(mul(sum_x, dy2), mul(dx2, sum_y)), den)
    h = _C.binary("div", sub(mul(dx1, sum_y), mul(sum_x, dy1)), den)
    one = _const(1.0, x0)
    return [add(sub(x1, x0), mul(g, x1)), add(sub(x3, x0), mul(h, x3)), x0,
            add(sub(y1, y0), mul(g, y1)), add(sub(y3, y0), mul(h, y3)), y0,
            g, h, _C.broadcast_to(one, list(x0.shape))]


def _adjugate(m):
    """The adjugate of 3x3 ``m`` (row-major list of tensors): a multiple of its inverse."""
    def minor(r0, r1, c0, c1):
        return _C.binary("sub", _C.binary("mul", m[3 * r0 + c0], m[3 * r1 + c1]),
                         _C.binary("mul", m[3 * r0 + c1], m[3 * r1 + c0]))
    return [minor(1, 2, 1, 2), minor(0, 2, 2, 1), minor(0, 1, 1, 2),
            minor(1, 2, 2, 0), minor(0, 2, 0, 2), minor(0, 1, 2, 0),
            minor(1, 2, 0, 1), minor(0, 2, 1, 0), minor(0, 1, 0, 1)]


def _product(a, b):
    return [functools.reduce(lambda s, t: _C.binary("add", s, t), [
        _C.binary("mul", a[3 * r + k], b[3 * k + c]) for k in range(3)])
        for r in range(3) for c in range(3)]


def homography(start_points, end_points):
    """Keras's compute_homography_matrix: the (batch, 8) projective transform taking each
    end point to its start point (output -> input coordinates), for (batch, 4, 2) corner
    lists ordered top-left, top-right, bottom-left, bottom-right. Here as square -> start
    composed with the inverse of square -> end (closed forms, no linear solve)."""
    def corners(points):
        batch = points.shape[0]
        pick = [0, 1, 3, 2]  # the square's corners go round: TL, TR, BR, BL

        def coordinate(i, axis):
            return _C.reshape(_C.contiguous(_C.slice(points, [(0, batch, 1), (i, i + 1, 1),
                                                              (axis, axis + 1, 1)])),
                              [batch, 1])
        return [(coordinate(i, 0), coordinate(i, 1)) for i in pick]

    matrix = _product(_quad_from_square(corners(start_points)),
                      _adjugate(_quad_from_square(corners(end_points))))
    return _C.concat([_C.binary("div", entry, matrix[8]) for entry in matrix[:8]], 1)


class RandomPerspective(_ImageAugmentation):
    """``keras.layers.RandomPerspective(factor=1.0, scale=1.0, interpolation='bilinear',
    fill_value=0.0)``: each image, with a probability drawn in [lower, upper] of ``factor``,
    warped so that its corners move by up to scale / 2 of their coordinates (constant fill)."""

    def __init__(self, factor=1.0, scale=1.0, interpolation="bilinear", fill_value=0.0,
                 seed=None, data_format=None, **kwargs):
        self.factor = _factor_pair(factor, (0, 1))
        if scale < 0.0 or scale > 1.0:
            raise ValueError("The `scale` argument should be a number in the range [0,1]. "
                             f"Received: scale={scale}")
        _check_fill_and_interpolation("constant", interpolation)
        self.scale, self.interpolation, self.fill_value = scale, interpolation, fill_value
        super().__init__(seed=seed, data_format=data_format, **kwargs)

    def get_random_transformation(self, data, training=True, seed=None):
        if not training:
            return None
        images = self._images(data)
        batch, height, width = images.shape[0], images.shape[1], images.shape[2]
        probability = _random_draws.uniform([batch], images, *self.factor)
        threshold = _random_draws.uniform([batch], images)
        moves = _random_draws.uniform([batch, 4, 2], images, -0.5 * self.scale,
                                      0.5 * self.scale)
        start = _C.tensor_from_numpy(np.tile(np.array(
            [[0.0, 0.0], [width - 1, 0.0], [0.0, height - 1], [width - 1, height - 1]],
            np.float32), (batch, 1, 1)), images._device_name, None, True)
        return {"apply_perspective": _C.binary("less", threshold, probability),
                "start_points": start,
                "end_points": _C.binary("add", start, _C.binary("mul", start, moves)),
                "input_shape": tuple(images.shape)}

    def transform_images(self, images, transformation, training=True):
        images = self._images(images)
        if not training or transformation is None:
            return images
        like = _C.tensor_full([], 0.0, "float32", images._device_name)
        warped = affine_transform(images, homography(
            _as_float_tensor(transformation["start_points"], like),
            _as_float_tensor(transformation["end_points"], like)), self.interpolation,
            "constant", self.fill_value)
        apply = _C.reshape(_as_float_tensor(transformation["apply_perspective"], images),
                           [images.shape[0], 1, 1, 1])
        return _blend(apply, warped, images)

    def _layer_config(self):
        return {**super()._layer_config(), "factor": self.factor, "scale": self.scale,
                "interpolation": self.interpolation, "fill_value": self.fill_value}
