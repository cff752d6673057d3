"""``tf.nn`` ops that reduce image windows: grayscale morphology (``dilation2d``,
``erosion2d``) and ``max_pool_with_argmax``.

Each window is read through ``tf.image.extract_patches``' strided slices (one slice per kernel
offset), so the ops run on any device and autograd differentiates the values through the
window maximum; SAME padding is filled with the dtype's lowest value, which never wins a
maximum (TF skips padded positions). The argmax indices are computed on the host from the same
windows.
"""
import numpy as np

from . import _C
from ._array_ops import pad
from ._convert import as_tensors, convert_to_tensor
from ._tensor import tensor
from ._numpy_ops import flip
from .image import _four, patch_slices, same_padding

__all__ = ["dilation2d", "erosion2d", "max_pool_with_argmax"]


def _windows(x, kernel, strides, rates, padding):
    """The (K, N, OH, OW, C) window entries of NHWC ``x`` (padding filled with the lowest
    value) and the (top, left) padding added."""
    mode = str(padding).upper()
    if mode not in ("VALID", "SAME"):
        raise ValueError(f"padding must be 'VALID' or 'SAME', got {padding!r}")
    top = left = 0
    if mode == "SAME":
        rows = same_padding(x.shape[1], kernel[0], strides[0], rates[0])
        cols = same_padding(x.shape[2], kernel[1], strides[1], rates[1])
        top, left = rows[0], cols[0]
        lowest = float(np.finfo(np.float32).min) if x._dtype_name == "float32" else \
            float(np.finfo(np.float16).min)
        x = pad(x, [[0, 0], list(rows), list(cols), [0, 0]], constant_values=lowest)
    slices = patch_slices(x, kernel, strides, rates)
    return _C.concat([_C.expand_dims(s, 0) for s in slices], 0), (top, left)


def _nhwc(data_format):
    if data_format not in ("NHWC", None):
        raise ValueError(f"only data_format='NHWC' is supported, got {data_format!r}")


def dilation2d(input, filters, strides, padding, data_format="NHWC", dilations=None,
               name=None):  # noqa: A002 -- TF's names
    """``tf.nn.dilation2d``: out[b, y, x, c] = max over the window (dy, dx) of
    input[b, y*sy + dy*ry, x*sx + dx*rx, c] + filters[dy, dx, c]."""
    _nhwc(data_format)
    x, f = as_tensors(input, filters)
    if x.ndim != 4 or f.ndim != 3 or f.shape[2] != x.shape[3]:
        raise ValueError(f"dilation2d needs a 4-D NHWC input and 3-D (rows, cols, channels) "
                         f"filters with the input's channels, got {list(x.shape)} and "
                         f"{list(f.shape)}")
    kernel = (f.shape[0], f.shape[1])
    windows, _ = _windows(x, kernel, _four(strides, "strides"),
                          _four(dilations or [1, 1, 1, 1], "dilations"), padding)
    offsets = _C.reshape(f, [kernel[0] * kernel[1], 1, 1, 1, f.shape[2]])
    return _C.reduce("max", _C.binary("add", windows, offsets), [0], False)


def erosion2d(value, filters, strides, padding, data_format="NHWC", dilations=None, name=None):
    """``tf.nn.erosion2d``: the dual of dilation, -dilation2d(-value, filters reflected)."""
    x, f = as_tensors(value, filters)
    reflected = flip(f, (0, 1))
    return _C.unary("neg", dilation2d(_C.unary("neg", x), reflected, strides, padding,
                                      data_format, dilations))


def max_pool_with_argmax(input, ksize, strides, padding, data_format="NHWC",  # noqa: A002
                         output_dtype="int64", include_batch_in_index=False, name=None):
    """``tf.nn.max_pool_with_argmax``: (max pooled values, the flat index of each maximum in
    the input: (y * width + x) * channels + c, plus batch * height * width * channels when
    ``include_batch_in_index``). The first maximum of a window wins, as TF's."""
    _nhwc(data_format)
    x = convert_to_tensor(input)
    kernel = _four(ksize if not isinstance(ksize, int) else [1, ksize, ksize, 1], "ksize")
    stride = _four(strides if not isinstance(strides, int) else [1, strides, strides, 1],
                   "strides")
    windows, (top, left) = _windows(x, kernel, stride, (1, 1), padding)
    values = _C.reduce("max", windows, [0], False)
    best = np.argmax(_C.detach(windows).numpy(), axis=0)  # (N, OH, OW, C), first maximum
    n, h, w, c = x.shape
    _, oh, ow, _ = best.shape
    dy, dx = best // kernel[1], best % kernel[1]
    y = np.arange(oh)[None, :, None, None] * stride[0] - top + dy
    xx = np.arange(ow)[None, None, :, None] * stride[1] - left + dx
    index = (y * w + xx) * c + np.arange(c)[None, None, None, :]
    if include_batch_in_index:
        index = index + np.arange(n)[:, None, None, None] * (h * w * c)
    index_dtype = np.dtype(str(getattr(output_dtype, "name", output_dtype)))
    return values, tensor(index.astype(index_dtype), device=x._device_name)
