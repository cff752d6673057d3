"""What a ``keras.layers.Layer`` subclass written in Python needs: ``add_weight``, ``add_loss``,
the build wrapper, and the C++ layer (``_C.layers.TracedLayer``) that runs its ``call``.

The C++ layer records the ops ``call`` runs the first time it sees an input signature (shapes,
dtypes, ``training``) and replays them afterwards without Python (cpp/nn/op_trace.h), so a model
of Python layers trains in the same C++ step as the built-in ones. A ``call`` that cannot be
replayed (it reads tensor values into Python, draws random numbers, assigns in place...) runs in
Python on every call instead, and a warning says why, once per layer.
"""
import functools
import inspect
import numbers
import threading
import warnings
import weakref

import numpy as np

from .. import _C
from .._tensor import Tensor, no_grad, recording_for_step, tensor as _make_tensor
from . import _held_sublayers, _layer_outputs, _layer_variables


def defines_python_call(layer_class, base_call):
    """Whether ``layer_class`` (a Layer subclass) defines its forward pass in Python: its
    ``call`` is not ``base_call``, the base class's (which the base hands in)."""
    return getattr(layer_class, "call", base_call) is not base_call


def make_cpp_layer(layer):
    """The C++ layer of a Python-defined ``layer``; it calls back through a weak reference (the
    C++ layer lives as long as the Python one, which owns it)."""
    ref = weakref.ref(layer)
    return _C.layers.TracedLayer(layer.name, type(layer).__name__, _C.layers.TracedFunction(
        functools.partial(_run_call, ref), functools.partial(_warn, ref)))


def make_model_call_layer(model, layers):
    """The one C++ layer a subclassed model whose ``call`` uses tensor ops (not only layers)
    runs as: its call traced like a Python layer's, the layers it calls recorded as calls of
    their own C++ layers, and their weights registered here too (the same tensors), so the step
    differentiates and updates them."""
    ref = weakref.ref(model)
    cpp = _C.layers.TracedLayer(model.name, type(model).__name__, _C.layers.TracedFunction(
        functools.partial(_run_model_call, ref), functools.partial(_warn, ref)))
    for name, value, trainable in _held_weights(layers):
        cpp.add_weight_value(name, value, trainable)
    cpp.build([])
    return cpp


def _held_weights(layers, prefix=""):
    """(path, tensor, trainable) of every weight of ``layers``; a model among them (one the
    call uses as a layer) contributes its own layers' weights under its name."""
    out = []
    for layer in layers:
        if not hasattr(layer, "_cpp"):  # a model
            out += [(path, value, trainable and layer.trainable) for path, value, trainable
                    in _held_weights(layer._graph_layers(), f"{prefix}{layer.name}/")]
            continue
        out += [(f"{prefix}{layer.name}/{name}", value, bool(trainable and layer.trainable))
                for name, value, trainable in layer._cpp.weights]
    return out


def _run_model_call(ref, inputs, training):
    """The model-call layer's callback: [output, *losses its layers added]."""
    model = ref()
    if model is None:
        raise RuntimeError("the Python model behind this C++ layer was deleted")
    x = inputs[0] if len(inputs) == 1 else list(inputs)
    kwargs = {"training": bool(training)} if _takes(model.call, "training") else {}
    model._pending_losses = []  # the model's own add_loss calls (Keras's Model.add_loss)
    with recording_for_step(), _TrainingScope(training):
        output = model.call(x, **kwargs)
    own, model._pending_losses = model._pending_losses, None
    if isinstance(output, (list, tuple, dict)):  # several outputs: one packed tensor
        output = _layer_outputs.pack(model, list(inputs), output)
    output = _as_tensor(output, f"{type(model).__name__}.call() return value")
    return [output] + model._layers_losses() + own


_running_call = threading.local()


def outer_training():
    """The ``training`` of the Python ``call()`` running on this thread, or None outside one:
    as in Keras, a layer that call() calls without ``training`` inherits it (a Dropout or a
    RandomFlip inside a subclassed model is active in ``fit`` and not in ``predict``)."""
    return getattr(_running_call, "training", None)


class _TrainingScope:
    def __init__(self, training):
        self.training = bool(training)

    def __enter__(self):
        self.saved = outer_training()
        _running_call.training = self.training

    def __exit__(self, *exc):
        _running_call.training = self.saved


def _warn(ref, reason):
    layer = ref()
    name = layer.name if layer is not None else "?"
    warnings.warn(f"gpuaccel: layer '{name}' runs its Python call() on every call (it could not be "
                  f"traced into the C++ step): {reason}", RuntimeWarning, stacklevel=2)


def _takes(function, argument):
    try:
        parameters = inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False
    return argument in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())


class _AutocastWeights:
    """Keras's autocast under a mixed-precision policy: while ``call`` runs, the attributes
    holding float32 weights hold them cast to the compute dtype (a recorded cast, so a replay
    casts the updated master and gradients reach it); restored afterwards. So do those of the
    inner layers whose weights the call reads directly (an RNN's cell: the layer lists them in
    ``_saved_sublayers``, _layers_of_layers.py)."""

    def __init__(self, layer):
        self.layer = layer
        self.saved = {}
        self.inner = [_AutocastWeights(inner) for _, inner in
                      getattr(layer, "_saved_sublayers", lambda: [])()]

    def __enter__(self):
        dtype = self.layer.compute_dtype
        if dtype == "float32":
            return self
        masters = {w.data_ptr() for _, w, _ in self.layer._cpp.weights
                   if w._dtype_name == "float32"}
        for name, value in list(vars(self.layer).items()):
            if isinstance(value, Tensor) and value.data_ptr() in masters:
                self.saved[name] = value
                object.__setattr__(self.layer, name, _C.cast(value, dtype))
        for inner in self.inner:
            inner.__enter__()
        return self

    def __exit__(self, *exc):
        for inner in reversed(self.inner):
            inner.__exit__(*exc)
        for name, value in self.saved.items():
            object.__setattr__(self.layer, name, value)


def _run_call(ref, inputs, training, arguments=None):
    """The C++ layer's callback: [output, *added losses] of ``call`` on these inputs; a
    variant for extra call arguments (keras/_call_arguments.py) gets them after the layer's
    own inputs."""
    layer = ref()
    if layer is None:
        raise RuntimeError("the Python layer behind this C++ layer was deleted")
    layer._pending_losses = []
    count = len(inputs) if arguments is None else arguments.input_count
    x = inputs[0] if count == 1 else list(inputs[:count])
    kwargs = {"training": bool(training)} if _takes(layer.call, "training") else {}
    if arguments is not None:
        kwargs.update(arguments.keywords(inputs[count:]))
    with _AutocastWeights(layer), recording_for_step(), _TrainingScope(training):
        output = layer.call(x, **kwargs)
    if isinstance(output, (list, tuple)):  # several outputs: one packed tensor
        output = _layer_outputs.pack(layer, list(inputs), output)
    if not isinstance(output, Tensor):
        output = _as_tensor(output, f"{type(layer).__name__}.call() return value")
    for weight, regularizer in layer.__dict__.get("_weight_regularizers", ()):
        add_loss(layer, regularizer(weight))
    losses, layer._pending_losses = layer._pending_losses, []
    # The layers it holds: their weights become this layer's (built by this call, the first
    # time), their losses of this call join its own (Keras's layer.losses gathers them).
    _held_sublayers.adopt(layer)
    return [output] + losses + _held_sublayers.held_losses(layer)


# the callbacks a call-argument variant's C++ layer runs (keras/_call_arguments.py)
run_call, warn_once = _run_call, _warn


def _as_tensor(value, what):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, (list, tuple, dict)):
        raise NotImplementedError(f"{what}: a Python layer's call() must return one tensor "
                                  f"or a tuple/list of tensors; got {type(value).__name__}")
    array = np.asarray(value)
    if array.dtype.kind not in "fiub":
        raise TypeError(f"{what} must be a tensor, got {type(value).__name__}")
    return _make_tensor(array.astype(np.float32) if array.dtype.kind == "f" else array)


def add_loss(layer, loss):
    """Keras's ``self.add_loss(value)`` inside ``call``: the value (summed to a scalar) joins the
    model's loss for this step."""
    if not isinstance(loss, Tensor):
        if isinstance(loss, numbers.Number):
            loss = _make_tensor(np.float32(loss))
        else:
            loss = _as_tensor(loss, "add_loss()")
    if len(loss.shape):
        loss = _C.reduce("sum", loss, None, False)
    pending = getattr(layer, "_pending_losses", None)
    if pending is None:
        raise ValueError(f"add_loss() on layer '{layer.name}' must be called inside its call()")
    pending.append(loss)


def initial_value(initializer, shape, dtype, layer, name):
    """The starting value of a weight: a Keras initializer name (the C++ initializers, seeded
    by the global seed), or any initializer object/callable ``f(shape, dtype)`` (keras's too)."""
    shape = tuple(int(d) for d in shape)
    if initializer is None:
        initializer = "glorot_uniform" if dtype.startswith(("float", "bfloat")) else "zeros"
    if isinstance(initializer, str):
        value = _C.layers.initialize(_C.layers.canonical_initializer(initializer), list(shape))
    elif callable(initializer):
        produced = initializer(shape, dtype=dtype)
        array = np.asarray(produced.numpy() if hasattr(produced, "numpy") else produced)
        value = _make_tensor(np.ascontiguousarray(array.astype(np.float32)))
    else:
        raise ValueError(f"Could not interpret initializer identifier: {initializer!r} (layer "
                         f"'{layer.name}', weight '{name}')")
    if tuple(value.shape) != shape:
        raise ValueError(f"The initializer of weight '{name}' of layer '{layer.name}' returned "
                         f"shape {tuple(value.shape)}, expected {shape}")
    if dtype != "float32":
        value = _C.cast(value, dtype)
    return value


def add_weight(layer, shape=None, initializer=None, dtype=None, trainable=True, autocast=True,
               regularizer=None, constraint=None, aggregation="none",
               overwrite_with_gradient=False, name=None):
    """Keras 3's ``Layer.add_weight``: creates, registers and returns the weight. A
    ``regularizer``'s penalty of the weight joins the layer's losses on every call; a
    ``constraint`` projects the weight after every optimizer update (``fit``, ``apply``)."""
    if layer._cpp.built:
        # Keras 3's rule and words: a weight made in call() would be a new weight per call
        # (and, traced, one the replay never sees).
        raise ValueError(f"You cannot add new elements of state (variables or sub-layers) to a "
                         f"layer that is already built (layer '{layer.name}'). All state must "
                         f"be created in the `__init__()` method or in the `build()` method.")
    from . import constraints, regularizers
    regularizer = regularizers.get(regularizer)
    constraint = constraints.get(constraint)
    if shape is None:
        shape = ()
    try:
        shape = tuple(shape)
    except TypeError:
        shape = (shape,)
    for d in shape:
        if isinstance(d, bool) or not isinstance(d, numbers.Integral) or d < 0:
            raise ValueError(f"add_weight() shape must hold non-negative integers; received "
                             f"shape={shape} (layer '{layer.name}')")
    dtype = str(getattr(dtype, "name", dtype) or layer.variable_dtype)
    if name is None:
        count = getattr(layer, "_weight_counter", 0)
        layer._weight_counter = count + 1
        name = "variable" if count == 0 else f"variable_{count}"
    value = initial_value(initializer, shape, dtype, layer, name)
    layer._cpp.add_weight_value(name, value, bool(trainable))
    value = _layer_variables.labelled(layer, name, value, bool(trainable))  # layer.weights' object
    if regularizer is not None:
        layer.__dict__.setdefault("_weight_regularizers", []).append((value, regularizer))
    if constraint is not None:
        layer.__dict__.setdefault("_weight_constraints", []).append((value, constraint))
    return value


def _serializable(value):
    if value is None or isinstance(value, (bool, int, float, str)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_serializable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _serializable(v) for k, v in value.items())
    return False


def constructor_arguments(cls, args, kwargs):
    """A Python layer's constructor arguments by name (Keras 3's ``_auto_config``), or None
    when one is not a plain value (a number, string, None, or lists/dicts of them)."""
    try:
        bound = inspect.signature(cls.__init__).bind_partial(None, *args, **kwargs)
    except TypeError:
        return None  # __init__ itself raises the mismatch
    arguments = {}
    parameters = inspect.signature(cls.__init__).parameters
    for name, value in list(bound.arguments.items())[1:]:
        if parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
            arguments.update(value)
        elif parameters[name].kind is not inspect.Parameter.VAR_POSITIONAL:
            arguments[name] = value
    return arguments if _serializable(arguments) else None


def auto_config(layer):
    """The recorded constructor arguments ``get_config`` adds when the subclass writes none;
    Keras 3's error when one was not a plain value."""
    arguments = layer.__dict__["_auto_config"]
    if arguments is None:
        raise NotImplementedError(
            f"Object {type(layer).__name__} was created by passing non-serializable argument "
            f"values in `__init__()`, and therefore the object must override `get_config()` in "
            f"order to be serializable. Please implement `get_config()`.")
    return dict(arguments)


def _zeros(shape, dtype=np.float32):
    return _make_tensor(np.zeros(tuple(1 if d is None or d < 0 else int(d) for d in shape), dtype))


def compute_output_shape(layer, input_shape, arguments=None):
    """A Python layer's output shape when it does not say: ``call`` run once on zeros (batch 1,
    undefined dimensions 1) outside any tape, as Keras's compute_output_spec runs it
    symbolically; with ``arguments`` (keras/_call_arguments.py), zeros of its tensors' shapes
    and its values."""
    multiple = isinstance(input_shape, list) and input_shape and isinstance(input_shape[0], (tuple, list))
    shapes = input_shape if multiple else [input_shape]
    zeros = [_zeros(s) for s in shapes]
    extra = {} if arguments is None else arguments.keywords(
        [_zeros(t.shape, str(t.dtype)) for t in arguments.tensors])
    saved = getattr(layer, "_pending_losses", None)
    layer._pending_losses = []
    try:
        with no_grad():
            x = zeros[0] if len(zeros) == 1 else zeros
            kwargs = {"training": False} if _takes(layer.call, "training") else {}
            output = layer.call(x, **kwargs, **extra)
    finally:
        layer._pending_losses = saved
    _held_sublayers.adopt(layer)  # the call built the layers it holds
    batch = shapes[0][0] if len(shapes[0]) else None
    batch_dim = None if batch is None or (isinstance(batch, int) and batch < 0) else batch
    what = f"{type(layer).__name__}.call()"
    if isinstance(output, (list, tuple)):  # several outputs (keras/_layer_outputs.py)
        tensors = [_as_tensor(t, what) for t in output]
        several = _layer_outputs.SeveralShapes(_shape_with_batch(t, batch_dim) for t in tensors)
        several.as_list = isinstance(output, list)
        several.dtypes = [t._dtype_name for t in tensors]
        return several
    return _shape_with_batch(_as_tensor(output, what), batch_dim)


def _shape_with_batch(output, batch_dim):
    """``output``'s shape with its first dimension the symbolic batch (None stays None)."""
    dims = tuple(output.shape)
    if not dims:
        return ()
    return (dims[0] if batch_dim is not None else None,) + tuple(int(d) for d in dims[1:])


def wrap_build(build):
    """A subclass's ``build``, marking the C++ layer built afterwards (Keras wraps it too)."""
    @functools.wraps(build)
    def build_and_mark(self, *args, **kwargs):
        result = build(self, *args, **kwargs)
        if not self._cpp.built:
            self._cpp.build([])
        return result
    build_and_mark._gpuaccel_build_wrapper = True
    return build_and_mark

