"""``tf.image``'s geometric names: resize (and ResizeMethod, resize_with_pad), the crops and pads
of a bounding box, crop_and_resize and extract_glimpse, flips, transposes and rotations.

Every resize method is two products with host-built interpolation matrices
(``_resize_matrices``, TensorFlow's weights), which Keras's Resizing, CenterCrop and the
augmentation layers share from here; crops are slices and flips are gathers, so autograd
differentiates all of them. ``tf.image`` takes (height, width, channels) images or
(batch, height, width, channels) batches, channels last.
"""
import numbers

import numpy as np

from . import _C, errors
from . import math as _math
from ._array_ops import gather, pad, transpose as _transpose
from ._convert import convert_to_tensor
from ._numpy_ops import flip, rot90 as _rot90
from ._resize_matrices import resize_matrix

__all__ = ["ResizeMethod", "resize", "resize_with_pad", "resize_with_crop_or_pad",
           "central_crop", "crop_to_bounding_box", "pad_to_bounding_box", "flip_left_right",
           "flip_up_down", "transpose", "rot90", "batched", "mix_rows_and_columns",
           "resize_images", "crop_and_resize", "extract_glimpse"]


class ResizeMethod:
    """``tf.image.ResizeMethod``: the method names ``resize`` takes."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_KERNELS_NOT_WRITTEN = (ResizeMethod.GAUSSIAN, ResizeMethod.MITCHELLCUBIC)


def mix_rows_and_columns(images, rows, columns):
    """out[b, i, j, c] = sum over (y, x) of rows[(b,) i, y] images[b, y, x, c] columns[(b,) x, j]:
    channels-last ``images`` with each output row a mix of input rows and each output column a
    mix of input columns. The matrices are shared, (out h, h) and (w, out w), or per image,
    with a leading batch axis; resizing, cropping and flipping are all such products."""
    batch, in_height, in_width, channels = images.shape
    height = rows.shape[-2]
    mixed = _C.matmul(rows, _C.reshape(_C.contiguous(images), [batch, in_height,
                                                                in_width * channels]))
    mixed = _C.permute(_C.reshape(mixed, [batch, height, in_width, channels]), [0, 1, 3, 2])
    if columns.ndim == 3:
        columns = _C.expand_dims(columns, 1)  # per image, shared by the output rows
    out = _C.matmul(_C.contiguous(mixed), columns)                       # (b, height, c, width)
    return _C.contiguous(_C.permute(out, [0, 1, 3, 2]))


def resize_images(images, height, width, interpolation, antialias=False):
    """Channels-last (batch, h, w, c) ``images`` resized to height x width."""
    device, dtype = images._device_name, images._dtype_name

    def constant(matrix):
        return _C.cast(_C.tensor_from_numpy(matrix, device, None, True), dtype)

    rows = constant(resize_matrix(images.shape[1], height, interpolation, antialias))
    columns = constant(resize_matrix(images.shape[2], width, interpolation, antialias).T.copy())
    return mix_rows_and_columns(images, rows, columns)


def batched(images):
    """Rank-4 images (one rank-3 image gets a batch axis), and how to undo that on the result.
    (gpuaccel's image layers are channels-last: ``_data_format`` refuses channels_first.)"""
    if images.ndim == 4:
        return images, lambda out: out
    return _C.expand_dims(images, 0), lambda out: _C.squeeze(out, [0])


def _images(image, arg="images"):
    x = convert_to_tensor(image)
    if x.ndim not in (3, 4):
        raise ValueError(f"'{arg}' (shape {list(x.shape)}) must have either 3 or 4 dimensions.")
    return x


def _size(size):
    values = np.asarray(size.numpy() if hasattr(size, "numpy") else size)
    if values.shape != (2,):
        raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
    if values.dtype.kind not in "iu":
        raise ValueError("'size' must be a 1-D int32 Tensor")
    return int(values[0]), int(values[1])


def _float32_resize(images, height, width, method, antialias):
    """TF's kernels: 'nearest' keeps the dtype, every other method gives float32."""
    if height <= 0 or width <= 0:
        raise errors.InvalidArgumentError(f"output dimensions must be positive, got "
                                          f"[{height}, {width}]")
    if method == ResizeMethod.NEAREST_NEIGHBOR:  # a gather: exact for integer images too
        for axis, size in ((1, height), (2, width)):
            sources = resize_matrix(images.shape[axis], size, method).argmax(axis=1)
            images = gather(images, convert_to_tensor(sources.astype(np.int64)), axis=axis)
        return images
    if images._dtype_name != "float32":
        images = _C.cast(images, "float32")
    return resize_images(images, height, width, method, antialias)


def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None):
    """``tf.image.resize``: images (3-D or 4-D, channels last) resized to ``size`` =
    (height, width), or to the largest size within it with the same aspect ratio."""
    x = _images(images)
    method = getattr(method, "value", method)
    if method in _KERNELS_NOT_WRITTEN:
        raise NotImplementedError(f"tf.image.resize(method={method!r}) is not supported yet; "
                                  "use 'lanczos3', 'bicubic' or 'bilinear'")
    if method not in ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5"):
        raise ValueError(f"Resize method is not implemented: {method}")
    height, width = _size(size)
    x, restore = batched(x)
    if preserve_aspect_ratio:
        in_height, in_width = np.float32(x.shape[1]), np.float32(x.shape[2])
        scale = min(np.float32(height) / in_height, np.float32(width) / in_width)
        height = int(np.round(np.float32(scale * in_height)))
        width = int(np.round(np.float32(scale * in_width)))
    return restore(_float32_resize(x, height, width, method, bool(antialias)))


def _positive_target(target_height, target_width):
    for value, arg in ((target_height, "target_height"), (target_width, "target_width")):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise TypeError(f"{arg} must be an int, got {value!r}")
        if value <= 0:
            raise ValueError(f"{arg} must be > 0.")


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                    antialias=False):
    """``tf.image.resize_with_pad``: resized to fit target_height x target_width keeping the
    aspect ratio, then padded with zeros on both sides to exactly that size."""
    x, restore = batched(_images(image, "image"))
    _positive_target(target_height, target_width)
    f_height, f_width = np.float32(x.shape[1]), np.float32(x.shape[2])
    ratio = max(f_width / np.float32(target_width), f_height / np.float32(target_height))
    resized_height, resized_width = f_height / ratio, f_width / ratio
    pad_top = max(0, int(np.floor((np.float32(target_height) - resized_height) / 2)))
    pad_left = max(0, int(np.floor((np.float32(target_width) - resized_width) / 2)))
    resized = resize(x, [int(np.floor(resized_height)), int(np.floor(resized_width))],
                     method=method, antialias=antialias)
    return restore(pad_to_bounding_box(resized, pad_top, pad_left, target_height, target_width))


def _hw(x):
    return x.shape[x.ndim - 3], x.shape[x.ndim - 2]


def _window(x, top, left, height, width):
    ranges = [(0, d, 1) for d in x.shape]
    ranges[x.ndim - 3] = (top, top + height, 1)
    ranges[x.ndim - 2] = (left, left + width, 1)
    return _C.slice(x, ranges)


def crop_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.crop_to_bounding_box``: the target_height x target_width window whose top
    left corner is (offset_height, offset_width)."""
    x = _images(image, "image")
    height, width = _hw(x)
    for ok, message in ((offset_width >= 0, "offset_width must be >= 0."),
                        (offset_height >= 0, "offset_height must be >= 0."),
                        (target_width > 0, "target_width must be > 0."),
                        (target_height > 0, "target_height must be > 0."),
                        (width >= target_width + offset_width, "width must be >= target + offset."),
                        (height >= target_height + offset_height,
                         "height must be >= target + offset.")):
        if not ok:
            raise ValueError(message)
    return _window(x, int(offset_height), int(offset_width), int(target_height),
                   int(target_width))


def pad_to_bounding_box(image, offset_height, offset_width, target_height, target_width):
    """``tf.image.pad_to_bounding_box``: zeros around the image so it sits at (offset_height,
    offset_width) of a target_height x target_width one."""
    x = _images(image, "image")
    height, width = _hw(x)
    after_height = target_height - offset_height - height
    after_width = target_width - offset_width - width
    for ok, message in ((offset_height >= 0, "offset_height must be >= 0"),
                        (offset_width >= 0, "offset_width must be >= 0"),
                        (after_width >= 0, "width must be <= target - offset"),
                        (after_height >= 0, "height must be <= target - offset")):
        if not ok:
            raise ValueError(message)
    paddings = [[0, 0]] * x.ndim
    paddings[x.ndim - 3] = [int(offset_height), int(after_height)]
    paddings[x.ndim - 2] = [int(offset_width), int(after_width)]
    return pad(x, paddings)


def resize_with_crop_or_pad(image, target_height, target_width):
    """``tf.image.resize_with_crop_or_pad``: centrally cropped where the image is larger than
    the target and padded with zeros where it is smaller (TF's offsets: floor of half)."""
    x = _images(image, "image")
    _positive_target(target_height, target_width)
    height, width = _hw(x)
    cropped = crop_to_bounding_box(x, max((height - target_height) // 2, 0),
                                   max((width - target_width) // 2, 0),
                                   min(height, target_height), min(width, target_width))
    return pad_to_bounding_box(cropped, max((target_height - height) // 2, 0),
                               max((target_width - width) // 2, 0), target_height,
                               target_width)


def central_crop(image, central_fraction):
    """``tf.image.central_crop``: the centred window holding ``central_fraction`` (in (0, 1])
    of each side."""
    x = convert_to_tensor(image)
    if central_fraction <= 0.0 or central_fraction > 1.0:
        raise ValueError("central_fraction must be within (0, 1]")
    if central_fraction == 1.0:
        return x
    if x.ndim not in (3, 4):
        raise ValueError("`image` should either be a Tensor with rank = 3 or rank = 4. Had "
                         f"rank = {x.ndim}.")
    height, width = _hw(x)
    top = int((float(height) - float(height) * central_fraction) / 2)
    left = int((float(width) - float(width) * central_fraction) / 2)
    return _window(x, top, left, height - 2 * top, width - 2 * left)


def flip_left_right(image):
    """``tf.image.flip_left_right``: columns in reverse order."""
    x = _images(image, "image")
    return flip(x, x.ndim - 2)


def flip_up_down(image):
    """``tf.image.flip_up_down``: rows in reverse order."""
    x = _images(image, "image")
    return flip(x, x.ndim - 3)


def transpose(image, name=None):
    """``tf.image.transpose``: height and width swapped."""
    x = _images(image, "image")
    return _transpose(x, [1, 0, 2] if x.ndim == 3 else [0, 2, 1, 3])


def rot90(image, k=1, name=None):
    """``tf.image.rot90``: rotated counter-clockwise by 90 degrees ``k`` times."""
    x = _images(image, "image")
    return _rot90(x, k, (x.ndim - 3, x.ndim - 2))


def _sample_points(starts, ends, length, count):
    """TF's CropAndResize sample coordinates along one axis: (boxes, count) float32 positions
    in pixels of a ``length`` axis, for box edges ``starts``/``ends`` (boxes, 1) in [0, 1]."""
    span = float(length - 1)
    if count == 1:  # the box's middle
        return _C.binary("mul", _C.binary("mul", _C.binary("add", starts, ends),
                                          _C.scalar_like(0.5, starts)),
                         _C.scalar_like(span, starts))
    scale = _C.binary("div", _C.binary("mul", _C.binary("sub", ends, starts), _C.scalar_like(
        span, starts)), _C.scalar_like(float(count - 1), starts))
    steps = _C.tensor_from_numpy(np.arange(count, dtype=np.float32)[None, :],
                                 starts._device_name, None, True)
    return _C.binary("add", _C.binary("mul", starts, _C.scalar_like(span, starts)),
                     _C.binary("mul", steps, scale))


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear",
                    extrapolation_value=0.0, name=None):
    """``tf.image.crop_and_resize``: for each box (y1, x1, y2, x2, normalised) of image
    box_indices[i], crop_size samples per axis spread from edge to edge, read bilinearly or
    from the nearest pixel; samples outside the image give ``extrapolation_value``. Float32
    (num_boxes, crop_height, crop_width, depth); the reads are gathers, so gradients reach
    the image and, through the bilinear weights, the boxes."""
    x = convert_to_tensor(image)
    if x.ndim != 4:
        raise errors.InvalidArgumentError(f"input image must be 4-D, got shape "
                                          f"{list(x.shape)}")
    boxes = convert_to_tensor(boxes)
    indices = convert_to_tensor(box_indices)
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise errors.InvalidArgumentError(f"boxes must be 2-D [num_boxes, 4], got shape "
                                          f"{list(boxes.shape)}")
    if indices.ndim != 1 or indices.shape[0] != boxes.shape[0]:
        raise errors.InvalidArgumentError(f"box_index has incompatible shape "
                                          f"{list(indices.shape)} for {boxes.shape[0]} boxes")
    crop_height, crop_width = _size(crop_size)
    if crop_height <= 0 or crop_width <= 0:
        raise errors.InvalidArgumentError("crop dimensions must be positive")
    if method not in ("bilinear", "nearest"):
        raise ValueError(f"method must be 'bilinear' or 'nearest', got {method!r}")
    batch, height, width, depth = x.shape
    picked = indices.numpy()
    if picked.size and (picked.min() < 0 or picked.max() >= batch):
        raise errors.OutOfRangeError(f"box_index has values outside [0, {batch})")
    count = boxes.shape[0]
    boxes = _C.cast(boxes, "float32") if boxes._dtype_name != "float32" else boxes
    edge = [_C.slice(boxes, [(0, count, 1), (i, i + 1, 1)]) for i in range(4)]
    rows = _sample_points(edge[0], edge[2], height, crop_height)       # (n, ch)
    columns = _sample_points(edge[1], edge[3], width, crop_width)      # (n, cw)
    table = _C.reshape(_C.contiguous(_C.cast(x, "float32")), [batch * height * width, depth])
    base = _C.reshape(_C.cast(_C.binary("mul", _C.cast(indices, "float32"), _C.scalar_like(
        float(height * width), boxes)), "float32"), [count, 1, 1])

    def inside(points, length):
        low = _C.cast(_C.binary("less", points, _C.scalar_like(0.0, points)), "float32")
        high = _C.cast(_C.binary("greater", points, _C.scalar_like(float(length - 1), points)),
                       "float32")
        return _C.binary("sub", _C.scalar_like(1.0, low), _C.binary("maximum", low, high))

    def read(row, column):  # integer-valued float (n, ch, 1) and (n, 1, cw), clamped inside
        row = _C.binary("minimum", _C.binary("maximum", row, _C.scalar_like(0.0, row)),
                        _C.scalar_like(float(height - 1), row))
        column = _C.binary("minimum", _C.binary("maximum", column, _C.scalar_like(
            0.0, column)), _C.scalar_like(float(width - 1), column))
        flat = _C.binary("add", _C.binary("add", _C.binary("mul", row, _C.scalar_like(
            float(width), row)), column), base)
        return _C.embedding(_C.cast(flat, "int64"), table)              # (n, ch, cw, depth)

    rows3, columns3 = _C.expand_dims(rows, 2), _C.expand_dims(columns, 1)
    if method == "nearest":  # roundf: halves away from zero (coordinates here are >= 0)
        def nearest(v):
            return _math.floor(_C.binary("add", v, _C.scalar_like(0.5, v)))
        out = read(nearest(rows3), nearest(columns3))
    else:
        top, left = _math.floor(rows3), _math.floor(columns3)
        bottom, right = _math.ceil(rows3), _math.ceil(columns3)
        y_lerp = _C.expand_dims(_C.binary("sub", rows3, top), 3)
        x_lerp = _C.expand_dims(_C.binary("sub", columns3, left), 3)

        def across(row):
            left_value = read(row, left)
            return _C.binary("add", left_value, _C.binary("mul", _C.binary(
                "sub", read(row, right), left_value), x_lerp))
        upper = across(top)
        out = _C.binary("add", upper, _C.binary("mul", _C.binary("sub", across(bottom), upper),
                                                y_lerp))
    valid = _C.binary("mul", _C.expand_dims(inside(rows, height), 2),
                      _C.expand_dims(inside(columns, width), 1))
    valid = _C.expand_dims(valid, 3)
    return _C.binary("add", _C.binary("mul", valid, out), _C.binary(
        "mul", _C.binary("sub", _C.scalar_like(1.0, valid), valid),
        _C.scalar_like(float(extrapolation_value), valid)))


def _glimpse_start(offset, length, size, centered, normalized):
    """TF's ExtractGlimpseV2 top-left pixel along one axis: the offset scaled to pixels where
    ``normalized``, moved to the centre where ``centered`` (and, both set, back by half the
    glimpse), cast toward zero."""
    value = np.float32(offset)
    if normalized:
        value = value * np.float32(length)
        if centered:
            value = value / np.float32(2) + np.float32(length / 2) - np.float32(size / 2)
    elif centered:
        value = value + np.float32(length / 2)
    return int(value)


def extract_glimpse(input, size, offsets, centered=True, normalized=True, noise="uniform",
                    name=None):
    """``tf.image.extract_glimpse``: a size[0] x size[1] window per image at ``offsets``
    ((y, x) per image), pixels outside the image filled with ``noise``: 'uniform' (between
    the image's minimum and maximum), 'gaussian' (the image's mean and standard deviation,
    drawn from gpuaccel's generator, so not TF's numbers) or 'zero'. The offsets are read on
    the host; the window is a gather, so gradients reach the image."""
    x = convert_to_tensor(input)
    if x.ndim != 4:
        raise errors.InvalidArgumentError(f"input must be a 4-D tensor, got shape "
                                          f"{list(x.shape)}")
    height, width = _size(size)
    if height <= 0 or width <= 0:
        raise errors.InvalidArgumentError(f"size must be positive, got [{height}, {width}]")
    if noise not in ("uniform", "gaussian", "zero"):
        raise errors.InvalidArgumentError(f"noise must be 'uniform', 'gaussian' or 'zero', got "
                                          f"{noise!r}")
    batch, in_height, in_width, depth = x.shape
    where = np.asarray(offsets.numpy() if hasattr(offsets, "numpy") else offsets, np.float32)
    if where.shape != (batch, 2):
        raise errors.InvalidArgumentError(f"offsets must be [batch ({batch}), 2], got shape "
                                          f"{list(where.shape)}")
    rows = np.zeros((batch, height, width), np.int64)  # flat pixel indices, clamped inside
    inside = np.zeros((batch, height, width, 1), np.float32)
    for image, (y, x_offset) in enumerate(where):
        top = _glimpse_start(y, in_height, height, centered, normalized)
        left = _glimpse_start(x_offset, in_width, width, centered, normalized)
        row = np.arange(top, top + height)[:, None]
        column = np.arange(left, left + width)[None, :]
        hit = (row >= 0) & (row < in_height) & (column >= 0) & (column < in_width)
        inside[image, ..., 0] = hit
        flat = image * in_height * in_width + np.clip(row, 0, in_height - 1) * in_width + \
            np.clip(column, 0, in_width - 1)
        rows[image] = flat
    table = _C.reshape(_C.contiguous(x), [batch * in_height * in_width, depth])
    window = _C.embedding(_C.tensor_from_numpy(rows, x._device_name, None, True), table)
    mask = _C.cast(_C.tensor_from_numpy(inside, x._device_name, None, True), x._dtype_name)
    if noise == "zero":
        return _C.binary("mul", mask, window)
    per_image = [1, 2, 3]
    shape = [batch, height, width, depth]
    if noise == "uniform":
        low = _C.reduce("min", x, per_image, True)
        span = _C.binary("sub", _C.reduce("max", x, per_image, True), low)
        fill = _C.binary("add", low, _C.binary("mul", span, _C.cast(_C.tensor_random(
            "uniform", shape, "float32", x._device_name), x._dtype_name)))
    else:
        mean = _C.reduce("mean", x, per_image, True)
        spread = _C.unary("sqrt", _C.reduce("mean", _C.unary("square", _C.binary(
            "sub", x, mean)), per_image, True))
        fill = _C.binary("add", mean, _C.binary("mul", spread, _C.cast(_C.tensor_random(
            "normal", shape, "float32", x._device_name), x._dtype_name)))
    return _C.binary("add", _C.binary("mul", mask, window), _C.binary(
        "mul", _C.binary("sub", _C.scalar_like(1.0, mask), mask), fill))
