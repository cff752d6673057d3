"""``F.affine_grid`` and ``F.grid_sample`` (the spatial-transformer tutorial's pair), 2-D and
3-D, composed of device ops so autograd reaches both the input and the grid (and through
affine_grid, theta).

affine_grid is one batched product of the base grid of normalised coordinates with theta.
grid_sample reads, for every output point, the 2 (nearest: 1) neighbours per axis of its
source position: each neighbour is one row of channels gathered from the input (the row-gather
kernel; its gradient scatters back into the input), times its interpolation weight. The
weights are differentiable functions of the grid (each neighbour's index is a constant floor),
so the grid's gradient is PyTorch's. Memory grows with output points x channels per
neighbour (the (N, output points, input points) matrix this replaced grew with the square of
the image: 32 GB for a 300 x 300 image).
"""
import itertools
import warnings

import numpy as np

from . import _C
from . import math as _math
from ._convert import convert_to_tensor

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the old "
                  "behavior is desired. See the documentation of grid_sample for details.")


def _align(align_corners):
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


def _normalised_positions(n, align_corners):
    """The normalised coordinates of n pixels along one axis: -1 and 1 are the corner pixels'
    centres (align_corners) or the image's edges."""
    if n <= 1:
        return np.zeros(max(n, 0), np.float32)
    steps = np.linspace(-1.0, 1.0, n, dtype=np.float32)
    return steps if align_corners else steps * np.float32((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """``F.affine_grid``: (N, H, W, 2) (or (N, D, H, W, 3)) sampling coordinates theta maps the
    output's normalised grid to."""
    theta = convert_to_tensor(theta)
    align_corners = _align(align_corners)
    size = [int(s) for s in size]
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{theta._dtype_name}")
    spatial = len(size) - 2
    if spatial not in (2, 3):
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if theta.ndim != 3 or list(theta.shape[1:]) != [spatial, spatial + 1]:
        raise ValueError(f"Expected a batch of {spatial}D affine matrices of shape "
                         f"Nx{spatial}x{spatial + 1} for size {size}. Got {list(theta.shape)}.")
    if theta.shape[0] != size[0]:
        raise RuntimeError(f"affine_grid: theta holds {theta.shape[0]} matrices for a batch of "
                           f"{size[0]} in size {size}")
    # Coordinates are (x, y[, z], 1) with x along the last axis (width).
    axes = [_normalised_positions(n, align_corners) for n in size[2:]]
    mesh = np.meshgrid(*axes, indexing="ij")                      # D, H, W order
    columns = [m.reshape(-1) for m in reversed(mesh)] + [np.ones(mesh[0].size, np.float32)]
    base = np.stack(columns, axis=1)                              # (points, spatial + 1)
    base_t = _C.tensor_from_numpy(np.ascontiguousarray(base), theta._device_name,
                                  theta._dtype_name, True)
    grid = _C.matmul(base_t, _C.transpose(theta, 1, 2))         # (N, points, spatial)
    return _C.reshape(grid, [size[0]] + size[2:] + [spatial])


def _scalar(value, like):
    return _C.scalar_like(float(value), like)


def _source_positions(coordinate, n, align_corners):
    """A normalised coordinate as a pixel position along an axis of n pixels."""
    one = _scalar(1.0, coordinate)
    if align_corners:
        half_span = _scalar((n - 1) / 2.0, coordinate)
        return _C.binary("mul", _C.binary("add", coordinate, one), half_span)
    return _C.binary("div", _C.binary("sub", _C.binary("mul", _C.binary("add", coordinate, one),
                                                       _scalar(n, coordinate)), one),
                     _scalar(2.0, coordinate))


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """``F.grid_sample``: input sampled at the grid's normalised positions (x first)."""
    x, grid = convert_to_tensor(input), convert_to_tensor(grid)
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if mode == "bicubic" or padding_mode == "reflection":
        raise NotImplementedError(
            f"grid_sample(mode={mode!r}, padding_mode={padding_mode!r}) is not supported by "
            f"gpuaccel yet; use mode='bilinear' or 'nearest' with padding 'zeros' or 'border'")
    align_corners = _align(align_corners)
    spatial = x.ndim - 2
    if spatial not in (2, 3) or grid.ndim != x.ndim or grid.shape[-1] != spatial or \
            grid.shape[0] != x.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected a 4D or 5D input and a grid of the same "
                           f"rank with batch {x.shape[0]} and last size {spatial}, got input of "
                           f"shape {list(x.shape)} and grid of shape {list(grid.shape)}")
    batch, channels, sizes = x.shape[0], x.shape[1], list(x.shape[2:])
    out_sizes = list(grid.shape[1:-1])
    points = int(np.prod(out_sizes, dtype=np.int64))
    inputs = int(np.prod(sizes, dtype=np.int64))
    flat_grid = _C.reshape(_C.contiguous(grid), [batch, points, spatial])
    # Per axis (sizes are D, H, W; the grid's last axis is x, y, z): the source positions.
    positions = []
    for axis, n in enumerate(sizes):
        coordinate = _C.reshape(_C.slice(flat_grid, [(0, batch, 1), (0, points, 1),
                                                    (spatial - 1 - axis, spatial - axis, 1)]),
                                [batch, points])
        p = _source_positions(coordinate, n, align_corners)
        if padding_mode == "border":
            p = _C.binary("minimum", _C.binary("maximum", p, _scalar(0.0, p)), _scalar(n - 1, p))
        positions.append(p)
    taps = []  # per axis: [(integer position, weight)] of its neighbours
    for p in positions:
        if mode == "nearest":
            nearest = _math.round(p)
            taps.append([(nearest, None)])
        else:
            low = _math.floor(_C.detach(p))
            upper = _C.binary("sub", p, low)                        # the upper neighbour's weight
            taps.append([(low, _C.binary("sub", _scalar(1.0, upper), upper)),
                         (_C.binary("add", low, _scalar(1.0, low)), upper)])
    # The input as rows of channels, (N x input points, C): each corner of each output point
    # is one row, gathered (the gather's gradient scatters back into the input).
    table = _C.reshape(_C.contiguous(_C.transpose(_C.reshape(x, [batch, channels, inputs]), 1, 2)),
                       [batch * inputs, channels])
    image_start = _C.reshape(_C.tensor_arange(0, batch * inputs, max(inputs, 1), "int64",
                                              x._device_name), [batch, 1])
    out = None
    for corner in itertools.product(*taps):
        index, weight, valid = None, None, None
        for (position, w), n in zip(corner, sizes):
            in_range = _math.logical_and(_math.greater_equal(position, _scalar(0.0, position)),
                                         _C.binary("less", position, _scalar(n, position)))
            clamped = _C.cast(_C.detach(_C.binary(  # in int64: exact for any image size
                "minimum", _C.binary("maximum", position, _scalar(0.0, position)),
                _scalar(n - 1, position))), "int64")
            index = clamped if index is None else _C.binary(
                "add", _C.binary("mul", index, _C.scalar_like(n, index)), clamped)
            valid = in_range if valid is None else _math.logical_and(valid, in_range)
            if w is not None:
                weight = w if weight is None else _C.binary("mul", weight, w)
        rows = _C.binary("add", index, image_start)
        picked = _C.reshape(_C.embedding(_C.reshape(rows, [-1]), table),
                            [batch, points, channels])
        term = picked if weight is None else _C.binary("mul", picked, _C.expand_dims(weight, -1))
        # a neighbour outside the image adds nothing (selected, not weighted: an inf in the
        # clamped pixel read in its place would give inf * 0)
        term = _C.where(_C.expand_dims(valid, -1), term, _scalar(0.0, term))
        out = term if out is None else _C.binary("add", out, term)
    out = _C.transpose(out, 1, 2)                                    # (N, C, points)
    return _C.reshape(_C.contiguous(out), [batch, channels] + out_sizes)
