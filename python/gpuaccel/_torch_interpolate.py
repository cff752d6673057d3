"""``torch.nn.functional.interpolate`` (and its older names ``upsample``, ``upsample_nearest``,
``upsample_bilinear``) for 1-D, 2-D and 3-D (N, C, ...) inputs.

Every mode PyTorch offers here is separable and linear, so each spatial axis is one product
with an (in, out) matrix built on the host from the sizes alone (as ``_resize_matrices`` does
for ``tf.image.resize``, whose rules differ: TensorFlow's nearest is half-pixel, PyTorch's
floors). The weights follow ATen's UpSample kernels: ``area_pixel_compute_source_index`` (half
pixel, clamped at 0 for the linear modes but not for bicubic; with align_corners the corners
map onto each other), bicubic's cubic convolution with A = -0.75 and its taps clamped to the
border, nearest's ``floor(dst * scale)`` and nearest-exact's ``floor((dst + 0.5) * scale)``,
and area as adaptive average pooling. Autograd differentiates the products.
"""
import math

import numpy as np

from . import _C
from ._convert import convert_to_tensor

_SPATIAL_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_INTERPOLATING = ("linear", "bilinear", "bicubic", "trilinear")
_MODES = ("nearest", "nearest-exact", "area") + _INTERPOLATING


def _source_scale(in_size, out_size, align_corners, scale_factor):
    if align_corners:
        return (in_size - 1) / (out_size - 1) if out_size > 1 else 0.0
    if scale_factor is not None and scale_factor > 0:
        return 1.0 / scale_factor
    return in_size / out_size


def _cubic_weights(t, a=-0.75):
    """The four cubic-convolution weights of taps at offsets -1, 0, 1, 2 for fraction t."""
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def interpolation_matrix(in_size, out_size, mode, align_corners, scale_factor):
    """(in_size, out_size) float32: column j holds the weights of output j."""
    matrix = np.zeros((in_size, out_size), np.float64)
    scale = _source_scale(in_size, out_size, align_corners, scale_factor)
    last = in_size - 1
    for j in range(out_size):
        if mode == "nearest":
            matrix[min(int(math.floor(np.float32(j * scale))), last), j] = 1.0
        elif mode == "nearest-exact":
            matrix[min(int(math.floor(np.float32((j + 0.5) * scale))), last), j] = 1.0
        elif mode == "area":  # adaptive average pooling's window
            start, end = (j * in_size) // out_size, -(-((j + 1) * in_size) // out_size)
            matrix[start:end, j] = 1.0 / (end - start)
        else:
            source = j * scale if align_corners else (j + 0.5) * scale - 0.5
            if mode == "bicubic":
                low = math.floor(source)
                for tap, weight in zip(range(low - 1, low + 3), _cubic_weights(source - low)):
                    matrix[min(max(tap, 0), last), j] += weight
            else:
                source = max(source, 0.0)
                low = min(int(math.floor(source)), last)
                high = min(low + 1, last)
                fraction = source - low
                matrix[low, j] += 1.0 - fraction
                matrix[high, j] += fraction
    return matrix.astype(np.float32)


def _per_axis(value, count, name):
    if value is None:
        return [None] * count
    values = list(value) if isinstance(value, (list, tuple)) else [value] * count
    if len(values) != count:
        raise ValueError(f"Input and {name} must have the same number of spatial dimensions, but "
                         f"got input with spatial dimensions of {count} and {name} of "
                         f"{values}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                         f"and {name} in (o1, o2, ...,oK) format.")
    return values


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """``F.interpolate``: each spatial axis of the (N, C, d1[, d2[, d3]]) input resized."""
    x = convert_to_tensor(input)
    if mode not in _MODES:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
            f"(got {mode})")
    if align_corners is not None and mode not in _INTERPOLATING:
        raise ValueError("align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if antialias:
        raise NotImplementedError("interpolate(antialias=True) is not supported by gpuaccel yet")
    spatial = x.ndim - 2
    if spatial < 1 or spatial > 3:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
            f"modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact "
            f"(got {mode})")
    needed = _SPATIAL_DIMS.get(mode)
    if needed is not None and needed != spatial:
        raise NotImplementedError(f"Got {x.ndim}D input, but {mode} mode needs {needed + 2}D "
                                  f"input")
    if (size is None) == (scale_factor is None):
        raise ValueError("only one of size or scale_factor should be defined" if size is not None
                         else "either size or scale_factor should be defined")
    in_sizes = list(x.shape[2:])
    scales = _per_axis(scale_factor, spatial, "scale_factor")
    if size is not None:
        out_sizes = [int(s) for s in _per_axis(size, spatial, "size")]
        scales = [None] * spatial
    else:
        out_sizes = [int(math.floor(n * float(s))) for n, s in zip(in_sizes, scales)]
        if recompute_scale_factor:
            scales = [None] * spatial
    if not x.dtype.is_floating_point:
        raise RuntimeError(f'"upsample_{mode}{spatial}d" not implemented for integer tensors')
    out = x
    for axis, (n, m, s) in enumerate(zip(in_sizes, out_sizes, scales)):
        weights = interpolation_matrix(n, m, mode, bool(align_corners),
                                       None if s is None else float(s))
        out = _apply_along(out, axis + 2, weights)
    return out


def _apply_along(x, axis, weights):
    """x with axis ``axis`` replaced by its product with the (in, out) ``weights``."""
    last = x.ndim - 1
    moved = _C.contiguous(_C.transpose(x, axis, last)) if axis != last else _C.contiguous(x)
    matrix = _C.tensor_from_numpy(weights, x._device_name, x._dtype_name, True)
    lead = list(moved.shape[:-1])
    rows = int(np.prod(lead, dtype=np.int64))
    product = _C.matmul(_C.reshape(moved, [rows, moved.shape[-1]]), matrix)
    out = _C.reshape(product, lead + [weights.shape[1]])
    return _C.contiguous(_C.transpose(out, axis, last)) if axis != last else out


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """``F.upsample``: PyTorch's deprecated name of interpolate."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """``F.upsample_nearest``: interpolate(mode='nearest')."""
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """``F.upsample_bilinear``: interpolate(mode='bilinear', align_corners=True)."""
    return interpolate(input, size, scale_factor, "bilinear", True)
