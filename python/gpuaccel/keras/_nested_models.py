"""A model used as a layer: ``keras.Sequential([model, keras.layers.Softmax()])`` and
``outputs = model(inputs)`` in a functional model, everyday Keras for a trained model.

A model is a graph of C++ layers, and so is the outer model; the inner model's layers are
inlined into the outer graph (the same C++ layer objects, so the weights are shared: training
the outer model trains the inner one, and an assign to the inner model's weights shows in the
outer one). Sequential keeps the model as one entry of ``layers``, as Keras; a functional model
records the inner model's layer calls, so its ``layers`` lists the inner layers.
"""
from .. import nest
from . import _layer_outputs, _model_classes, _python_layer, _symbolic


def is_model(layer):
    return isinstance(layer, _model_classes.model_class())


def _is_chain(model):
    return isinstance(model, _model_classes.sequential_class())


def _ensure_built(model, shape):
    if not model.built:
        model._build_from_shapes([tuple(shape)])


def traced_as_one_layer(model):
    """Whether ``model`` is a subclassed model whose ``call`` uses tensor ops: one traced C++
    layer (keras/_python_layer.py) with no layer calls to inline, so the outer graph gets
    that layer as one node and a functional model lists the model as one of its layers."""
    return getattr(model, "_call_layer_cpp", None) is not None


def _refuse_several_traced_outputs(model):
    if traced_as_one_layer(model) and model._has_several_outputs():
        raise NotImplementedError(
            f"{type(model).__name__} returns several outputs from a call() of tensor ops; such "
            "a model cannot be used inside another model yet (use it on its own, or build it "
            "from layers)")


def graph_layer(node):
    """The C++ layer a functional graph ``node`` runs (a model traced as one layer runs its
    traced call; a call with extra arguments, its variant)."""
    if node.call_layer is not None:
        return node.call_layer
    return node.layer._call_layer_cpp if traced_as_one_layer(node.layer) else node.layer._cpp


def output_shape(model, input_shape):
    """The inner model's output shape (batch included) for inputs of ``input_shape``."""
    _ensure_built(model, input_shape)
    if traced_as_one_layer(model):  # known per trace: its call run once on zeros
        return tuple(_python_layer.compute_output_shape(model, tuple(input_shape)))
    if _is_chain(model):
        shape = tuple(input_shape)
        for layer in model._graph_layers():
            shape = output_shape(layer, shape) if is_model(layer) else \
                tuple(layer.compute_output_shape(shape))
        return shape
    return tuple(model.outputs[0].shape)


def add_to_graph(model, graph, input_ids):
    """Adds the model's layers to the outer ``_C.LayerGraph`` after the values ``input_ids``;
    returns the value id of the model's output."""
    _refuse_several_traced_outputs(model)
    if traced_as_one_layer(model):
        return graph.add_node(model._call_layer_cpp, list(input_ids))
    if _is_chain(model):
        value = input_ids[0]
        for layer in model._graph_layers():
            value = add_to_graph(layer, graph, [value]) if is_model(layer) else \
                graph.add_node(layer._cpp, [value])
        return value
    ids = {id(t): i for t, i in zip(model.inputs, input_ids)}
    for node in model._nodes:
        ids[id(node.output)] = graph.add_node(graph_layer(node),
                                              [ids[id(t)] for t in node.inputs])
    return ids[id(model.outputs[0])]


def call_symbolic(model, inputs):
    """``model(keras_tensor)`` in a functional model: the model's layer calls, replayed on
    ``inputs``; returns the KerasTensor of its output (a list or dict of them for a model with
    several outputs). The nodes it records remember ``model`` (``keras_layers``)."""
    xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    _ensure_built(model, xs[0].shape)
    _refuse_several_traced_outputs(model)
    if traced_as_one_layer(model):  # one node, the model itself (Keras lists it so too)
        output = _symbolic.KerasTensor(output_shape(model, xs[0].shape), xs[0].dtype,
                                       name=model.name)
        output.node = _symbolic.Node(model, xs, output)
        return output
    outputs = _replay(model, xs)
    _mark_recorded_by(ModelCall(model, xs, outputs), outputs, xs)
    return outputs


class ModelCall:
    """One call of ``model`` in a functional model, inlined as the nodes between ``inputs`` and
    ``outputs`` (a flat list); Keras's config records it as one node of the model."""

    def __init__(self, model, inputs, outputs):
        self.model = model
        self.inputs = list(inputs)
        self.outputs = _flat(outputs)


def _flat(outputs):
    return list(outputs.values()) if isinstance(outputs, dict) else (
        list(outputs) if isinstance(outputs, (list, tuple)) else [outputs])


def _replay(model, xs):
    _ensure_built(model, xs[0].shape)
    if _is_chain(model):
        x = xs[0]
        for layer in model._graph_layers():
            x = call_symbolic(layer, [x]) if is_model(layer) else \
                _symbolic.call_symbolic(layer, [x])
        return x
    if len(xs) != len(model.inputs):
        raise ValueError(f"Model '{model.name}' expects {len(model.inputs)} input(s), but it "
                         f"received {len(xs)} input tensors.")
    mapped = {id(t): x for t, x in zip(model.inputs, xs)}
    for node in model._nodes:
        if _layer_outputs.is_output_part(node.layer):  # the new call recorded its parts
            mapped[id(node.output)] = mapped[id(node.inputs[0])][node.layer.index]
            continue
        output = _symbolic.call_symbolic(node.layer, [mapped[id(t)] for t in node.inputs],
                                         node.call_arguments)
        if not isinstance(output, _symbolic.KerasTensor):  # a layer with several outputs
            output = nest.flatten(output)
            output[0].node.inputs[0].node.models = node.models  # its packed node
        else:
            output.node.models = node.models  # the models inside this one
        mapped[id(node.output)] = output
    return model._pack_outputs([mapped[id(t)] for t in model.outputs])


def _mark_recorded_by(call, outputs, inputs):
    """Prepends ``call.model`` to the ``models`` of every node recorded between ``inputs`` and
    ``outputs`` (the nodes its call just inlined), and makes ``call`` their outermost call."""
    stop = {id(t) for t in inputs}
    seen = set()
    pending = _flat(outputs)
    while pending:
        tensor = pending.pop()
        if id(tensor) in stop or tensor.node is None or id(tensor.node) in seen:
            continue
        seen.add(id(tensor.node))
        tensor.node.models = (call.model,) + tensor.node.models
        tensor.node.model_call = call
        pending.extend(tensor.node.inputs)


def keras_layers(model):
    """``model.layers`` as Keras lists them: a model called in a functional model is one entry
    (here its layers are inlined into the outer graph, and ``layers`` lists them one by one)."""
    if _is_chain(model) or not hasattr(model, "_nodes") or not model._nodes:
        return model._graph_layers()
    seen, out = set(), []
    for node in model._nodes:
        entry = node.models[0] if node.models else node.layer
        if _layer_outputs.is_output_part(entry):
            continue
        if id(entry) not in seen:
            seen.add(id(entry))
            out.append(entry)
    return out

