"""Keras's convolution layers that have no C++ layer (Conv1DTranspose), written in Python from
gpuaccel's ops and traced once per input signature into the C++ step (_python_layer.py). The
1-D transposed convolution is the 2-D one (the op behind Conv2DTranspose) on a (batch, 1, steps,
channels) view, as ``gpuaccel.nn.conv1d_transpose`` computes it."""
from .. import _C
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


class Conv1DTranspose(Layer):
    """``keras.layers.Conv1DTranspose(filters, kernel_size, strides=1, padding='valid',
    output_padding=None, ...)`` on (batch, steps, channels); kernel (k, filters, in) and bias
    (filters,) as in Keras."""

    def __init__(self, filters, kernel_size, strides=1, padding="valid", output_padding=None,
                 data_format=None, dilation_rate=1, activation=None, use_bias=True,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        _reject("Conv1DTranspose", activity_regularizer=activity_regularizer)
        (self.filters, self.kernel_size, self.strides, self.padding, self.data_format,
         self.dilation_rate) = _conv_arguments("Conv1DTranspose", 1, filters, kernel_size,
                                               strides, padding, data_format, dilation_rate)
        self.output_padding = _output_padding(output_padding, strides, 1)
        self.activation = _activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        super().__init__(**kwargs)

    def build(self, input_shape):
        if len(input_shape) != 3 or input_shape[-1] is None:
            raise ValueError(f"Conv1DTranspose expects (batch, steps, channels) inputs with a "
                             f"defined channel count, received input_shape={input_shape}")
        self.kernel = self.add_weight(
            name="kernel", shape=(self.kernel_size[0], self.filters, input_shape[-1]),
            initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
            constraint=self.kernel_constraint)
        self.bias = None if not self.use_bias else self.add_weight(
            name="bias", shape=(self.filters,), initializer=self.bias_initializer,
            regularizer=self.bias_regularizer, constraint=self.bias_constraint)

    def compute_output_shape(self, input_shape):
        length = transposed_length(input_shape[1], self.kernel_size[0], self.strides[0],
                                   self.padding, None if self.output_padding is None
                                   else self.output_padding[0], self.dilation_rate[0])
        return (input_shape[0], length, self.filters)

    def call(self, inputs):
        from . import activations
        shape = self.compute_output_shape(tuple(inputs.shape))
        x = _nn.conv1d_transpose(inputs, self.kernel, list(shape), self.strides[0],
                                 self.padding.upper(), dilations=self.dilation_rate[0])
        if self.bias is not None:
            x = _C.binary("add", x, self.bias)
        return x if self.activation == "linear" else activations.get(self.activation)(x)

    def _layer_config(self):
        return {"filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding,
                "output_padding": self.output_padding, "data_format": self.data_format,
                "dilation_rate": self.dilation_rate, "activation": self.activation,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer}


Convolution1DTranspose = Conv1DTranspose
