"""A Python layer whose ``call`` returns several tensors (a tuple or list), as Keras allows.

Why: a node of the C++ layer graph has one output, and the C++ traced layer returns one tensor.
So the traced call packs its outputs into one (batch, n) tensor (each output flattened after
the batch dimension, then concatenated: recorded ops, so gradients flow back), and the
functional graph takes each output back out with an ``OutputPart`` node after the layer's node
(a slice and a reshape, traced too). Called eagerly, the layer unpacks the same way and returns
the tuple. The outputs must share the batch dimension; in a functional model their sizes after
the batch must be known. Outputs of different dtypes travel cast to one carrier dtype (float32
where any is floating, else int64: exact for every float16/bfloat16/float32 and integer value,
except integers beyond 2**24 in magnitude beside a floating output) and are cast back after
unpacking. Outputs may nest (a list of lists of tensors, as an RNN
over stacked cells returns its states): they are packed in ``gpuaccel.nest.flatten`` order and
come back nested alike."""
import functools

import numpy as np

from .. import _C, nest
from .._tensor import Tensor


class SeveralShapes(list):
    """``compute_output_shape`` of a layer with several outputs: one shape (a tuple) per
    output, or a list of them where outputs nest; ``as_list`` when ``call`` returned a list
    (else a tuple), the structure a symbolic call returns too."""

    as_list = False


def several_shapes(shapes):
    """``shapes`` (a list of shape tuples, nested as the outputs of a ``call`` that returns a
    list) as ``compute_output_shape`` gives them for several outputs."""
    several = SeveralShapes(shapes)
    several.as_list = True
    return several


def shape_leaves(shapes):
    """The shape tuples of a (nested) list of them, in order."""
    return [leaf for item in shapes
            for leaf in ([item] if isinstance(item, tuple) else shape_leaves(item))]


def arrange_like(shapes, outputs):
    """``outputs`` (one per shape of ``shape_leaves(shapes)``) nested as ``shapes`` are."""
    def skeleton(node):  # a shape tuple is one output
        return None if isinstance(node, tuple) else [skeleton(item) for item in node]
    arranged = nest.pack_sequence_as(skeleton(list(shapes)), outputs)
    return arranged if shapes.as_list else tuple(arranged)


def main_output(outputs):
    """The first tensor of a (nested) structure of outputs: the one a timestep mask stays on."""
    return nest.flatten(outputs)[0]


def _flat_size(dims):
    return int(np.prod([int(d) for d in dims], dtype=np.int64))


def _signature(inputs):
    return tuple((tuple(t.shape[1:]), t._dtype_name) for t in inputs)


def pack(layer, inputs, outputs):
    """The one tensor the C++ layer returns for ``outputs`` (what ``call`` returned on
    ``inputs``); remembers their shapes after the batch, per input signature, for unpacking."""
    what = f"{type(layer).__name__}.call()"
    # the nesting without the tensors (tf.nest's rules), to unpack eager calls alike
    structure = nest.map_structure(lambda _: None, outputs)
    outputs = nest.flatten(outputs)
    if not outputs or not all(isinstance(t, Tensor) for t in outputs):
        wrong = next((t for t in outputs if not isinstance(t, Tensor)), outputs)
        raise TypeError(f"{what} returned a {type(wrong).__name__} among its outputs: each of "
                        "several outputs must be a tensor")
    dtypes = [t._dtype_name for t in outputs]
    batches = {int(t.shape[0]) if len(t.shape) else None for t in outputs}
    if len(batches) != 1 or None in batches:
        raise NotImplementedError(
            f"{what} returned {len(outputs)} tensors of shapes "
            f"{[tuple(t.shape) for t in outputs]}: several outputs of a Python layer must share "
            "the batch (first) dimension")
    layer.__dict__.setdefault("_several_output_dims", {})[_signature(inputs)] = (
        [tuple(int(d) for d in t.shape[1:]) for t in outputs], structure, dtypes)
    batch, carrier = batches.pop(), carrier_dtype(dtypes)
    flat = [_C.reshape(_cast(t, carrier), [batch, _flat_size(t.shape[1:])]) for t in outputs]
    return flat[0] if len(flat) == 1 else _C.concat(flat, 1)


def carrier_dtype(dtypes):
    """The one dtype outputs of ``dtypes`` are packed in (see the module's docstring)."""
    kinds = set(dtypes)
    if len(kinds) == 1:
        return dtypes[0]
    return "float32" if any(d.startswith(("float", "bfloat")) for d in kinds) else "int64"


def _cast(tensor, dtype):
    return tensor if dtype is None or tensor._dtype_name == dtype else _C.cast(tensor, dtype)


def unpack_call(layer, inputs, packed):
    """What an eager call of ``layer`` on ``inputs`` returns: ``packed`` itself for a layer with
    one output, else the tuple (or list) of outputs packed into it."""
    known = layer.__dict__.get("_several_output_dims", {}).get(_signature(inputs))
    if known is None:
        return packed
    dims, structure, dtypes = known
    parts, start = [], 0
    for shape, dtype in zip(dims, dtypes):
        stop = start + _flat_size(shape)
        parts.append(_part(start, stop, shape, dtype, [packed], False)[0])
        start = stop
    return nest.pack_sequence_as(structure, parts)


def _part(start, stop, shape, dtype, inputs, training):
    return [_cast(inputs[0][:, start:stop].reshape((-1,) + tuple(shape)), dtype)]


class OutputPart:
    """Output ``index`` of a layer with several outputs, taken from its packed tensor: columns
    ``[start, stop)`` reshaped to ``shape`` after the batch. A node of the functional graph but
    not one of the model's ``layers`` (Keras has no such layer); it has no weights."""

    weights = trainable_weights = non_trainable_weights = ()

    def __init__(self, index, start, stop, shape, name, dtype=None):
        self.index = index
        self.name = name
        self.shape = tuple(shape)
        self.size = int(stop) - int(start)
        self._cpp = _C.layers.TracedLayer(name, "OutputPart", _C.layers.TracedFunction(
            functools.partial(_part, int(start), int(stop), self.shape, dtype), _never_warns))
        self._cpp.build([])

    def count_params(self):
        return 0


def _never_warns(reason):  # a slice and a reshape always replay
    raise AssertionError(f"an OutputPart could not be traced: {reason}")


def is_output_part(layer):
    return isinstance(layer, OutputPart)


def output_parts(layer, shapes, dtypes=None):
    """One ``OutputPart`` per output shape (batch included) of ``layer``; ``dtypes`` (one per
    output, where they differ) are the dtypes the parts cast back to."""
    parts, start = [], 0
    for index, (shape, dtype) in enumerate(zip(shapes, dtypes or [None] * len(shapes))):
        if any(d is None for d in shape[1:]):
            raise NotImplementedError(
                f"layer '{layer.name}' returns several outputs, one of shape {tuple(shape)}: "
                "each output's dimensions after the batch must be known in a functional model")
        stop = start + _flat_size(shape[1:])
        parts.append(OutputPart(index, start, stop, shape[1:], f"{layer.name}_output_{index}",
                                dtype))
        start = stop
    return parts
