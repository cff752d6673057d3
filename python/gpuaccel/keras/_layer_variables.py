"""Keras's weight attributes on built-in layers: ``dense.kernel``, ``bn.moving_mean``, ...

Keras layers expose their weights as variables (``kernel``/``bias`` on Dense and Conv*,
``gamma``/``beta``/``moving_mean``/``moving_variance`` on BatchNormalization, ``gamma``/``beta``
on LayerNormalization, ``embeddings`` on Embedding) that tutorials read (``kernel.dtype.name``,
``.numpy()``, ``.shape``) and write (``.assign``). A built-in gpuaccel layer holds its weights
in its C++ twin; what is handed out here is that very tensor (so ``assign`` changes what the
layer computes, and the variable works in every op), labelled with Keras 3's ``name``
(``'kernel'``), ``path`` (``'dense/kernel'``) and ``trainable``.
"""

# The weight attributes Keras gives each built-in layer class (the C++ layers use the same
# names); subclasses inherit them.
_ATTRIBUTES_BY_CLASS = {
    "Dense": ("kernel", "bias"),
    "Conv1D": ("kernel", "bias"),
    "Conv2D": ("kernel", "bias"),
    "Conv2DTranspose": ("kernel", "bias"),
    "BatchNormalization": ("gamma", "beta", "moving_mean", "moving_variance"),
    "LayerNormalization": ("gamma", "beta"),
    "Embedding": ("embeddings",),
}
MISSING = object()


def _attributes_of(layer):
    for cls in type(layer).__mro__:
        if cls.__module__ == "gpuaccel.keras.layers" and cls.__name__ in _ATTRIBUTES_BY_CLASS:
            return _ATTRIBUTES_BY_CLASS[cls.__name__]
    return ()


def _same_tensor(a, b):
    # Same memory, shape, dtype and device: the same weight (a cached object keeps its memory
    # alive, so a new weight cannot reuse the address).
    return (a.data_ptr() == b.data_ptr() and tuple(a.shape) == tuple(b.shape)
            and a._dtype_name == b._dtype_name and a._device_name == b._device_name)


def labelled(layer, name, value, trainable):
    """The layer's weight tensor ``value`` as a Keras variable (Python attributes on the
    tensor: a variable's ``.numpy()`` is allowed while it requires grad, as TF's).

    Each access to a C++ layer's weight list makes new Python objects for the same tensors, so
    the first object handed out for a weight (add_weight's return value for a Python layer) is
    kept and handed out again while it is still that weight: as in Keras, ``layer.kernel is
    layer.weights[0]``, ``layer.weights == [layer.w, layer.b]`` and ``v in
    model.trainable_variables`` hold (a tensor's ``==`` is elementwise, so list equality and
    ``in`` rely on identity), and attributes set on a variable stay on it."""
    known = layer.__dict__.setdefault("_variable_objects", {})
    if name in known and _same_tensor(known[name], value):
        value = known[name]
    else:
        known[name] = value
    value.name = name
    value.path = f"{layer.name}/{name}"
    # The variable's own flag, as Keras reports it (layer.trainable=False leaves it True).
    value.trainable = bool(trainable)
    value._is_variable = True
    return value


def find(layer, attribute):
    """``layer.<attribute>`` for one of the layer class's weight attributes: the variable, or
    None where the layer was built without it (``use_bias=False``, as Keras). ``MISSING`` for
    any other name. Before the layer is built, Keras's AttributeError."""
    if attribute not in _attributes_of(layer):
        return MISSING
    if not layer.built:
        raise AttributeError(f"You must build the layer before accessing `{attribute}`.")
    for name, value, trainable in layer._cpp.weights:
        if name == attribute:
            return labelled(layer, name, value, trainable)
    return None
