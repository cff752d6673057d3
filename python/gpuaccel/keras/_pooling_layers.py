"""Keras's pooling layers that have no C++ layer (GlobalMaxPooling2D, the 3-D global poolings,
the 1-D and 3-D poolings, adaptive pooling in 1-D, 2-D and 3-D), written
in Python from gpuaccel's ops: reductions over the spatial axes, and 1-D windows as 2-D pooling
on a (batch, length, 1, channels) view, 3-D windows as 2-D pooling of the planes, then of the
depth. Traced once per input signature into the C++ step
(_python_layer.py)."""
from .. import _C
from ._layer_base import Layer, _data_format, _int_tuple, _padding


class _GlobalPooling(Layer):
    """Reduces the spatial axes of channels-last inputs of rank ``_rank`` with ``_reduction``."""
    _rank = None
    _reduction = None

    def __init__(self, data_format=None, keepdims=False, **kwargs):
        self.data_format = _data_format(data_format)
        self.keepdims = bool(keepdims)
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim != self._rank:
            raise ValueError(f"{type(self).__name__} expects inputs of rank {self._rank} "
                             f"(batch, ..., channels), received shape {tuple(inputs.shape)}")
        return _C.reduce(self._reduction, inputs, list(range(1, self._rank - 1)), self.keepdims)

    def _layer_config(self):
        return {"data_format": self.data_format, "keepdims": self.keepdims}


class GlobalMaxPooling2D(_GlobalPooling):
    """``keras.layers.GlobalMaxPooling2D(keepdims=False)``: the maximum over height and width."""
    _rank, _reduction = 4, "max"


class GlobalAveragePooling1D(_GlobalPooling):
    """``keras.layers.GlobalAveragePooling1D(keepdims=False)``: the mean over the steps."""
    _rank, _reduction = 3, "mean"


class GlobalMaxPooling1D(_GlobalPooling):
    """``keras.layers.GlobalMaxPooling1D(keepdims=False)``: the maximum over the steps."""
    _rank, _reduction = 3, "max"


class GlobalAveragePooling3D(_GlobalPooling):
    """``keras.layers.GlobalAveragePooling3D(keepdims=False)``: the mean over the 3 spatial
    axes."""
    _rank, _reduction = 5, "mean"


class GlobalMaxPooling3D(_GlobalPooling):
    """``keras.layers.GlobalMaxPooling3D(keepdims=False)``: the maximum over the 3 spatial
    axes."""
    _rank, _reduction = 5, "max"


GlobalMaxPool2D = GlobalMaxPooling2D
GlobalAvgPool3D = GlobalAveragePooling3D
GlobalMaxPool3D = GlobalMaxPooling3D
GlobalAvgPool1D = GlobalAveragePooling1D
GlobalMaxPool1D = GlobalMaxPooling1D


class _WindowPooling(Layer):
    """Keras's pooling arguments for windows over ``_rank`` spatial axes; ``_is_max`` picks
    the maximum or the average."""
    _rank = None
    _is_max = None

    def __init__(self, pool_size, strides, padding, data_format, **kwargs):
        self.pool_size = _int_tuple(pool_size, self._rank, "pool_size")
        self.strides = self.pool_size if strides is None else _int_tuple(strides, self._rank,
                                                                         "strides")
        self.padding = _padding(padding)
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def _layer_config(self):
        return {"pool_size": self.pool_size, "padding": self.padding, "strides": self.strides,
                "data_format": self.data_format}


class _Pooling1D(_WindowPooling):
    """1-D windows over (batch, steps, channels): the 2-D pooling op on a (batch, steps, 1,
    channels) view, which has the same windows and the same 'same' padding rule."""
    _rank = 1

    def call(self, inputs):
        if inputs.ndim != 3:
            raise ValueError(f"{type(self).__name__} expects 3-D (batch, steps, channels) "
                             f"inputs, received shape {tuple(inputs.shape)}")
        n, steps, channels = inputs.shape
        pooled = _C.pool2d(_C.reshape(inputs, [n, steps, 1, channels]), self._is_max,
                           self.pool_size[0], 1, self.strides[0], 1, self.padding.upper())
        return _C.reshape(pooled, [n, pooled.shape[1], channels])


class MaxPooling1D(_Pooling1D):
    """``keras.layers.MaxPooling1D(pool_size=2, strides=None, padding='valid')``."""
    _is_max = True

    def __init__(self, pool_size=2, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling1D(_Pooling1D):
    """``keras.layers.AveragePooling1D(pool_size, strides=None, padding='valid')``; 'same'
    padding averages over the in-sequence elements only (Keras's rule)."""
    _is_max = False

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


MaxPool1D = MaxPooling1D
AvgPool1D = AveragePooling1D


def adaptive_pool(x, output_size, reduction):
    """``x`` (batch, ..., channels) pooled by ``reduction`` ("mean" or "max") into
    ``output_size`` bins per spatial axis (the rule _AdaptivePooling describes); also
    ``keras.ops.adaptive_*_pool``."""
    for axis, bins in enumerate(output_size, start=1):
        length = x.shape[axis]
        pieces = []
        for i in range(bins):
            start, stop = (i * length) // bins, -((-(i + 1) * length) // bins)
            ranges = [(0, d, 1) for d in x.shape]
            ranges[axis] = (start, stop, 1)
            pieces.append(_C.reduce(reduction, _C.slice(x, ranges), [axis], True))
        x = pieces[0] if len(pieces) == 1 else _C.concat(pieces, axis)
    return x


class _AdaptivePooling(Layer):
    """Pools each spatial axis of length n into ``output_size`` bins, bin i covering
    [floor(i n / out), ceil((i + 1) n / out)) as Keras's (and PyTorch's) adaptive pooling.
    A mean or maximum over a rectangle of bins is the same taken one axis after the other,
    so each axis is a concat of reduced slices."""
    _rank = None
    _reduction = None

    def __init__(self, output_size, data_format=None, **kwargs):
        self.output_size = _int_tuple(output_size, self._rank, "output_size")
        self.data_format = _data_format(data_format)
        super().__init__(**kwargs)

    def call(self, inputs):
        if inputs.ndim != self._rank + 2:
            raise ValueError(f"{type(self).__name__} expects inputs of rank {self._rank + 2} "
                             f"(batch, ..., channels), received shape {tuple(inputs.shape)}")
        return adaptive_pool(inputs, self.output_size, self._reduction)

    def _layer_config(self):
        return {"output_size": self.output_size, "data_format": self.data_format}


class AdaptiveAveragePooling1D(_AdaptivePooling):
    """``keras.layers.AdaptiveAveragePooling1D(output_size)`` on (batch, steps, channels)."""
    _rank, _reduction = 1, "mean"


class AdaptiveMaxPooling1D(_AdaptivePooling):
    """``keras.layers.AdaptiveMaxPooling1D(output_size)`` on (batch, steps, channels)."""
    _rank, _reduction = 1, "max"


class AdaptiveAveragePooling2D(_AdaptivePooling):
    """``keras.layers.AdaptiveAveragePooling2D(output_size)`` on (batch, height, width,
    channels)."""
    _rank, _reduction = 2, "mean"


class AdaptiveMaxPooling2D(_AdaptivePooling):
    """``keras.layers.AdaptiveMaxPooling2D(output_size)`` on (batch, height, width,
    channels)."""
    _rank, _reduction = 2, "max"


class AdaptiveAveragePooling3D(_AdaptivePooling):
    """``keras.layers.AdaptiveAveragePooling3D(output_size)`` on (batch, depth, height, width,
    channels)."""
    _rank, _reduction = 3, "mean"


class AdaptiveMaxPooling3D(_AdaptivePooling):
    """``keras.layers.AdaptiveMaxPooling3D(output_size)`` on (batch, depth, height, width,
    channels)."""
    _rank, _reduction = 3, "max"


class _Pooling3D(_WindowPooling):
    """3-D windows over (batch, depth, height, width, channels) from the 2-D pooling op: the
    (height, width) windows of every depth slice first, then the depth windows as 2-D windows
    of height 1 over a (batch, depth, height * width, channels) view. A maximum over a box is
    the maximum over its depth of the plane maxima; an average (over the in-volume elements
    only, Keras's 'same' rule) is likewise the average of the plane averages, because the
    in-volume part of a window is a box too. Each axis gets Keras's 'same' padding rule on its
    own, as TensorFlow pads."""
    _rank = 3

    def call(self, inputs):
        if inputs.ndim != 5:
            raise ValueError(f"{type(self).__name__} expects 5-D (batch, depth, height, width, "
                             f"channels) inputs, received shape {tuple(inputs.shape)}")
        n, depth, height, width, channels = inputs.shape
        (pool_d, pool_h, pool_w), (stride_d, stride_h, stride_w) = self.pool_size, self.strides
        padding = self.padding.upper()
        planes = _C.pool2d(_C.reshape(inputs, [n * depth, height, width, channels]),
                           self._is_max, pool_h, pool_w, stride_h, stride_w, padding)
        out_h, out_w = planes.shape[1], planes.shape[2]
        pooled = _C.pool2d(_C.reshape(planes, [n, depth, out_h * out_w, channels]), self._is_max,
                           pool_d, 1, stride_d, 1, padding)
        return _C.reshape(pooled, [n, pooled.shape[1], out_h, out_w, channels])


class MaxPooling3D(_Pooling3D):
    """``keras.layers.MaxPooling3D(pool_size=(2, 2, 2), strides=None, padding='valid')``."""
    _is_max = True

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding="valid", data_format=None,
                 **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


class AveragePooling3D(_Pooling3D):
    """``keras.layers.AveragePooling3D(pool_size, strides=None, padding='valid')``."""
    _is_max = False

    def __init__(self, pool_size, strides=None, padding="valid", data_format=None, **kwargs):
        super().__init__(pool_size, strides, padding, data_format, **kwargs)


MaxPool3D = MaxPooling3D
AvgPool3D = AveragePooling3D
