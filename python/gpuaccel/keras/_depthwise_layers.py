"""Keras's depthwise and separable convolutions (DepthwiseConv1D/2D, SeparableConv1D/2D) as
Python layers traced into the C++ step (_python_layer.py). The work is one grouped conv2d op
(groups = input channels, Conv2dParams::groups in C++) for the depthwise part, and a 1x1 conv2d
for the pointwise part, so the layers need no C++ class of their own. The weights keep Keras 3's
names and layouts: ``kernel`` (DepthwiseConv) or ``depthwise_kernel`` (SeparableConv) of shape
(kernel_size..., in, depth_multiplier), ``pointwise_kernel`` (1..., in * depth_multiplier,
filters), ``bias``. The 1-D layers run as the 2-D ones over a height-1 image, as Conv1D does."""
from .. import _C
from ._layer_base import Layer, _activation, _reject, _strictly_positive, _window_arguments


class _DepthwiseBase(Layer):
    """What the four layers share: the window arguments, the depthwise kernel and its grouped
    convolution, the bias and the activation. ``_rank`` is the number of spatial axes; a
    separable subclass sets ``_pointwise`` and ``_kernel_name``."""
    _rank = None
    _kernel_name = "kernel"  # Keras 3's DepthwiseConv names it so; SeparableConv "depthwise_kernel"
    _pointwise = False

    # Keras's signature of DepthwiseConv1D/2D (strides and dilation_rate 1 stand for (1, 1) too).
    def __init__(self, kernel_size, strides=1, padding="valid", depth_multiplier=1,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", bias_initializer="zeros",
                 depthwise_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 depthwise_constraint=None, bias_constraint=None, **kwargs):
        _reject(type(self).__name__, depthwise_regularizer=depthwise_regularizer,
                bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                depthwise_constraint=depthwise_constraint, bias_constraint=bias_constraint)
        self.depth_multiplier = _strictly_positive(depth_multiplier, "depth_multiplier")
        (self.kernel_size, self.strides, self.padding, self.data_format,
         self.dilation_rate) = _window_arguments(self._rank, kernel_size, strides, padding,
                                                 data_format, dilation_rate)
        self.activation = _activation(activation)
        self.use_bias = bool(use_bias)
        self.depthwise_initializer = depthwise_initializer
        self.bias_initializer = bias_initializer
        super().__init__(**kwargs)

    def _output_channels(self, channels):
        return channels * self.depth_multiplier

    def build(self, input_shape):
        channels = input_shape[-1]
        if len(input_shape) != self._rank + 2:
            raise ValueError(f"Input 0 of layer \"{self.name}\" is incompatible with the layer: "
                             f"expected ndim={self._rank + 2}, found ndim={len(input_shape)}. "
                             f"Full shape received: {tuple(input_shape)}")
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The "
                             f"input_shape received is {tuple(input_shape)}, where axis -1 "
                             "(0-based) is the channel dimension, which found to be `None`.")
        depthwise = self.add_weight(shape=self.kernel_size + (channels, self.depth_multiplier),
                                    initializer=self.depthwise_initializer,
                                    name=self._kernel_name)
        setattr(self, self._kernel_name, depthwise)
        if self._pointwise:
            self.pointwise_kernel = self.add_weight(
                shape=(1,) * self._rank + (channels * self.depth_multiplier, self.filters),
                initializer=self.pointwise_initializer, name="pointwise_kernel")
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=(self._output_channels(channels),),
                                        initializer=self.bias_initializer, name="bias")

    def call(self, inputs):
        image = inputs if self._rank == 2 else _C.expand_dims(inputs, 1)  # (N, 1, L, C)
        window = (1,) * (2 - self._rank)
        kh, kw = window + self.kernel_size
        sh, sw = window + self.strides
        dh, dw = window + self.dilation_rate
        channels = inputs.shape[-1]
        # (k..., C, M) read as the grouped kernel (KH, KW, 1, C * M): filter c * M + m of group c.
        grouped = _C.reshape(getattr(self, self._kernel_name),
                             [kh, kw, 1, channels * self.depth_multiplier])
        bias = None if self._pointwise else self.bias
        out = _C.conv2d(image, grouped, bias, sh, sw, self.padding, dh, dw, "linear", channels)
        if self._pointwise:
            pointwise = _C.reshape(self.pointwise_kernel,
                                   [1, 1, channels * self.depth_multiplier, self.filters])
            out = _C.conv2d(out, pointwise, self.bias, 1, 1, "valid", 1, 1)
        if self._rank == 1:
            out = _C.squeeze(out, [1])
        if self.activation == "linear":
            return out
        from . import activations
        return activations.get(self.activation)(out)

    def _layer_config(self):
        return {"depth_multiplier": self.depth_multiplier, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "activation": self.activation, "use_bias": self.use_bias,
                "depthwise_initializer": self.depthwise_initializer,
                "bias_initializer": self.bias_initializer, "depthwise_regularizer": None,
                "bias_regularizer": None, "activity_regularizer": None,
                "depthwise_constraint": None, "bias_constraint": None}


class _SeparableBase(_DepthwiseBase):
    _kernel_name = "depthwise_kernel"
    _pointwise = True

    # Keras's signature of SeparableConv1D/2D.
    def __init__(self, filters, kernel_size, strides=1, padding="valid", data_format=None,
                 dilation_rate=1, depth_multiplier=1, activation=None, use_bias=True,
                 depthwise_initializer="glorot_uniform", pointwise_initializer="glorot_uniform",
                 bias_initializer="zeros", depthwise_regularizer=None, pointwise_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, depthwise_constraint=None,
                 pointwise_constraint=None, bias_constraint=None, **kwargs):
        _reject(type(self).__name__, pointwise_regularizer=pointwise_regularizer,
                pointwise_constraint=pointwise_constraint)
        self.filters = _strictly_positive(filters, "filters")
        self.pointwise_initializer = pointwise_initializer
        super().__init__(
            kernel_size, strides, padding, depth_multiplier, data_format, dilation_rate,
            activation, use_bias, depthwise_initializer, bias_initializer, depthwise_regularizer,
            bias_regularizer, activity_regularizer, depthwise_constraint, bias_constraint,
            **kwargs)

    def _output_channels(self, channels):
        return self.filters

    def _layer_config(self):
        config = super()._layer_config()
        config.update({"filters": self.filters,
                       "pointwise_initializer": self.pointwise_initializer,
                       "pointwise_regularizer": None, "pointwise_constraint": None})
        return config


class DepthwiseConv2D(_DepthwiseBase):
    """``keras.layers.DepthwiseConv2D(kernel_size, strides=(1, 1), padding='valid',
    depth_multiplier=1, ...)``: each input channel c convolved with its own
    ``depth_multiplier`` filters kernel[:, :, c, :], giving channels c * M + m."""
    _rank = 2


class DepthwiseConv1D(_DepthwiseBase):
    """``keras.layers.DepthwiseConv1D(kernel_size, strides=1, padding='valid',
    depth_multiplier=1, ...)`` on (batch, steps, channels); kernel (k, in, depth_multiplier)."""
    _rank = 1


class SeparableConv2D(_SeparableBase):
    """``keras.layers.SeparableConv2D(filters, kernel_size, strides=(1, 1), padding='valid',
    ..., depth_multiplier=1, ...)``: DepthwiseConv2D (no bias), then a 1x1 convolution to
    ``filters`` channels with the bias."""
    _rank = 2


class SeparableConv1D(_SeparableBase):
    """``keras.layers.SeparableConv1D(filters, kernel_size, strides=1, padding='valid', ...)``
    on (batch, steps, channels): DepthwiseConv1D, then a pointwise (1, in * M, filters) kernel."""
    _rank = 1
