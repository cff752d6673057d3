"""Keras's Conv3D as a Python layer traced into the C++ step (_python_layer.py), composed from
the conv2d op.

Why no kernel of its own: a 3-D convolution is a sum over the kernel's depth of 2-D
convolutions. For kernel depth index k, the input depth slices that output depths
0, 1, ... read are one strided slice (k * dilation, stepping by the stride); folding those
slices into the batch axis makes one conv2d per k with the kernel's k-th (kh, kw, C / groups, F)
plane, and the kd results add up. Gradients flow through the slices, reshapes and conv2d ops.
The weights keep Keras 3's names and layouts: ``kernel`` (kd, kh, kw, C / groups, filters) and
``bias`` (filters,); the layer takes channels_last (N, D, H, W, C) inputs."""
from .. import _C
from .._array_ops import pad as _pad
from ._layer_base import Layer, _activation, _conv_arguments, _reject


def _same_padding(size, kernel, stride, dilation):
    """TF's 'same' padding of one axis: (before, after)."""
    out = -(-size // stride)
    total = max((out - 1) * stride + (kernel - 1) * dilation + 1 - size, 0)
    return total // 2, total - total // 2


class Conv3D(Layer):
    """``keras.layers.Conv3D``: filters over (depth, height, width) windows of (N, D, H, W, C)
    inputs, with strides, 'valid'/'same' padding, dilation and groups."""

    def __init__(self, filters, kernel_size, strides=(1, 1, 1), padding="valid",
                 data_format=None, dilation_rate=(1, 1, 1), groups=1, activation=None,
                 use_bias=True, kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, **kwargs):
        _reject("Conv3D", kernel_regularizer=kernel_regularizer,
                bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                kernel_constraint=kernel_constraint, bias_constraint=bias_constraint)
        (self.filters, self.kernel_size, self.strides, self.padding, self.data_format,
         self.dilation_rate) = _conv_arguments("Conv3D", 3, filters, kernel_size, strides,
                                               padding, data_format, dilation_rate, groups)
        self.groups = int(groups)
        self.activation = _activation(activation)
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        super().__init__(**kwargs)

    def build(self, input_shape):
        if len(input_shape) != 5:
            raise ValueError(f"Input 0 of layer \"{self.name}\" is incompatible with the layer: "
                             f"expected ndim=5, found ndim={len(input_shape)}. Full shape "
                             f"received: {tuple(input_shape)}")
        channels = input_shape[-1]
        if channels is None or channels % self.groups:
            raise ValueError(f"The number of input channels must be evenly divisible by the "
                             f"number of groups. Received groups={self.groups}, but the input "
                             f"has {channels} channels (full input shape is "
                             f"{tuple(input_shape)}).")
        self.kernel = self.add_weight(
            shape=self.kernel_size + (channels // self.groups, self.filters),
            initializer=self.kernel_initializer, name="kernel")
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(shape=(self.filters,), initializer=self.bias_initializer,
                                        name="bias")

    def call(self, inputs):
        kd, kh, kw = self.kernel_size
        sd, sh, sw = self.strides
        dd, dh, dw = self.dilation_rate
        if self.padding == "same":
            inputs = _pad(inputs, [[0, 0], list(_same_padding(inputs.shape[1], kd, sd, dd)),
                                   [0, 0], [0, 0], [0, 0]])
        n, depth, height, width, channels = inputs.shape
        out_depth = (depth - (kd - 1) * dd - 1) // sd + 1
        if out_depth <= 0:
            raise ValueError(f"Conv3D: the input depth {depth} is smaller than the dilated "
                             f"kernel depth {(kd - 1) * dd + 1}")
        total = None
        for k in range(kd):
            start = k * dd
            slices = _C.slice(inputs, [(0, n, 1), (start, start + (out_depth - 1) * sd + 1, sd),
                                       (0, height, 1), (0, width, 1), (0, channels, 1)])
            folded = _C.reshape(slices, [n * out_depth, height, width, channels])
            plane = _C.slice(self.kernel, [(k, k + 1, 1), (0, kh, 1), (0, kw, 1),
                                           (0, channels // self.groups, 1),
                                           (0, self.filters, 1)])
            plane = _C.reshape(plane, [kh, kw, channels // self.groups, self.filters])
            term = _C.conv2d(folded, plane, None, sh, sw, self.padding, dh, dw, "linear",
                             self.groups)
            total = term if total is None else _C.binary("add", total, term)
        out = _C.reshape(total, [n, out_depth, *total.shape[1:]])
        if self.bias is not None:
            out = _C.binary("add", out, self.bias)
        if self.activation == "linear":
            return out
        from . import activations
        return activations.get(self.activation)(out)

    def compute_output_shape(self, input_shape):
        shape = [input_shape[0]]
        for size, k, s, d in zip(input_shape[1:4], self.kernel_size, self.strides,
                                 self.dilation_rate):
            if size is None:
                shape.append(None)
            elif self.padding == "same":
                shape.append(-(-size // s))
            else:
                shape.append((size - (k - 1) * d - 1) // s + 1)
        return tuple(shape) + (self.filters,)

    def _layer_config(self):
        return {"filters": self.filters, "kernel_size": self.kernel_size,
                "strides": self.strides, "padding": self.padding,
                "data_format": self.data_format, "dilation_rate": self.dilation_rate,
                "groups": self.groups, "activation": self.activation,
                "use_bias": self.use_bias, "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer, "kernel_regularizer": None,
                "bias_regularizer": None, "activity_regularizer": None,
                "kernel_constraint": None, "bias_constraint": None}
