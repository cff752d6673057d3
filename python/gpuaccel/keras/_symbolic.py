"""Symbolic tensors for Keras's functional API: ``x = keras.Input((28, 28, 1))`` and
``y = layer(x)`` record which layer produced what, without computing anything; ``keras.Model(
inputs, outputs)`` walks those records back into the layer graph the C++ model runs.

Calling a layer on a KerasTensor lands in :func:`call_symbolic` (``Layer.__call__`` checks for
symbolic inputs first), which builds the layer from the input shapes and returns a KerasTensor
of the layer's output shape."""
import itertools
import math

from .._int_range import check_range
from ..dtypes import as_dtype
from . import _layer_outputs, _mask_flow

_input_names = itertools.count()


class Node:
    """One call of a layer in the functional graph: ``outputs = layer(inputs)``."""

    def __init__(self, layer, inputs, output):
        self.layer = layer
        self.inputs = list(inputs)
        self.output = output
        # The models (outermost first) whose call recorded this node: a model called in a
        # functional model is inlined node by node, and Keras's files still group its layers
        # under it (_nested_models.keras_layers).
        self.models = ()
        # The outermost of those calls (_nested_models.ModelCall): its inputs and outputs are
        # what a .keras config records of it (_keras_archive._functional_config).
        self.model_call = None
        # A Python layer called with extra arguments (keras/_call_arguments.py): they, and the
        # C++ layer variant that runs the call with them (else the layer's own).
        self.call_arguments = None
        self.call_layer = None


class DTypeName(str):
    """A KerasTensor's dtype: Keras 3's string ('float32') that also answers Keras 2's
    ``x.dtype.name`` and the rest of ``gpuaccel.DType`` (``is_floating``, ``itemsize``,
    ``as_numpy_dtype``...), which TensorFlow 2.21 with Keras 3 no longer does."""

    __slots__ = ()

    @property
    def name(self):
        return str(self)

    def __getattr__(self, attribute):
        return getattr(as_dtype(str(self)), attribute)


class KerasTensor:
    """A placeholder with a shape (batch as None) and a dtype; ``node`` is the layer call that
    produced it, or None for a model input."""

    def __init__(self, shape, dtype="float32", name=None, node=None):
        self.shape = tuple(None if d is None else int(d) for d in shape)
        self.dtype = DTypeName(as_dtype(dtype).name)
        self.name = name
        self.node = node

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return f"<KerasTensor shape={self.shape}, dtype={self.dtype}, name={self.name}>"

    def __array__(self, *args, **kwargs):
        raise TypeError("a KerasTensor is a symbolic placeholder of the functional API; it has "
                        "no values. Build a keras.Model(inputs, outputs) and call it on data.")


def Input(shape=None, batch_size=None, dtype=None, name=None, batch_shape=None, **kwargs):
    """``keras.Input``: a symbolic model input of ``shape`` (without the batch dimension)."""
    if kwargs:
        raise TypeError(f"Input() got unexpected keyword arguments {sorted(kwargs)}")
    if batch_shape is not None:
        full = tuple(batch_shape)
    elif shape is not None:
        if isinstance(shape, int):
            shape = (shape,)
        full = (batch_size,) + tuple(shape)
    else:
        raise ValueError("You must pass a `shape` argument to Input(), e.g. Input(shape=(784,))")
    for d in full[1:]:
        if d is not None and (not isinstance(d, int) or d < 0):
            raise ValueError(f"Input() shape entries must be non-negative ints or None, got {full}")
    # layers size their outputs in int64: Flatten of (2**40, 2**40) would wrap to 0
    check_range(math.prod(d for d in full[1:] if d), f"the values per example of Input() shape "
                f"{full}", 0)
    if name is None:
        index = next(_input_names)
        name = "input_layer" if index == 0 else f"input_layer_{index}"
    return KerasTensor(full, dtype or "float32", name=name)


def is_symbolic(value):
    if isinstance(value, KerasTensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(isinstance(v, KerasTensor) for v in value)
    return False


def call_symbolic(layer, inputs, arguments=None):
    """``layer(inputs)`` on KerasTensors: builds the layer for their shapes and returns the
    KerasTensor it would produce. ``inputs`` is the layer's list of inputs, followed by the
    tensors of its extra call ``arguments`` where it has some (keras/_call_arguments.py)."""
    inputs = list(inputs)
    if not all(isinstance(t, KerasTensor) for t in inputs):
        raise TypeError(f"layer '{layer.name}' was called on a mix of symbolic (keras.Input) and "
                        "concrete tensors; in the functional API every input must come from "
                        "keras.Input or another layer's output")
    if arguments is not None:
        arguments = arguments.with_tensors(inputs[arguments.input_count:])
    shapes = [t.shape for t in inputs[:len(inputs) if arguments is None
                                       else arguments.input_count]]
    shape_arg = shapes[0] if len(shapes) == 1 else shapes
    if not layer.built:
        layer.build(shape_arg)
    out_shape = layer.compute_output_shape(shape_arg) if arguments is None else \
        layer._output_shape_with(shape_arg, arguments)
    out_dtype = getattr(layer, "compute_dtype", None) or inputs[0].dtype
    if not as_dtype(inputs[0].dtype).is_floating and getattr(layer, "_keeps_input_dtype", False):
        out_dtype = inputs[0].dtype
    if hasattr(layer, "_symbolic_output_dtype"):  # layers whose output dtype is their own
        out_dtype = layer._symbolic_output_dtype(str(inputs[0].dtype)) or out_dtype
    mask = _mask_flow.output_mask(layer, getattr(inputs[0], "_keras_mask", None))
    if isinstance(out_shape, _layer_outputs.SeveralShapes):
        outputs = _several_outputs(layer, inputs, out_shape, out_dtype)
        _layer_outputs.main_output(outputs)._keras_mask = mask  # with the main output, as Keras
        if arguments is not None:
            _with_arguments(_layer_outputs.main_output(outputs).node.inputs[0].node, arguments)
        return outputs
    output = KerasTensor(out_shape, out_dtype, name=layer.name)
    output.node = Node(layer, inputs, output)
    layer.__dict__.setdefault("_symbolic_nodes", []).append(output.node)
    if arguments is not None:
        _with_arguments(output.node, arguments)
    output._keras_mask = mask
    return output


def first_call(layer, what):
    """Keras's ``layer.input`` / ``layer.output`` (``what``): the KerasTensors of the layer's
    first functional call. A layer of a built Sequential model is called there on the model's
    input first (``Sequential._call_layers_symbolically``), as Keras builds a Sequential model
    as a functional one."""
    nodes = layer.__dict__.get("_symbolic_nodes")
    sequential = layer.__dict__.get("_sequential_owner", lambda: None)()
    if not nodes and sequential is not None:
        sequential._call_layers_symbolically()
        nodes = layer.__dict__.get("_symbolic_nodes")
    if not nodes:
        raise AttributeError(f"The layer {layer.name} has never been called and thus has no "
                             f"defined {what}.")  # Keras's words
    node = nodes[0]
    if what == "output":
        return node.output
    inputs = node.inputs[:node.call_arguments.input_count] if node.call_arguments else node.inputs
    return inputs[0] if len(inputs) == 1 else list(inputs)


def _with_arguments(node, arguments):
    node.call_arguments = arguments
    node.call_layer = node.layer._call_variant(arguments)


def _several_outputs(layer, inputs, shapes, dtype):
    """The KerasTensors of a layer whose call returns several tensors: its node gives their
    packed tensor, and one OutputPart node per output takes each back out
    (keras/_layer_outputs.py)."""
    flat_shapes = _layer_outputs.shape_leaves(shapes)
    dtypes = getattr(shapes, "dtypes", None)  # a Python layer's, where they may differ
    parts = _layer_outputs.output_parts(layer, flat_shapes, dtypes)
    dtypes = dtypes or [dtype] * len(flat_shapes)
    packed = KerasTensor((None, sum(part.size for part in parts)),
                         _layer_outputs.carrier_dtype(dtypes), name=layer.name)
    packed.node = Node(layer, inputs, packed)
    outputs = []
    for part, shape, part_dtype in zip(parts, flat_shapes, dtypes):
        output = KerasTensor(shape, part_dtype, name=part.name)
        output.node = Node(part, [packed], output)
        outputs.append(output)
    return _layer_outputs.arrange_like(shapes, outputs)
