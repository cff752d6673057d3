"""Keras's reshaping layers that have no C++ layer (ZeroPadding2D, Cropping2D, UpSampling2D,
Permute, RepeatVector, Identity), written in Python from gpuaccel's ops.

Why Python: each is a few existing ops (concat with zeros, slice, broadcast + reshape,
permute), and a Python layer's call is traced once per input signature and replayed in the C++
step (_python_layer.py), so they train without a per-step Python callback.
"""
import numbers

from .. import _C
from .layers import Layer, _data_format, _int_tuple


def _pairs(value, arg, layer_name):
    """Keras's 2-D padding/cropping argument as ((top, bottom), (left, right)): an int, a pair of
    ints (symmetric per axis) or a pair of pairs."""
    def non_negative(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0

    if non_negative(value):
        return ((int(value),) * 2,) * 2
    if isinstance(value, (tuple, list)) and len(value) == 2:
        if all(non_negative(v) for v in value):
            return tuple((int(v), int(v)) for v in value)
        if all(isinstance(p, (tuple, list)) and len(p) == 2 and all(non_negative(v) for v in p)
               for p in value):
            return tuple((int(p[0]), int(p[1])) for p in value)
    raise ValueError(f"`{arg}` of {layer_name} should be a non-negative int, a tuple of 2 "
                     f"non-negative ints, or a tuple of 2 tuples of 2 non-negative ints. "
                     f"Received: {arg}={value!r}")


class ZeroPadding2D(Layer):
    """``keras.layers.ZeroPadding2D(padding=(1, 1))``: zero rows above/below and zero columns
    left/right of (batch, height, width, channels) images."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        self.padding = _pairs(padding, "padding", "ZeroPadding2D")
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def call(self, inputs):
        x = inputs
        for axis, (before, after) in zip((1, 2), self.padding):
            if before == 0 and after == 0:
                continue
            parts = []
            for count in (before, after):
                shape = list(x.shape)
                shape[axis] = count
                parts.append(_C.tensor_full(shape, 0.0, x._dtype_name, x._device_name))
            x = _C.concat([parts[0], x, parts[1]], axis)
        return x

    def _layer_config(self):
        return {"padding": self.padding, "data_format": self.data_format}


class Cropping2D(Layer):
    """``keras.layers.Cropping2D(cropping=((0, 0), (0, 0)))``: rows cut from the top/bottom and
    columns from the left/right of (batch, height, width, channels) images."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        self.cropping = _pairs(cropping, "cropping", "Cropping2D")
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim != 4:
            raise ValueError(f"Cropping2D expects 4-D (batch, height, width, channels) inputs, "
                             f"received shape {tuple(inputs.shape)}")
        ranges = [(0, inputs.shape[0], 1)]
        for axis, (before, after) in zip((1, 2), self.cropping):
            size = inputs.shape[axis]
            if before + after >= size:
                raise ValueError(f"Cropping2D: cropping {self.cropping} leaves nothing of an "
                                 f"input of shape {tuple(inputs.shape)} (axis {axis} has {size}, "
                                 f"{before + after} would be cropped)")
            ranges.append((before, size - after, 1))
        ranges.append((0, inputs.shape[3], 1))
        return _C.slice(inputs, ranges)

    def _layer_config(self):
        return {"cropping": self.cropping, "data_format": self.data_format}


class UpSampling2D(Layer):
    """``keras.layers.UpSampling2D(size=(2, 2), interpolation='nearest')``: each pixel repeated
    size[0] times down and size[1] times across (one broadcast and a reshape). Only nearest
    interpolation: gpuaccel has no bilinear resize op yet."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        self.size = _int_tuple(size, 2, "size")
        self.data_format = _data_format(data_format)
        if interpolation != "nearest":
            if interpolation in ("bilinear", "bicubic", "lanczos3", "lanczos5", "area"):
                raise NotImplementedError(f"UpSampling2D: interpolation={interpolation!r} is not "
                                          "supported yet (no resize op); use 'nearest'")
            raise ValueError("`interpolation` argument should be one of: 'bicubic', "
                             "'bilinear', 'lanczos3', 'lanczos5', 'nearest', 'area'. "
                             f"Received: interpolation={interpolation!r}")
        self.interpolation = interpolation
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim != 4:
            raise ValueError(f"UpSampling2D expects 4-D (batch, height, width, channels) inputs, "
                             f"received shape {tuple(inputs.shape)}")
        n, h, w, c = inputs.shape
        sh, sw = self.size
        spread = _C.broadcast_to(_C.reshape(inputs, [n, h, 1, w, 1, c]), [n, h, sh, w, sw, c])
        return _C.reshape(spread, [n, h * sh, w * sw, c])

    def _layer_config(self):
        return {"size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class Permute(Layer):
    """``keras.layers.Permute(dims)``: permutes the non-batch axes; ``dims`` counts from 1."""

    def __init__(self, dims, **kwargs):
        dims = tuple(dims)
        if sorted(dims) != list(range(1, len(dims) + 1)):
            raise ValueError("Invalid permutation argument `dims` for Permute Layer. The set of "
                             "indices in `dims` must be consecutive and start from 1. Received "
                             f"dims={dims}")
        self.dims = dims
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim != len(self.dims) + 1:
            raise ValueError(f"Permute(dims={self.dims}) expects inputs of rank "
                             f"{len(self.dims) + 1}, received shape {tuple(inputs.shape)}")
        return _C.permute(inputs, [0] + list(self.dims))

    def _layer_config(self):
        return {"dims": self.dims}


class RepeatVector(Layer):
    """``keras.layers.RepeatVector(n)``: (batch, features) -> (batch, n, features)."""

    def __init__(self, n, **kwargs):
        if isinstance(n, bool) or not isinstance(n, numbers.Integral):
            raise TypeError(f"Expected an integer value for `n`, got {type(n).__name__}.")
        self.n = int(n)
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim != 2:
            raise ValueError(f"RepeatVector expects 2-D (batch, features) inputs, received shape "
                             f"{tuple(inputs.shape)}")
        batch, features = inputs.shape
        return _C.broadcast_to(_C.reshape(inputs, [batch, 1, features]),
                               [batch, self.n, features])

    def _layer_config(self):
        return {"n": self.n}


class Identity(Layer):
    """``keras.layers.Identity()``: returns its input."""

    def call(self, inputs):
        return inputs
