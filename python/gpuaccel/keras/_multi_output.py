"""Python layers whose call returns several tensors (an RNN with ``return_state``, Bidirectional
with ``merge_mode=None``), run as one traced C++ layer.

A traced C++ layer and a node of the model's layer graph have one output, so such a layer's
traced call returns its outputs packed side by side in one (batch, n) tensor; calling the layer
unpacks them again: eagerly with slicing and reshaping ops (recorded on the tape, so gradients
reach each part), symbolically with one small part-picking layer per output, which the model
runs as nodes after the packed one but does not list in ``model.layers``.
"""
import math

from .. import _C
from . import _mask_flow, _symbolic
from ._layer_base import Layer


def flatten(structure):
    """The tensors (or shape tuples) of a nested list, in order."""
    if not isinstance(structure, list):
        return [structure]
    return [leaf for item in structure for leaf in flatten(item)]


def nest(leaves, structure):
    """``leaves`` (in ``flatten`` order) arranged as ``structure``."""
    leaves = iter(leaves)

    def arrange(node):
        return [arrange(item) for item in node] if isinstance(node, list) else next(leaves)
    return arrange(structure)


def pack(tensors):
    """The tensors of a nested list (each with the batch first) flattened per example and
    joined: (batch, n)."""
    tensors = flatten(tensors)
    batch = tensors[0].shape[0]
    return _C.concat([_C.reshape(t, [batch, -1]) for t in tensors], 1)


def _part(packed, start, shape):
    """The tensor of ``shape`` (batch first) that starts at column ``start`` of ``packed``."""
    size = math.prod(shape[1:])
    columns = _C.slice(packed, [(0, packed.shape[0], 1), (start, start + size, 1)])
    return _C.reshape(columns, list(shape))


def unpack(packed, shapes):
    """The tensors ``pack`` joined, given their shapes without the batch."""
    batch, start, parts = packed.shape[0], 0, []
    for shape in shapes:
        parts.append(_part(packed, start, (batch,) + tuple(shape)))
        start += math.prod(shape)
    return parts


class OutputPart(Layer):
    """One output of a multi-output layer in a functional model: columns of the packed
    tensor, reshaped. Internal: models leave it out of ``layers``."""

    _internal_part = True

    def __init__(self, index, start, shape, **kwargs):
        self.index, self.start, self.shape = int(index), int(start), tuple(shape)
        super().__init__(**kwargs)

    def call(self, packed):
        return _part(packed, self.start, (packed.shape[0],) + self.shape)

    def compute_output_shape(self, input_shape):
        return (input_shape[0],) + self.shape


class MultiOutputLayer(Layer):
    """Base of Python layers that may return several tensors. Subclasses define
    ``_call_outputs(inputs, training)`` (a tensor, or a list of tensors) and
    ``_output_shapes(input_shapes)`` (Keras's compute_output_shape: one shape tuple, or a
    list of them, nested as the outputs are, when the layer returns a list)."""

    def call(self, inputs, training=False):
        outputs = self._call_outputs(inputs, training=training)
        return pack(outputs) if isinstance(outputs, list) else outputs

    def compute_output_shape(self, *shapes):
        return self._output_shapes(shapes[0] if len(shapes) == 1 else list(shapes))

    def __call__(self, *args, **kwargs):
        inputs = self._call_inputs(*args, **{k: v for k, v in kwargs.items() if k != "training"})
        shape_arg = [tuple(t.shape) for t in inputs]
        shape_arg = shape_arg[0] if len(shape_arg) == 1 else shape_arg
        if any(isinstance(t, _symbolic.KerasTensor) for t in inputs):
            if not self.built:
                self.build(shape_arg)
            shapes = self._output_shapes(shape_arg)
            if not isinstance(shapes, list):
                return super().__call__(*args, **kwargs)
            return nest(self._symbolic_parts(inputs, flatten(shapes)), shapes)
        result = super().__call__(*args, **kwargs)
        shapes = self._output_shapes(shape_arg)
        if not isinstance(shapes, list):
            return result
        parts = unpack(result, [tuple(s[1:]) for s in flatten(shapes)])
        parts[0]._keras_mask = getattr(result, "_keras_mask", None)  # with the main output
        return nest(parts, shapes)

    def _symbolic_parts(self, inputs, shapes):
        """One KerasTensor per shape of the flat list ``shapes``."""
        width = sum(math.prod(s[1:]) for s in shapes)
        packed = _symbolic.KerasTensor((shapes[0][0], width), self.compute_dtype, name=self.name)
        packed.node = _symbolic.Node(self, inputs, packed)
        packed.part_shapes = [tuple(s) for s in shapes]  # what model.summary() shows
        parts, start = [], 0
        for shape in shapes:
            part = OutputPart(len(parts), start, shape[1:], name=f"{self.name}_output_{len(parts)}")
            parts.append(part(packed))
            start += math.prod(shape[1:])
        parts[0]._keras_mask = _mask_flow.output_mask(  # a mask stays with the main output
            self, getattr(inputs[0], "_keras_mask", None))
        return parts

