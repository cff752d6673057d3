"""``gpuaccel.keras.constraints``: Keras 3's weight constraints (MaxNorm, MinMaxNorm, NonNeg,
UnitNorm), ``get``/``serialize``/``deserialize``.

Why: Keras projects a constrained weight back after every optimizer update
(``variable.assign(constraint(variable))``); course models use ``kernel_constraint=max_norm(3)``
with dropout. Each constraint is Keras's formula (keras/src/constraints/constraints.py) with
gpuaccel's ops; ``add_weight(constraint=...)`` of a Python layer registers it on the layer, and
``fit``/``train_on_batch`` apply it after each step (``after_step_hook``).
"""
from .. import _C
from .._convert import convert_to_tensor
from .._tensor import no_grad
from ._registry import KerasObjectRegistry

__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm",
           "min_max_norm", "non_neg", "unit_norm", "get", "serialize", "deserialize"]

_EPSILON = 1e-7  # keras.backend.epsilon()


def _norms(w, axis):
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    return _C.unary("sqrt", _C.reduce("sum", _C.unary("square", w), axes, True))


def _rescaled(w, desired, norms):
    """w * desired / (epsilon + norms)."""
    denominator = _C.binary("add", _C.scalar_like(_EPSILON, norms), norms)
    return _C.binary("mul", w, _C.binary("div", desired, denominator))


def _clip(x, low, high):
    return _C.binary("minimum", _C.binary("maximum", x, _C.scalar_like(float(low), x)),
                     _C.scalar_like(float(high), x))


class Constraint:
    """Keras's base: ``__call__(w)`` returns the projected weight."""

    def __call__(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class MaxNorm(Constraint):
    """Rescales the slices along ``axis`` whose L2 norm exceeds ``max_value``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        return _rescaled(w, _clip(norms, 0.0, self.max_value), norms)

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """max(w, 0)."""

    def __call__(self, w):
        w = convert_to_tensor(w)
        return _C.binary("maximum", w, _C.scalar_like(0.0, w))


class UnitNorm(Constraint):
    """Each slice along ``axis`` divided by its L2 norm."""

    def __init__(self, axis=0):
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        return _rescaled(w, _C.scalar_like(1.0, norms), norms)

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Norms moved towards [min_value, max_value] by ``rate`` (1: clipped exactly)."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def __call__(self, w):
        w = convert_to_tensor(w)
        norms = _norms(w, self.axis)
        clipped = _clip(norms, self.min_value, self.max_value)
        desired = _C.binary("add", _C.binary("mul", _C.scalar_like(float(self.rate), norms),
                                             clipped),
                            _C.binary("mul", _C.scalar_like(1.0 - self.rate, norms), norms))
        return _rescaled(w, desired, norms)

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


max_norm, min_max_norm, non_neg, unit_norm = MaxNorm, MinMaxNorm, NonNeg, UnitNorm

# Keras's ALL_OBJECTS_DICT: class names and their snake_case.
_BY_NAME = {"Constraint": Constraint, "constraint": Constraint, "MaxNorm": MaxNorm,
            "max_norm": MaxNorm, "MinMaxNorm": MinMaxNorm, "min_max_norm": MinMaxNorm,
            "NonNeg": NonNeg, "non_neg": NonNeg, "UnitNorm": UnitNorm, "unit_norm": UnitNorm}


_REGISTRY = KerasObjectRegistry("constraint", "keras.constraints", Constraint, _BY_NAME)


def serialize(constraint):
    """Keras's dict: module, class_name, config, registered_name."""
    return _REGISTRY.serialize(constraint)


def deserialize(config, custom_objects=None):
    """A constraint from Keras's dict or a name."""
    return _REGISTRY.deserialize(config, custom_objects)


def get(identifier):
    """None -> None; a name -> a new instance; a dict -> deserialize; a constraint or callable
    -> itself (a class -> an instance)."""
    return _REGISTRY.get(identifier)


def _layers_of(model):
    for layer in getattr(model, "layers", ()):
        yield layer
        yield from _layers_of(layer)


def after_step_hook(model):
    """What the training loop calls after each step to project the constrained weights of
    ``model``'s layers in place (Keras's ``variable.assign(constraint(variable))`` after the
    update); None when no weight has a constraint."""
    pairs = [pair for layer in _layers_of(model)
             for pair in layer.__dict__.get("_weight_constraints", ())]
    if not pairs:
        return None

    def project():
        with no_grad():
            for weight, constraint in pairs:
                _C.copy_into(constraint(weight), weight)
    return project
