"""``keras.Variable``: Keras 3's variable, a gpuaccel tensor with a variable's attributes (name,
path, trainable, assign/assign_add/assign_sub), made from a value (``keras.Variable(
ops.zeros((1, 1, d)))``) or from an initializer and a shape (``keras.Variable(initializer=
"ones", shape=(2,), trainable=False)``). Assigned to an attribute of a layer or model it
becomes that layer's weight, as Keras tracks it (``track``): in ``layer.weights``, trained by
``fit`` and a GradientTape, saved in its ``.weights.h5``."""
import types

from .. import _C
from .._convert import convert_to_tensor
from ..dtypes import FLOATING_NAMES


def Variable(initializer, shape=None, dtype=None, trainable=True, autocast=True,  # noqa: N802
             aggregation="none", synchronization="auto", name=None, **kwargs):
    from ._python_layer import initial_value
    name = "variable" if name is None else str(name)
    if isinstance(initializer, str) or (callable(initializer)
                                        and not hasattr(initializer, "shape")):
        if shape is None:
            raise ValueError(f"When creating a Variable from an initializer, the `shape` "
                             f"argument should be specified. Received: initializer="
                             f"{initializer} and shape={shape}")  # Keras's words
        owner = types.SimpleNamespace(name="keras.Variable")
        value = initial_value(initializer, shape, str(getattr(dtype, "name", dtype) or "float32"),
                              owner, name)
    else:
        given = convert_to_tensor(initializer, dtype=dtype)
        if shape is not None and tuple(shape) != tuple(given.shape):
            raise ValueError(f"Initial value has shape {tuple(given.shape)}, but the variable "
                             f"was given shape={tuple(shape)}")
        value = _C.detach(_C.clone(given))  # its own storage, as Keras copies the value
    if trainable and value._dtype_name in FLOATING_NAMES:
        value.requires_grad = True
    value.trainable = bool(trainable)
    value.name = value.path = name
    value._is_variable = True
    value._keras_variable = True
    return value


def track(layer, attribute, variable):
    """Registers ``variable`` (set as ``layer.<attribute>``) as one of the layer's weights, once:
    fit's step differentiates and updates the weights its C++ layer lists."""
    if any(w.data_ptr() == variable.data_ptr() for _, w, _ in layer._cpp.weights):
        return
    taken = {name for name, _, _ in layer._cpp.weights}
    name = variable.name
    if name == "variable" or name in taken:  # unnamed (or clashing): add_weight's numbering
        count = layer.__dict__.get("_weight_counter", 0)
        while True:
            name = "variable" if count == 0 else f"variable_{count}"
            count += 1
            if name not in taken:
                break
        layer.__dict__["_weight_counter"] = count
    layer._cpp.add_weight_value(name, variable, bool(variable.trainable))
    # layer.weights hands out this very object for the weight (_layer_variables.labelled)
    layer.__dict__.setdefault("_variable_objects", {})[name] = variable
