"""Keras's reshaping layers that have no C++ layer (ZeroPadding1D/2D/3D, Cropping1D/2D/3D,
UpSampling1D/2D/3D, Permute, RepeatVector, Identity), written in Python from gpuaccel's ops.

Why Python: each is a few existing ops (concat with zeros, slice, broadcast + reshape,
permute), and a Python layer's call is traced once per input signature and replayed in the C++
step (_python_layer.py), so they train without a per-step Python callback.
"""
import numbers

from .. import _C
from .._array_ops import pad as _pad
from ._layer_base import Layer, _data_format, _int_tuple


def _spatial_pairs(value, rank, arg, layer_name):
    """Keras's padding/cropping argument as one (before, after) pair per spatial axis: an int
    (the same everywhere), for rank 1 a pair, else ``rank`` ints (symmetric per axis) or
    ``rank`` pairs."""
    def count(v):
        return isinstance(v, numbers.Integral) and not isinstance(v, bool) and v >= 0

    def pair(p):
        return isinstance(p, (tuple, list)) and len(p) == 2 and all(count(v) for v in p)

    if count(value):
        return ((int(value),) * 2,) * rank
    if rank == 1 and pair(value):
        return ((int(value[0]), int(value[1])),)
    if rank > 1 and isinstance(value, (tuple, list)) and len(value) == rank:
        if all(count(v) for v in value):
            return tuple((int(v), int(v)) for v in value)
        if all(pair(p) for p in value):
            return tuple((int(p[0]), int(p[1])) for p in value)
    shapes = "a tuple of 2 non-negative ints" if rank == 1 else (
        f"a tuple of {rank} non-negative ints, or a tuple of {rank} tuples of 2 non-negative ints")
    raise ValueError(f"`{arg}` of {layer_name} should be a non-negative int or {shapes}. "
                     f"Received: {arg}={value!r}")


def _check_rank(layer, inputs, rank):
    if inputs.ndim != rank + 2:
        raise ValueError(f"{type(layer).__name__} expects inputs of rank {rank + 2} (batch, "
                         f"{rank} spatial axes, channels), received shape {tuple(inputs.shape)}")


def _pairs_config(pairs):
    """Keras's config form: the pair itself for one axis, else the tuple of pairs."""
    return pairs[0] if len(pairs) == 1 else pairs


class _ZeroPadding(Layer):
    """Zeros added before and after each spatial axis of channels-last inputs of rank
    ``_rank`` + 2 (``tf.pad``'s concat with zero blocks per axis)."""
    _rank = None

    def __init__(self, padding, data_format=None, **kwargs):
        self.padding = _spatial_pairs(padding, self._rank, "padding", type(self).__name__)
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def call(self, inputs):
        _check_rank(self, inputs, self._rank)
        return _pad(inputs, [(0, 0), *self.padding, (0, 0)])  # batch and channels unpadded

    def _layer_config(self):
        return {"padding": _pairs_config(self.padding), "data_format": self.data_format}


class ZeroPadding1D(_ZeroPadding):
    """``keras.layers.ZeroPadding1D(padding=1)`` on (batch, steps, channels)."""
    _rank = 1

    def __init__(self, padding=1, data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding2D(_ZeroPadding):
    """``keras.layers.ZeroPadding2D(padding=(1, 1))``: zero rows above/below and zero columns
    left/right of (batch, height, width, channels) images."""
    _rank = 2

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class ZeroPadding3D(_ZeroPadding):
    """``keras.layers.ZeroPadding3D(padding=(1, 1, 1))`` on (batch, d1, d2, d3, channels)."""
    _rank = 3

    def __init__(self, padding=(1, 1, 1), data_format=None, **kwargs):
        super().__init__(padding, data_format, **kwargs)


class _Cropping(Layer):
    """Elements cut from the start and end of each spatial axis (one slice)."""
    _rank = None

    def __init__(self, cropping, data_format=None, **kwargs):
        self.cropping = _spatial_pairs(cropping, self._rank, "cropping", type(self).__name__)
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def call(self, inputs):
        _check_rank(self, inputs, self._rank)
        ranges = [(0, inputs.shape[0], 1)]
        for axis, (before, after) in enumerate(self.cropping, start=1):
            size = inputs.shape[axis]
            if before + after >= size:
                raise ValueError(f"{type(self).__name__}: cropping {_pairs_config(self.cropping)} "
                                 f"leaves nothing of an input of shape {tuple(inputs.shape)} "
                                 f"(axis {axis} has {size}, {before + after} would be cropped)")
            ranges.append((before, size - after, 1))
        ranges.append((0, inputs.shape[-1], 1))
        return _C.slice(inputs, ranges)

    def _layer_config(self):
        return {"cropping": _pairs_config(self.cropping), "data_format": self.data_format}


class Cropping1D(_Cropping):
    """``keras.layers.Cropping1D(cropping=(1, 1))`` on (batch, steps, channels)."""
    _rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, **kwargs)

    def _layer_config(self):
        return {"cropping": self.cropping[0]}  # Keras's Cropping1D has no data_format


class Cropping2D(_Cropping):
    """``keras.layers.Cropping2D(cropping=((0, 0), (0, 0)))``: rows cut from the top/bottom and
    columns from the left/right of (batch, height, width, channels) images."""
    _rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


class Cropping3D(_Cropping):
    """``keras.layers.Cropping3D(cropping=((1, 1), (1, 1), (1, 1)))``."""
    _rank = 3

    def __init__(self, cropping=((1, 1), (1, 1), (1, 1)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


def _repeat_spatial(inputs, sizes):
    """Each element of the spatial axes repeated sizes[i] times along axis i + 1 (nearest
    upsampling): a size-1 axis after each spatial axis, one broadcast, one reshape."""
    n, *spatial, c = inputs.shape
    spread = [n] + [d for size in spatial for d in (size, 1)] + [c]
    target = [n] + [d for size, r in zip(spatial, sizes) for d in (size, r)] + [c]
    repeated = _C.broadcast_to(_C.reshape(inputs, spread), target)
    return _C.reshape(repeated, [n] + [size * r for size, r in zip(spatial, sizes)] + [c])


class UpSampling1D(Layer):
    """``keras.layers.UpSampling1D(size=2)``: each step repeated ``size`` times."""

    def __init__(self, size=2, **kwargs):
        self.size = _int_tuple(size, 1, "size")[0]
        super().__init__(**kwargs)

    def call(self, inputs):
        _check_rank(self, inputs, 1)
        return _repeat_spatial(inputs, [self.size])

    def _layer_config(self):
        return {"size": self.size}


class UpSampling2D(Layer):
    """``keras.layers.UpSampling2D(size=(2, 2), interpolation='nearest')``: each pixel repeated
    size[0] times down and size[1] times across. Only nearest interpolation: gpuaccel has no
    bilinear resize op yet."""

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
        _check_rank(self, inputs, 2)
        return _repeat_spatial(inputs, self.size)

    def _layer_config(self):
        return {"size": self.size, "data_format": self.data_format,
                "interpolation": self.interpolation}


class UpSampling3D(Layer):
    """``keras.layers.UpSampling3D(size=(2, 2, 2))`` on (batch, d1, d2, d3, channels)."""

    def __init__(self, size=(2, 2, 2), data_format=None, **kwargs):
        self.size = _int_tuple(size, 3, "size")
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def call(self, inputs):
        _check_rank(self, inputs, 3)
        return _repeat_spatial(inputs, self.size)

    def _layer_config(self):
        return {"size": self.size, "data_format": self.data_format}


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
