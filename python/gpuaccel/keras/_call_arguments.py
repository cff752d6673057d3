"""A Python layer's ``call`` arguments beyond its inputs, ``training`` and ``mask``, as Keras 3
passes them: ``layer(x, gate)``, ``layer(x, gate=g, factor=2.0, squash=True)``.

Why: the C++ traced layer takes a list of tensors and ``training``, and traces once per input
signature. So tensor arguments travel as extra inputs after the layer's own (in a functional
model, extra edges of its node), and the other values (numbers, strings, flags) select a C++
layer of their own, a variant that shares the layer's weight tensors and traces its ``call``
with those values bound: a new value is a new trace, as ``tf.function`` retraces on a new
Python argument. As Keras, only tensors may be passed positionally.
"""
import functools
import inspect
import weakref

import numpy as np

from .. import _C
from .._tensor import Tensor, tensor as _make_tensor
from ._symbolic import KerasTensor

_RESERVED = ("training", "mask")


class CallArguments:
    """The extra arguments of one call: ``tensors`` (by ``tensor_names``, passed after the
    ``input_count`` inputs) and ``static`` values; ``key`` names the C++ variant."""

    def __init__(self, input_count, tensor_names, tensors, static):
        self.input_count = input_count
        self.tensor_names = tuple(tensor_names)
        self.tensors = list(tensors)
        self.static = dict(static)
        self.key = (input_count, self.tensor_names, repr(sorted(self.static.items())))

    def with_tensors(self, tensors):
        return CallArguments(self.input_count, self.tensor_names, tensors, self.static)

    def keywords(self, extra_inputs):
        """The keyword arguments ``call`` gets, for the extra inputs the C++ layer got."""
        return {**dict(zip(self.tensor_names, extra_inputs)), **self.static}


def _is_tensor(value):
    return isinstance(value, (Tensor, KerasTensor, np.ndarray))


def takes_extra_arguments(layer, args, kwargs):
    """Whether this call of a Python layer passes arguments beyond its inputs and ``mask``."""
    return layer._takes_call_arguments() and (
        len(args) > 1 or any(name not in _RESERVED for name in kwargs))


def split(layer, args, kwargs):
    """(args, kwargs, CallArguments): the inputs and ``mask`` for ``_call_inputs``, and the
    rest bound to ``layer.call``'s parameters (Python's TypeError for a mismatch)."""
    for value in args[1:]:
        if not _is_tensor(value):
            raise ValueError("Only input tensors may be passed as positional arguments. The "
                             "following argument value should be passed as a keyword argument: "
                             f"{value} (of type {type(value)})")
    signature = inspect.signature(layer.call)
    bound = signature.bind(*args, **kwargs)
    names, tensors, static = [], [], {}
    items = list(bound.arguments.items())
    for name, value in items[1:]:
        kind = signature.parameters[name].kind
        pairs = value.items() if kind is inspect.Parameter.VAR_KEYWORD else [(name, value)]
        if kind is inspect.Parameter.VAR_POSITIONAL:
            raise NotImplementedError(f"{type(layer).__name__}.call(*{name}): variable "
                                      "positional arguments are not supported; name them")
        for key, item in pairs:
            if key in _RESERVED:
                continue
            if _is_tensor(item):
                names.append(key)
                tensors.append(item)
            elif isinstance(item, (list, tuple)) and any(_is_tensor(v) for v in item):
                raise NotImplementedError(f"{type(layer).__name__}.call({key}=...): a list of "
                                          "tensors as an extra argument is not supported; pass "
                                          "each tensor as an argument of its own")
            else:
                static[key] = item
    mask = {"mask": kwargs["mask"]} if "mask" in kwargs else {}
    return (items[0][1],), mask, CallArguments(1, names, tensors, static)


def as_tensor(value):
    """An eager extra tensor argument: a Tensor as it is, an array with its dtype (float64 as
    float32, as the layers' inputs)."""
    if isinstance(value, Tensor):
        return value
    array = np.asarray(value)
    return _make_tensor(array.astype(np.float32) if array.dtype == np.float64 else array)


def variant(layer, arguments, run_call, warn):
    """The C++ layer that runs ``layer``'s call with these arguments' static values: the
    layer's own for none, else one per distinct set of values, sharing the weight tensors."""
    if not arguments.static and not arguments.tensor_names:
        return layer._cpp
    variants = layer.__dict__.setdefault("_call_variants", {})
    if arguments.key not in variants:
        ref = weakref.ref(layer)
        cpp = _C.layers.TracedLayer(layer.name, type(layer).__name__, _C.layers.TracedFunction(
            functools.partial(run_call, ref, arguments=arguments.with_tensors([])),
            functools.partial(warn, ref)))
        for name, value, trainable in layer._cpp.weights:
            cpp.add_weight_value(name, value, bool(trainable))
        cpp.build([])
        cpp.trainable = layer._cpp.trainable
        cpp.compute_dtype = layer._cpp.compute_dtype
        variants[arguments.key] = cpp
    return variants[arguments.key]


def set_variants_trainable(layer, trainable):
    for cpp in layer.__dict__.get("_call_variants", {}).values():
        cpp.trainable = bool(trainable)


def check_one_variant_per_layer(nodes, graph_layer):
    """A layer whose calls in one model run different C++ variants would list its weights once
    per variant in the step's trainable weights (updated twice): refused with what to do."""
    seen = {}
    for node in nodes:
        cpp = graph_layer(node)
        if seen.setdefault(id(node.layer), cpp) is not cpp:
            raise NotImplementedError(
                f"layer '{node.layer.name}' is called in this model with different non-tensor "
                "arguments (or with and without them), which gpuaccel's graph does not support "
                "yet; pass the values that change as tensors, or use one layer per setting")


def keras_node_arguments(node, args):
    """The ``args``/``kwargs`` of a .keras node for a call with extra arguments: the inputs
    positionally, tensor arguments (their ``__keras_tensor__`` entries) and values by name."""
    arguments = node.call_arguments
    main, extra = args[:arguments.input_count], args[arguments.input_count:]
    return main, {**dict(zip(arguments.tensor_names, extra)), **arguments.static}


def takes_keras_node_arguments(layer, node):
    """Whether a .keras node of ``layer`` calls it with extra arguments: a Python layer whose
    ``call`` has parameters beyond its inputs, ``training`` and ``mask`` that the node gives
    (tensors after the inputs, or values by name)."""
    if not getattr(layer, "_takes_call_arguments", lambda: False)():
        return False
    parameters = list(inspect.signature(layer.call).parameters)[1:]
    extra = [name for name in parameters if name not in _RESERVED]
    return bool(extra) and (len(node.get("args", [])) > 1 or any(
        name in extra for name in node.get("kwargs", {})))


def keras_node_keywords(node, tensors, tensors_of, history_names):
    """A .keras node's keyword arguments for such a call: tensors (``history_names`` names
    them, ``tensors_of`` finds them) and values, without Keras's ``mask`` and ``training``."""
    return {key: tensors_of(value, tensors) if history_names(value) else value
            for key, value in node.get("kwargs", {}).items() if key not in _RESERVED}
