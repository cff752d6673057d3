"""Keras's convolution layers that have no C++ layer (Conv1DTranspose, Conv3D,
Conv3DTranspose), written in Python from gpuaccel's ops and traced once per input signature into
the C++ step (_python_layer.py). The 1-D transposed convolution is the 2-D one (the op behind
Conv2DTranspose) on a (batch, 1, steps, channels) view, as ``gpuaccel.nn.conv1d_transpose``
computes it; the 3-D ones are 2-D convolutions over the depth slices (gpuaccel/_conv3d.py)."""
from .. import _C
from .. import _conv3d
from .. import nn as _nn
from ._layer_base import Layer, _activation, _conv_arguments, _output_padding, _reject


def transposed_length(length, kernel_size, stride, padding, output_padding, dilation):
    """Keras's output length of a transposed convolution along one axis (its
    _get_output_shape_given_tf_padding), None for an undefined input length."""
    if length is None:
        return None
    kernel_size = (kernel_size - 1) * dilation + 1
    if padding == "valid":
        extra = max(kernel_size, stride) - kernel_size if output_padding is None else output_padding
        return (length - 1) * stride + kernel_size + extra
    if output_padding is None:
        return length * stride
    return (length - 1) * stride + kernel_size % 2 + output_padding


class _PythonConvolution(Layer):
    """What the Python convolution layers share: Keras's arguments and their checks, the kernel
    and bias weights (Keras's names and layouts), the bias and activation after the op, the
    config. Subclasses set ``_rank``, say whether they are ``_transposed`` and implement
    ``_convolve`` (and ``compute_output_shape`` where not transposed)."""
    _rank = None
    _transposed = False

    def __init__(self, filters, kernel_size, strides, padding, data_format, dilation_rate,
                 activation, use_bias, kernel_initializer, bias_initializer, kernel_regularizer,
                 bias_regularizer, activity_regularizer, kernel_constraint, bias_constraint,
                 groups=1, output_padding=None, **kwargs):
        kind = type(self).__name__
        _reject(kind, activity_regularizer=activity_regularizer)
        (self.filters, self.kernel_size, self.strides, self.padding, self.data_format,
         self.dilation_rate) = _conv_arguments(kind, self._rank, filters, kernel_size, strides,
                                               padding, data_format, dilation_rate, groups)
        self.groups = int(groups)
        if self._transposed:
            self.output_padding = _output_padding(output_padding, strides, self._rank)
        self.activation = _activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        super().__init__(**kwargs)

    def build(self, input_shape):
        kind = type(self).__name__
        if len(input_shape) != self._rank + 2 or input_shape[-1] is None:
            raise ValueError(f"{kind} expects inputs of rank {self._rank + 2} (batch, "
                             f"{self._rank} spatial axes, channels) with a defined channel "
                             f"count, received input_shape={input_shape}")
        channels = input_shape[-1]
        if channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the input "
                             f"has {channels} channels (full input shape is {input_shape}).")
        kernel_io = ((self.filters, channels) if self._transposed
                     else (channels // self.groups, self.filters))
        self.kernel = self.add_weight(
            name="kernel", shape=tuple(self.kernel_size) + kernel_io,
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.bias = None if not self.use_bias else self.add_weight(
            name="bias", shape=(self.filters,), initializer=self.bias_initializer,
            regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def call(self, inputs):
        from . import activations
        x = self._convolve(inputs)
        if self.bias is not None:
            x = _C.binary("add", x, self.bias)
        return x if self.activation == "linear" else activations.get(self.activation)(x)

    def compute_output_shape(self, input_shape):
        """A transposed convolution's (Keras's sizes); Conv3D gives its own."""
        extra = self.output_padding or (None,) * self._rank
        return (input_shape[0], *(
            transposed_length(length, *axis) for length, axis in zip(
                input_shape[1:-1], zip(self.kernel_size, self.strides, [self.padding] * self._rank,
                                       extra, self.dilation_rate))), self.filters)

    def _layer_config(self):
        config = {"filters": self.filters, "kernel_size": self.kernel_size,
                  "strides": self.strides, "padding": self.padding,
                  "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                  "activation": self.activation, "use_bias": self.use_bias,
                  "kernel_initializer": self.kernel_initializer,
                  "bias_initializer": self.bias_initializer}
        if self._transposed:
            config["output_padding"] = self.output_padding
        else:
            config["groups"] = self.groups
        return config


class Conv1DTranspose(_PythonConvolution):
    """``keras.layers.Conv1DTranspose(filters, kernel_size, strides=1, padding='valid',
    output_padding=None, ...)`` on (batch, steps, channels); kernel (k, filters, in) and bias
    (filters,) as in Keras."""
    _rank = 1
    _transposed = True

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, output_padding=output_padding,
                         **kwargs)

    def _convolve(self, inputs):
        shape = self.compute_output_shape(tuple(inputs.shape))
        return _nn.conv1d_transpose(inputs, self.kernel, list(shape), self.strides[0],
                                    self.padding.upper(), dilations=self.dilation_rate[0])


class Conv3D(_PythonConvolution):
    """``keras.layers.Conv3D(filters, kernel_size, strides=(1, 1, 1), padding='valid', ...,
    groups=1)`` on (batch, depth, height, width, channels); kernel (kd, kh, kw, in / groups,
    filters) as in Keras."""
    _rank = 3

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid", data_format=None,
                 dilation_rate=(1, 1, 1), groups=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, groups=groups, **kwargs)

    def compute_output_shape(self, input_shape):
        def length(size, kernel, stride, dilation):
            if size is None:
                return None
            if self.padding == "same":
                return -(-size // stride)
            return (size - _conv3d.window(kernel, dilation)) // stride + 1
        return (input_shape[0], *(length(*axis) for axis in zip(
            input_shape[1:4], self.kernel_size, self.strides, self.dilation_rate)), self.filters)

    def _convolve(self, inputs):
        pads = _conv3d.padding_pairs(self.padding.upper(), inputs.shape[1:4], self.kernel_size,
                                     self.strides, self.dilation_rate)
        return _conv3d.conv3d(inputs, self.kernel, None, self.strides, pads, self.dilation_rate,
                              self.groups)


class Conv3DTranspose(_PythonConvolution):
    """``keras.layers.Conv3DTranspose(filters, kernel_size, strides=(1, 1, 1),
    padding='valid', output_padding=None, ...)`` on (batch, depth, height, width, channels);
    kernel (kd, kh, kw, filters, in) as in Keras, output sizes as Keras 3 computes them."""
    _rank = 3
    _transposed = True

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, output_padding=None, dilation_rate=(1, 1, 1), activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        super().__init__(filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation, use_bias, kernel_initializer, bias_initializer,
                         kernel_regularizer, bias_regularizer, activity_regularizer,
                         kernel_constraint, bias_constraint, output_padding=output_padding,
                         **kwargs)

    def _convolve(self, inputs):
        out = self.compute_output_shape(tuple(inputs.shape))[1:4]
        # TensorFlow's padding of the convolution whose gradient this is (an output of `out`).
        pads = _conv3d.padding_pairs(self.padding.upper(), out, self.kernel_size, self.strides,
                                     self.dilation_rate)
        return _conv3d.conv3d_transpose(inputs, self.kernel, None, out, self.strides, pads,
                                        self.dilation_rate)


Convolution1DTranspose = Conv1DTranspose
Convolution3D = Conv3D
Convolution3DTranspose = Conv3DTranspose
