"""What a ``tf.train.Checkpoint`` saves: every variable reachable from its keyword arguments,
each under a key spelled from the attribute names that lead to it (the object graph).

TensorFlow names a checkpointed value by the path of attributes from the Checkpoint to the
variable, so a checkpoint restores into a new program that builds the same objects, whatever
the variables' own names. gpuaccel does the same with these keys:

- a variable ``v=tf.Variable(...)`` (and ``save_counter``): ``v/.ATTRIBUTES/VARIABLE_VALUE``,
  TensorFlow's own key;
- a Keras model or layer ``model=...``: ``model/<group>/vars/<i>``, where ``<group>`` is the
  layer's group in Keras 3's ``.weights.h5`` layout (``layers/dense_1``, or the attribute name
  in a subclassed model: ``keras._keras_h5``) and ``<i>`` the variable's index in it;
- an optimizer ``optimizer=...``: ``optimizer/iterations``, ``optimizer/learning_rate`` and,
  for every variable saved in the same checkpoint that has slots,
  ``<that variable's key>/.OPTIMIZER_SLOT/optimizer/<slot kind>`` (as TensorFlow attaches a
  slot to its variable: an optimizer saved without its model saves no slots);
- a nested ``tf.train.Checkpoint``: its own keys under its attribute name.
"""
import numpy as np

from .. import _C
from .._tensor import Tensor, from_numpy

_VALUE = ".ATTRIBUTES/VARIABLE_VALUE"


class CheckpointNode:
    """Base of ``tf.train.Checkpoint``: an object whose ``_children()`` (attribute name, object)
    pairs are saved under its own attribute name."""

    def _children(self):
        raise NotImplementedError


class Entry:
    """One saved value: ``key``, ``read()`` -> ndarray and ``write(ndarray)``. ``layer`` is the
    layer whose ``set_weights`` applies it (a layer's variables are written together)."""

    __slots__ = ("key", "read", "write", "shape", "owner")

    def __init__(self, key, read, write, shape, owner=None):
        self.key, self.read, self.write, self.shape, self.owner = key, read, write, shape, owner


def _array_of(tensor):
    return np.array(_C.detach(tensor).numpy(), copy=True)


def _variable_entry(key, tensor):
    def write(array):
        tensor.assign(np.asarray(array, dtype=_array_of(tensor).dtype))
    return Entry(key, lambda: _array_of(tensor), write, tuple(tensor.shape))


def _not_trackable(name, value):
    if hasattr(value, "__next__"):  # TensorFlow's guide checkpoints `iterator=iter(dataset)`
        return ValueError(f"`Checkpoint` got an iterator for {name}: gpuaccel does not "
                          "checkpoint where a dataset iterator is; leave it out and skip the "
                          "batches already done when resuming (or use "
                          "keras.callbacks.BackupAndRestore with fit, which resumes mid-epoch)")
    return ValueError(f"`Checkpoint` was expecting {name} to be a trackable object (an object "
                      f"derived from `Trackable`), got {value!r}. gpuaccel checkpoints Keras "
                      "models and layers, optimizers, gpuaccel.Variable tensors and nested "
                      "tf.train.Checkpoint objects.")


def _layer_classes():
    """A Keras layer or model (gpuaccel's models are not Layer subclasses)."""
    from ..keras._model_classes import model_class
    from ..keras.layers import Layer
    return (Layer, model_class())


def check_trackable(name, value):
    """Raises TensorFlow's ValueError for a keyword argument gpuaccel cannot checkpoint."""
    from ..keras.optimizers import Optimizer
    if not isinstance(value, (Tensor, Optimizer, CheckpointNode) + _layer_classes()):
        raise _not_trackable(name, value)


def _layer_groups(layer):
    from ..keras import _keras_h5
    from ..keras._nested_models import is_model
    if is_model(layer):
        return _keras_h5._weight_groups(layer)
    return _keras_h5._leaf_groups(layer, "")


def _layer_entries(prefix, layer, variables):
    """Entries of a model's or layer's weights; appends (key, weight tensor) to ``variables``."""
    if not layer.built:
        raise ValueError(f"{type(layer).__name__} '{layer.name}' (checkpointed as {prefix!r}) is "
                         "not built, so it has no variables to save or restore into; gpuaccel "
                         "defers restoration only for models: build the layer first (call it on "
                         "a batch, or layer.build(input_shape))")
    entries = []
    for group_layer, path in _layer_groups(layer):
        weights = group_layer.weights
        base = f"{prefix}/{path}".rstrip("/")
        for i, w in enumerate(weights):
            key = f"{base}/vars/{i}"
            variables.append((key, w))

            def read(owner=group_layer, index=i):
                return owner.get_weights()[index]
            entries.append(Entry(key, read, None, tuple(w.shape), owner=(group_layer, i)))
    return entries


def _optimizer_entries(prefix, optimizer, variables):
    from ..keras._training_state import _optimizer_parts  # BackupAndRestore's reading of it
    cpp, loss_scale = _optimizer_parts(optimizer)

    def write_iterations(array):
        cpp.iterations = int(array)

    def write_rate(array):
        # A schedule's rate follows `iterations` (a LossScaleOptimizer's is its inner one's).
        inner = getattr(optimizer, "inner_optimizer", optimizer)
        if getattr(inner, "_rate_function", None) is None:
            cpp.learning_rate = float(array)

    entries = [
        Entry(f"{prefix}/iterations", lambda: np.array(cpp.iterations, dtype=np.int64),
              write_iterations, ()),
        Entry(f"{prefix}/learning_rate", lambda: np.array(cpp.learning_rate, dtype=np.float32),
              write_rate, ()),
    ]
    if loss_scale is not None:
        def write_scale(array):
            loss_scale.set_dynamic_state(float(array[0]), int(array[1]))
        entries.append(Entry(f"{prefix}/loss_scale",
                             lambda: np.array([loss_scale.scale, loss_scale.step_counter],
                                              dtype=np.float64),
                             write_scale, (2,)))
    name = prefix.rsplit("/", 1)[-1]
    for key, w in variables:
        for kind in cpp.slot_kinds:
            def read(w=w, kind=kind):
                slot = cpp.slot(w, kind)
                return None if slot is None else np.array(_array_of(slot), dtype=np.float32)

            def write(array, w=w, kind=kind):
                cpp.set_slot(w, kind, from_numpy(np.ascontiguousarray(array, dtype=np.float32)))
            entries.append(Entry(f"{key}/.OPTIMIZER_SLOT/{name}/{kind}", read, write,
                                 tuple(w.shape)))
    return entries


def collect(checkpoint, prefix=""):
    """(every Entry reachable from ``checkpoint`` (a tf.train.Checkpoint) in a fixed order,
    [(key, model)] of the models not built yet, whose variables do not exist: TensorFlow saves
    nothing for them and restores into them once they are built)."""
    from ..keras._nested_models import is_model
    from ..keras.optimizers import Optimizer
    entries, variables, optimizers, unbuilt = [], [], [], []
    for name, value in checkpoint._children():
        key = f"{prefix}{name}"
        if isinstance(value, CheckpointNode):
            inner, inner_unbuilt = collect(value, key + "/")
            entries.extend(inner)
            unbuilt.extend(inner_unbuilt)
        elif is_model(value) and not value.built:
            unbuilt.append((key, value))
        elif isinstance(value, Tensor):
            entries.append(_variable_entry(f"{key}/{_VALUE}", value))
            variables.append((f"{key}/{_VALUE}", value))
        elif isinstance(value, _layer_classes()):
            entries.extend(_layer_entries(key, value, variables))
        elif isinstance(value, Optimizer):
            optimizers.append((key, value))
    for key, optimizer in optimizers:
        entries.extend(_optimizer_entries(key, optimizer, variables))
    return entries, unbuilt
