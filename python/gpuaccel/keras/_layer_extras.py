"""Keras's per-layer extras on the built-in C++ layers (Dense, Conv1D, Conv2D, Conv2DTranspose):
``kernel_regularizer``, ``bias_regularizer``, ``activity_regularizer``, ``kernel_constraint``,
``bias_constraint`` and an ``activation`` the C++ layer does not have; and the weight
regularizers and constraints of BatchNormalization, LayerNormalization (``gamma_*``,
``beta_*``) and Embedding (``embeddings_*``), ``Extras.of_weights``.

Why a wrapper: the C++ layers compute their op and a C++ activation, nothing else. A layer that
asks for more keeps its C++ layer (``layer._inner``, built with a linear activation when the
activation is Python's) and runs as a traced Python layer around it: ``call`` is the C++ layer's
call, then the activation from ``keras.activations`` and the activity penalty (divided by the
batch size, as Keras 3). The C++ layer's weights are registered on the traced layer under their
own names (``kernel``, ``bias``), with the weight regularizers and constraints of
``_python_layer.add_weight``. The whole thing is traced once per input signature into the C++
step, as any Python layer (docs/training.md). A layer without extras is the plain C++ layer.
"""
from .. import _C
from . import _python_layer
from . import activations as activations_module
from . import constraints as constraints_module
from . import regularizers as regularizers_module


class Extras:
    """What a layer asked for beyond its C++ layer; ``any()`` when it needs the wrapper."""

    def __init__(self, activation, cpp_activations, kernel_regularizer=None,
                 bias_regularizer=None, activity_regularizer=None, kernel_constraint=None,
                 bias_constraint=None):
        self.python_activation = None if activation in cpp_activations else activation
        self.regularizers = {"kernel": regularizers_module.get(kernel_regularizer),
                             "bias": regularizers_module.get(bias_regularizer)}
        self.activity_regularizer = regularizers_module.get(activity_regularizer)
        self.constraints = {"kernel": constraints_module.get(kernel_constraint),
                            "bias": constraints_module.get(bias_constraint)}

    @classmethod
    def of_weights(cls, **arguments):
        """The extras of a layer that has only weight regularizers and constraints, given as
        Keras names them (``gamma_regularizer=``, ``embeddings_constraint=``...)."""
        extras = cls(None, (None,))
        extras.regularizers = {name[:-len("_regularizer")]: regularizers_module.get(value)
                               for name, value in arguments.items()
                               if name.endswith("_regularizer")}
        extras.constraints = {name[:-len("_constraint")]: constraints_module.get(value)
                              for name, value in arguments.items() if name.endswith("_constraint")}
        return extras

    def any(self):
        return (self.python_activation is not None or self.activity_regularizer is not None
                or any(self.regularizers.values()) or any(self.constraints.values()))

    def cpp_activation(self, activation):
        """The activation the C++ layer runs: linear when Python applies it afterwards."""
        return "linear" if self.python_activation is not None else activation

    def config(self):
        """Keras's config entries for these arguments (serialized dicts, or None)."""
        def maybe(serialize, value):
            return None if value is None else serialize(value)
        config = {f"{name}_regularizer": maybe(regularizers_module.serialize, value)
                  for name, value in self.regularizers.items()}
        config.update({f"{name}_constraint": maybe(constraints_module.serialize, value)
                       for name, value in self.constraints.items()})
        if self.activity_regularizer is not None:  # Keras's base config has it only when set
            config["activity_regularizer"] = regularizers_module.serialize(
                self.activity_regularizer)
        return config


def make_cpp(layer, inner):
    """The layer's C++ layer: ``inner`` itself, or the traced wrapper around it."""
    if not layer._extras.any():
        return inner
    layer._inner = inner
    return _python_layer.make_cpp_layer(layer)


def build(layer, shapes):
    """Builds the inner C++ layer, then registers its weights (with their regularizers and
    constraints) on the wrapper."""
    inner = layer._inner
    inner.compute_dtype = layer._cpp.compute_dtype
    inner.build(shapes)
    extras = layer._extras
    for name, value, trainable in inner.weights:
        layer._cpp.add_weight_value(name, value, bool(trainable))
        if extras.regularizers.get(name) is not None:
            layer.__dict__.setdefault("_weight_regularizers", []).append(
                (value, extras.regularizers[name]))
        if extras.constraints.get(name) is not None:
            layer.__dict__.setdefault("_weight_constraints", []).append(
                (value, extras.constraints[name]))
    layer._cpp.build([])


def build_method(plain_build):
    """The layer class's ``build``: the plain one for a plain C++ layer, else ``build``."""
    def build_layer(layer, input_shape):
        if layer.__dict__.get("_inner") is None:
            return plain_build(layer, input_shape)
        return build(layer, layer._shape_list(input_shape))
    return build_layer


def call(layer, inputs, training=None):
    """The wrapper's traced call: the C++ layer, the Python activation, the activity penalty."""
    outputs = layer._inner.call([inputs], bool(training))
    extras = layer._extras
    if extras.python_activation is not None:
        outputs = activations_module.get(extras.python_activation)(outputs)
    if extras.activity_regularizer is not None:
        penalty = extras.activity_regularizer(outputs)
        if len(outputs.shape):
            penalty = _C.binary("div", penalty, _C.scalar_like(float(outputs.shape[0]), penalty))
        layer.add_loss(penalty)
    return outputs
