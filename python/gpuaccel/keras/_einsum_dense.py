"""Keras's EinsumDense: a dense layer whose kernel contracts the input along the axes an einsum
equation names ('abc,cde->abde' maps (batch, steps, c) to (batch, steps, d, e)). The projections
of the attention layers (GroupQueryAttention) are such products too, so the shape analysis and
the product live here as functions they share. Written in Python from gpuaccel's matmul and
einsum, traced once per input signature into the C++ step (_python_layer.py)."""
import math
import re

from .. import _C
from .. import linalg as _linalg
from ._layer_base import Layer, _activation, _reject

_EQUATION = re.compile(r"([a-zA-Z]+),([a-zA-Z]+)->([a-zA-Z]+)$")


def _split(equation):
    """(input, kernel, output) subscripts of an 'X,Y->Z' equation, with Keras's error."""
    if not isinstance(equation, str):
        raise TypeError(f"EinsumDense: `equation` must be a string such as 'ab,bc->ac', "
                        f"received {equation!r}")
    match = _EQUATION.match(equation.replace(" ", ""))
    if match is None:
        if "..." in equation:
            raise NotImplementedError(f"EinsumDense: equations with an ellipsis are not "
                                      f"supported yet; spell every axis out (received "
                                      f"'{equation}')")
        raise ValueError(f"Invalid einsum equation '{equation}'. Equations must be in the form "
                         "[X],[Y]->[Z], ...[X],[Y]->...[Z], or [X]...,[Y]->[Z]....")
    return match.groups()


def analyze(equation, bias_axes, input_shape, output_shape):
    """Keras's shape analysis of an EinsumDense equation without ellipses: (kernel shape, bias
    shape or None, full output shape with the input's batch size)."""
    input_spec, weight_spec, output_spec = _split(equation)
    if len(input_shape) != len(input_spec):
        raise ValueError(f"EinsumDense: the equation '{equation}' names {len(input_spec)} input "
                         f"axes, but the input has shape {tuple(input_shape)}")
    output_shape = [output_shape] if isinstance(output_shape, int) else list(output_shape)
    output_shape.insert(0, input_shape[0])
    if len(output_shape) != len(output_spec):
        raise ValueError(f"EinsumDense: output_shape {tuple(output_shape[1:])} must give the "
                         f"{len(output_spec) - 1} output axes after the batch that "
                         f"'{output_spec}' names")
    input_dim = {dim: i for i, dim in enumerate(input_spec)}
    output_dim = {dim: i for i, dim in enumerate(output_spec)}
    for dim in input_spec:
        if dim in output_dim:
            size = output_shape[output_dim[dim]]
            if size is not None and size != input_shape[input_dim[dim]]:
                raise ValueError(f"Input shape and output shape do not match at shared "
                                 f"dimension '{dim}'. Input shape is "
                                 f"{input_shape[input_dim[dim]]}, and output shape is {size}.")
            output_shape[output_dim[dim]] = input_shape[input_dim[dim]]
    for dim in output_spec:
        if dim not in input_spec and dim not in weight_spec:
            raise ValueError(f"Dimension '{dim}' was specified in the output '{output_spec}' "
                             f"but has no corresponding dim in the input spec '{input_spec}' "
                             f"or weight spec '{output_spec}'")
    kernel_shape = []
    for dim in weight_spec:
        if dim in output_dim:
            kernel_shape.append(output_shape[output_dim[dim]])
        elif dim in input_dim:
            kernel_shape.append(input_shape[input_dim[dim]])
        else:
            raise ValueError(f"Weight dimension '{dim}' did not have a match in either the "
                             f"input spec '{input_spec}' or the output spec '{output_spec}'. "
                             "For this layer, the weight must be fully specified.")
    if any(d is None for d in kernel_shape):
        raise ValueError(f"EinsumDense: the kernel shape of '{equation}' depends on an "
                         f"undefined dimension (input shape {tuple(input_shape)})")
    bias_shape = None
    if bias_axes is not None:
        for char in bias_axes:
            if char not in output_spec:
                raise ValueError(f"Bias dimension '{char}' was requested, but is not part of "
                                 f"the output spec '{output_spec}'")
        first = min(output_spec.find(char) for char in bias_axes)
        bias_shape = [output_shape[output_dim[c]] if c in bias_axes else 1
                      for c in output_spec[first:]]
    return kernel_shape, bias_shape, output_shape


def kernel_initializer(initializer, equation):
    """The kernel's initializer with Keras's fans: EinsumDense gives a variance-scaling
    initializer the product of the kernel's input axes as fan_in and of its output axes (those
    the output keeps) as fan_out, not the fans of the kernel's rank-3+ shape. A name is drawn
    as a (fan_in, fan_out) matrix and reshaped, the same distribution; other initializers are
    used as they are."""
    if not isinstance(initializer, str):
        return initializer
    _, weight_spec, output_spec = _split(equation)

    def initialize(shape, dtype=None):
        fan_in = math.prod(n for c, n in zip(weight_spec, shape) if c not in output_spec)
        fan_out = math.prod(n for c, n in zip(weight_spec, shape) if c in output_spec)
        value = _C.layers.initialize(_C.layers.canonical_initializer(initializer),
                                     [fan_in, fan_out])
        return _C.reshape(value, list(shape))
    return initialize


def product(equation, x, kernel):
    """einsum(equation, x, kernel). The usual projections (the input's trailing axes contracted
    with the kernel's leading ones, the rest kept in order: 'abc,cd->abd', 'bquh,uhm->bqm')
    run as one matmul on reshaped views; other equations as gpuaccel's einsum."""
    input_spec, weight_spec, output_spec = _split(equation)
    contracted = [c for c in input_spec if c not in output_spec]
    kept = input_spec[:len(input_spec) - len(contracted)]
    new = weight_spec[len(contracted):]
    if contracted and input_spec.endswith("".join(contracted)) and \
            weight_spec.startswith("".join(contracted)) and output_spec == kept + new and \
            not set(kept) & set(weight_spec):
        kept_shape = list(x.shape[:len(kept)])
        new_shape = list(kernel.shape[len(contracted):])
        inner = math.prod(kernel.shape[:len(contracted)])
        flat = _C.matmul(_C.reshape(x, [math.prod(kept_shape), inner]),
                         _C.reshape(kernel, [inner, math.prod(new_shape)]))
        return _C.reshape(flat, kept_shape + new_shape)
    return _linalg.einsum(equation, x, kernel)


class EinsumDense(Layer):
    """``keras.layers.EinsumDense(equation, output_shape, activation=None, bias_axes=None,
    ...)``: ``einsum(equation, inputs, kernel) + bias``, the kernel and bias shapes Keras's
    analysis gives (so Keras's weights load with set_weights)."""

    def __init__(self, equation, output_shape, activation=None, bias_axes=None,
                 kernel_initializer="glorot_uniform", bias_initializer="zeros",
                 kernel_regularizer=None, bias_regularizer=None, activity_regularizer=None,
                 kernel_constraint=None, bias_constraint=None, lora_rank=None, lora_alpha=None,
                 **kwargs):
        _reject("EinsumDense", kernel_regularizer=kernel_regularizer,
                bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                kernel_constraint=kernel_constraint, bias_constraint=bias_constraint,
                lora_rank=lora_rank)
        _split(equation)
        self.equation = equation
        self.partial_output_shape = (output_shape if isinstance(output_shape, int)
                                     else tuple(output_shape))
        self.bias_axes = bias_axes
        self.activation = _activation(activation)
        self.kernel_initializer = kernel_initializer
        self.bias_initializer = bias_initializer
        super().__init__(**kwargs)

    def build(self, input_shape):
        kernel_shape, bias_shape, self.full_output_shape = analyze(
            self.equation, self.bias_axes, tuple(input_shape), self.partial_output_shape)
        self.kernel = self.add_weight(
            name="kernel", shape=tuple(kernel_shape),
            initializer=kernel_initializer(self.kernel_initializer, self.equation))
        self.bias = None if bias_shape is None else self.add_weight(
            name="bias", shape=tuple(bias_shape), initializer=self.bias_initializer)

    def call(self, inputs):
        from . import activations
        x = product(self.equation, inputs, self.kernel)
        if self.bias is not None:
            x = _C.binary("add", x, self.bias)
        return x if self.activation == "linear" else activations.get(self.activation)(x)

    def compute_output_shape(self, input_shape):
        return tuple(analyze(self.equation, self.bias_axes, tuple(input_shape),
                             self.partial_output_shape)[2])

    def _layer_config(self):
        return {"equation": self.equation, "output_shape": self.partial_output_shape,
                "activation": self.activation, "bias_axes": self.bias_axes,
                "kernel_initializer": self.kernel_initializer,
                "bias_initializer": self.bias_initializer}
