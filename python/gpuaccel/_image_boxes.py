"""``tf.image``'s bounding-box names: ``draw_bounding_boxes`` (box outlines painted onto
images, as TF's DrawBoundingBoxesV2 kernel paints them: one-pixel lines at the truncated box
edges, clipped to the image, colours cycling through ``colors`` or TF's table) and
``sample_distorted_bounding_box`` and its stateless twin (a random crop window that covers
part of a given box, TF's GenerateRandomCrop rule; the window is found on the host, as TF's
CPU kernel finds it, from gpuaccel's draws).

The boxes are read on the host (an eager tf.image call, as TF's kernel reads them on the CPU)
and become a 0/1 mask and a colour image; the painting is a blend of tensors, so gradients
reach the images where no line covers them.
"""
import numpy as np

from . import _C, errors
from . import _random_samplers as _samplers
from ._convert import convert_to_tensor

__all__ = ["draw_bounding_boxes", "sample_distorted_bounding_box",
           "stateless_sample_distorted_bounding_box"]

# TF's default colours (RGBA), box k taking row k mod 10; grayscale images draw in white.
_DEFAULT_COLORS = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1],
                            [0.5, 0, 0.5, 1], [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1],
                            [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)


def _edge(value, length):
    """A normalised coordinate as TF's kernel turns it into a pixel: value * (length - 1) in
    float32, cast toward zero."""
    return int(np.float32(value) * np.float32(length - 1))


def _outlines(boxes, height, width, depth, table):
    """(mask, paint): (batch, h, w, 1) 0/1 and (batch, h, w, depth) colours of the lines."""
    batch = boxes.shape[0]
    mask = np.zeros((batch, height, width, 1), np.float32)
    paint = np.zeros((batch, height, width, depth), np.float32)
    for image in range(batch):
        for k, box in enumerate(boxes[image]):
            top, left = _edge(box[0], height), _edge(box[1], width)
            bottom, right = _edge(box[2], height), _edge(box[3], width)
            if top > bottom or left > right or top > height - 1 or left > width - 1 or \
                    bottom < 0 or right < 0:
                continue
            rows = slice(max(top, 0), min(bottom, height - 1) + 1)
            columns = slice(max(left, 0), min(right, width - 1) + 1)
            lines = [(row, columns) for row in (top, bottom) if 0 <= row < height]
            lines += [(rows, column) for column in (left, right) if 0 <= column < width]
            for where in lines:  # later boxes paint over earlier ones, as in TF
                mask[image][where] = 1.0
                paint[image][where] = table[k % len(table), :depth]
    return mask, paint


def draw_bounding_boxes(images, boxes, colors, name=None):
    """``tf.image.draw_bounding_boxes``: (batch, h, w, depth) float images with the outline
    of each box (batch, num_boxes, 4) of normalised (y_min, x_min, y_max, x_max) drawn in
    colors[k mod len(colors)] (TF's table when none are given)."""
    x = convert_to_tensor(images)
    if x.ndim != 4:
        raise errors.InvalidArgumentError(f"The rank of the images should be 4, got shape "
                                          f"{list(x.shape)}")
    if not x.dtype.is_floating_point:
        raise errors.InvalidArgumentError(f"draw_bounding_boxes takes float images, got "
                                          f"{x.dtype.name}")
    batch, height, width, depth = x.shape
    if depth not in (1, 3, 4):
        raise errors.InvalidArgumentError("Channel depth should be either 1 (GRY), 3 (RGB), or "
                                          f"4 (RGBA), got {depth}")
    box_values = np.asarray(boxes.numpy() if hasattr(boxes, "numpy") else boxes, np.float32)
    if box_values.ndim != 3 or box_values.shape[0] != batch or box_values.shape[2] != 4:
        raise errors.InvalidArgumentError(f"boxes must be [batch ({batch}), num_boxes, 4], got "
                                          f"shape {list(box_values.shape)}")
    table = None if colors is None else np.asarray(
        colors.numpy() if hasattr(colors, "numpy") else colors, np.float32)
    if table is None or table.size == 0:
        table = _DEFAULT_COLORS if depth > 1 else np.ones((1, 4), np.float32)
    elif table.ndim != 2 or table.shape[1] < depth:
        raise errors.InvalidArgumentError(f"colors must be [num_colors, >= depth ({depth})], "
                                          f"got shape {list(table.shape)}")
    mask, paint = _outlines(box_values, height, width, depth, table)

    def constant(array):
        return _C.cast(_C.tensor_from_numpy(array, x._device_name, None, True), x._dtype_name)

    mask, paint = constant(mask), constant(paint)
    kept = _C.binary("mul", x, _C.binary("sub", _C.scalar_like(1.0, mask), mask))
    return _C.binary("add", kept, _C.binary("mul", mask, paint))


def _random_crop_box(width, height, area_range, aspect_ratio, draws):
    """TF's GenerateRandomCrop: a (x, y, w, h) window of the given aspect ratio whose area lies
    in ``area_range`` (fractions of the image), or None; ``draws`` are two uniforms in [0, 1)
    (the height within its range, then the offsets)."""
    min_area = area_range[0] * width * height
    max_area = area_range[1] * width * height
    box_height = int(np.rint(np.sqrt(min_area / aspect_ratio)))
    max_height = int(np.rint(np.sqrt(max_area / aspect_ratio)))
    if int(np.rint(max_height * aspect_ratio)) > width:
        max_height = int((width + 0.5 - 1e-7) / aspect_ratio)
        if int(np.rint(max_height * aspect_ratio)) > width:
            max_height -= 1
    max_height = min(max_height, height)
    box_height = min(box_height, max_height)
    if box_height < max_height:
        box_height += int(draws[0] * (max_height - box_height + 1))
    box_width = int(np.rint(box_height * aspect_ratio))
    if box_width * box_height < min_area:
        box_height += 1
        box_width = int(np.rint(box_height * aspect_ratio))
    if box_width * box_height > max_area:
        box_height -= 1
        box_width = int(np.rint(box_height * aspect_ratio))
    area = box_width * box_height
    if area < min_area or area > max_area or box_width > width or box_height > height or \
            box_width <= 0 or box_height <= 0:
        return None
    y = int(draws[1] * (height - box_height)) if box_height < height else 0
    x = int(draws[2] * (width - box_width)) if box_width < width else 0
    return x, y, box_width, box_height


def _covers(window, boxes, width, height, min_object_covered):
    """Whether the window holds at least ``min_object_covered`` of one box's area (pixel
    boxes from the normalised ones, as TF truncates them)."""
    x, y, w, h = window
    for y_min, x_min, y_max, x_max in boxes:
        left, top = int(x_min * width), int(y_min * height)
        right, bottom = int(x_max * width), int(y_max * height)
        area = (right - left) * (bottom - top)
        if area <= 0:
            continue
        inner = max(0, min(right, x + w) - max(left, x)) * max(0, min(bottom, y + h) -
                                                               max(top, y))
        if inner / area >= min_object_covered:
            return True
    return False


def _sample_distorted_bounding_box(image_size, bounding_boxes, draw, min_object_covered,
                                   aspect_ratio_range, area_range, max_attempts,
                                   use_image_if_no_bounding_boxes):
    size = np.asarray(image_size.numpy() if hasattr(image_size, "numpy") else image_size)
    if size.shape != (3,) or size.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(f"image_size must be 1-D with 3 integers (height, "
                                          f"width, channels), got {size.tolist()}")
    height, width = int(size[0]), int(size[1])
    boxes = np.asarray(bounding_boxes.numpy() if hasattr(bounding_boxes, "numpy")
                       else bounding_boxes, np.float32).reshape(-1, 4)
    if not len(boxes):
        if not use_image_if_no_bounding_boxes:
            raise errors.InvalidArgumentError(
                "No bounding boxes provided as input. One must enable "
                "use_image_if_no_bounding_boxes if you wish to not provide any bounding boxes.")
        boxes = np.array([[0.0, 0.0, 1.0, 1.0]], np.float32)
    aspect_ratio_range = aspect_ratio_range or (0.75, 1.33)
    area_range = area_range or (0.05, 1.0)
    attempts = 100 if max_attempts is None else int(max_attempts)
    if attempts <= 0:
        raise errors.InvalidArgumentError(f"max_attempts must be positive, got {attempts}")
    draws = draw([attempts, 4]).astype(np.float64)
    window = None
    for attempt in draws:
        ratio = attempt[0] * (aspect_ratio_range[1] - aspect_ratio_range[0]) + \
            aspect_ratio_range[0]
        candidate = _random_crop_box(width, height, area_range, ratio, attempt[1:])
        if candidate is not None and _covers(candidate, boxes, width, height,
                                             min_object_covered):
            window = candidate
            break
    x, y, w, h = window or (0, 0, width, height)
    kind = size.dtype if hasattr(image_size, "dtype") else np.int32  # a list: TF's int32
    begin = convert_to_tensor(np.array([y, x, 0], kind))
    extent = convert_to_tensor(np.array([h, w, -1], kind))
    box = np.array([[[y / height, x / width, (y + h) / height, (x + w) / width]]], np.float32)
    return begin, extent, convert_to_tensor(box)


def sample_distorted_bounding_box(image_size, bounding_boxes, seed=0, min_object_covered=0.1,
                                  aspect_ratio_range=None, area_range=None, max_attempts=None,
                                  use_image_if_no_bounding_boxes=None, name=None):
    """``tf.image.sample_distorted_bounding_box``: (begin, size, box) of a random crop window
    with an aspect ratio and area (fractions of the image) in the given ranges that covers at
    least ``min_object_covered`` of one of ``bounding_boxes`` (the whole image after
    ``max_attempts`` failures), TF's GenerateRandomCrop rule on gpuaccel's draws (so not TF's
    numbers). A per-op ``seed`` other than 0 is refused, as everywhere in gpuaccel."""
    _samplers.no_op_seed(seed or None)

    def uniform_draws(shape):
        return _samplers.uniform(shape, 0.0, 1.0).numpy()
    return _sample_distorted_bounding_box(image_size, bounding_boxes, uniform_draws,
                                          min_object_covered, aspect_ratio_range, area_range,
                                          max_attempts, use_image_if_no_bounding_boxes)


def stateless_sample_distorted_bounding_box(image_size, bounding_boxes, seed,
                                            min_object_covered=0.1, aspect_ratio_range=None,
                                            area_range=None, max_attempts=None,
                                            use_image_if_no_bounding_boxes=None, name=None):
    """``tf.image.stateless_sample_distorted_bounding_box``: the same, drawn from the stream
    of the seed pair ``seed`` (the same pair gives the same window)."""
    key = _samplers.key_of(seed)

    def uniform_draws(shape):
        with _samplers.keyed_stream(key):
            return _samplers.uniform(shape, 0.0, 1.0).numpy()
    return _sample_distorted_bounding_box(image_size, bounding_boxes, uniform_draws,
                                          min_object_covered, aspect_ratio_range, area_range,
                                          max_attempts, use_image_if_no_bounding_boxes)
