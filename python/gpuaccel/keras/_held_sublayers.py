"""The layers a Python ``keras.layers.Layer`` subclass holds in its attributes (Keras's
``MLPBlock`` holding ``Linear`` layers, a residual block holding ``Conv2D``/``BatchNormalization``).

The outer layer's traced call runs the held layers, reading their weights by reference, so the
outer C++ layer must list those weights for fit's step to differentiate and update them:
``adopt`` registers them there (the same tensors) once the held layers are built, which is
during the outer layer's first call. Keras's views of them follow Keras 3's ``Layer``: ``weights``
are the layer's own then each held layer's in assignment order, ``trainable_weights`` leave out
a frozen held layer's, ``losses`` gather the held layers' too, and a ``.weights.h5`` file keeps
the held layers' variables in groups named after the attributes (a list's items as
``attribute/<snake_case class>[_n]``), the layer's own under its own group.
"""
from ._model_classes import model_class
from ._snake_case import snake_case as _snake_case


def _is_layer(value):
    # a gpuaccel layer (each has its C++ layer, `_cpp`; a class cannot be imported here, since
    # the Layer base imports this module) or a model
    return (not isinstance(value, type) and hasattr(value, "_cpp")
            and hasattr(value, "_is_python_layer")) or isinstance(value, model_class())


def held_layers(layer):
    """(attribute path, layer) of every layer ``layer``'s attributes hold, lists, tuples and
    dicts included, in assignment order (each layer once)."""
    seen, out = {id(layer)}, []
    for name, value in vars(layer).items():
        if name.startswith("__") or name == "_variable_objects":
            continue
        if _is_layer(value):
            items = [(name, value)]
        elif isinstance(value, (list, tuple, dict)):
            values = list(value.values()) if isinstance(value, dict) else list(value)
            if not any(_is_layer(v) for v in values):
                continue
            used, items = {}, []
            for item in values:
                if _is_layer(item):
                    key = _snake_case(type(item).__name__)
                    used[key] = used.get(key, -1) + 1
                    items.append((f"{name}/{key}" + (f"_{used[key]}" if used[key] else ""), item))
        else:
            continue
        for path, item in items:
            if id(item) not in seen:
                seen.add(id(item))
                out.append((path, item))
    return out


def holds_layers(layer):
    """A Python layer holding layers (a model traced as one layer registers its layers'
    weights itself, _python_layer.make_model_call_layer; an RNN-like layer its own way,
    _layers_of_layers.py)."""
    is_python_layer = getattr(layer, "_is_python_layer", None)
    return is_python_layer is not None and is_python_layer() and \
        not hasattr(type(layer), "_saved_sublayers") and bool(held_layers(layer))


def _weights_of(held):
    """(name, tensor, trainable) of a held layer's weights; a model's through its layers."""
    if hasattr(held, "_cpp"):
        return [(name, value, bool(trainable and held.trainable))
                for name, value, trainable in held._cpp.weights]
    return [(f"{inner.name}/{name}", value, bool(trainable and held.trainable))
            for inner in held._graph_layers() for name, value, trainable in _weights_of(inner)]


def adopt(layer):
    """Registers the weights of ``layer``'s held layers that its C++ layer does not list yet."""
    if not holds_layers(layer):
        return
    adopted = layer.__dict__.setdefault("_adopted_weights", set())
    listed = {value.data_ptr() for _, value, _ in layer._cpp.weights}
    for _, held in held_layers(layer):
        for name, value, trainable in _weights_of(held):
            if value.data_ptr() not in listed:
                layer._cpp.add_weight_value(f"{held.name}/{name}", value, trainable)
                listed.add(value.data_ptr())
                adopted.add(value.data_ptr())


def own_weight_entries(layer):
    """The (name, tensor, trainable) of the weights ``layer`` made itself (add_weight)."""
    adopted = layer.__dict__.get("_adopted_weights", ())
    return [(n, v, t) for n, v, t in layer._cpp.weights if v.data_ptr() not in adopted]


def keras_weights(layer, own):
    """Keras 3's ``weights`` of a layer holding layers: ``own`` then each held layer's."""
    out, seen = list(own), {id(w) for w in own}
    for _, held in held_layers(layer):
        for w in held.weights:
            if id(w) not in seen:
                seen.add(id(w))
                out.append(w)
    return out


def keras_trainable_weights(layer, own):
    if not layer.trainable:
        return []
    out = [w for w in own if w.trainable]
    for _, held in held_layers(layer):
        out += [w for w in held.trainable_weights if all(w is not o for o in out)]
    return out


def held_losses(layer):
    return [loss for _, held in held_layers(layer) for loss in held.losses]


class OwnWeights:
    """A layer's own variables as one ``.weights.h5`` group (its held layers have theirs)."""

    def __init__(self, layer):
        self.layer = layer
        self.name = layer.name

    def get_weights(self):
        import numpy as np
        from .. import _C
        return [np.array(_C.detach(value).numpy(), dtype=np.float32, copy=True)
                for _, value, _ in own_weight_entries(self.layer)]

    def set_weights(self, arrays):
        from .._tensor import no_grad
        with no_grad():
            for (_, value, _), array in zip(own_weight_entries(self.layer), arrays):
                value.assign(array)
