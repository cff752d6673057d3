"""``tf.image.draw_bounding_boxes``: box outlines painted onto images, as TF's
DrawBoundingBoxesV2 kernel paints them (one-pixel lines at the truncated box edges, clipped to
the image, colours cycling through ``colors`` or TF's table).

The boxes are read on the host (an eager tf.image call, as TF's kernel reads them on the CPU)
and become a 0/1 mask and a colour image; the painting is a blend of tensors, so gradients
reach the images where no line covers them.
"""
import numpy as np

from . import _C, errors
from ._convert import convert_to_tensor

__all__ = ["draw_bounding_boxes"]

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
