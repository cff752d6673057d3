"""``keras.saving.serialize_keras_object`` / ``deserialize_keras_object`` (also in
``keras.utils``): any Keras object to Keras 3's config dict and back.

Why: a custom layer's ``get_config``/``from_config`` written after the Keras guides nests its
sub-objects (an initializer, a regularizer, a sub-layer) with these two functions. Each family
(layers, losses, metrics, optimizers, learning-rate schedules, initializers, regularizers,
constraints, activations) already writes and reads its own dicts; these functions pick the
family by the object's class, or by the dict's ``module``, and recurse through lists, tuples
and dicts as Keras does. A Python function is Keras's ``{'class_name': 'function', ...}`` form;
a user class is found through ``custom_objects`` and the registry
(``register_keras_serializable``)."""
import types

from . import (activations, constraints, initializers, layers, losses, metrics, optimizers,
               optimizers_schedules, regularizers)
from ._object_registration import get_registered_name, get_registered_object

# (base class, family module, the dict's "module", whether its deserialize takes
# custom_objects), most specific first: a family's object is never also another's
_FAMILIES = [
    (losses.Loss, losses, "keras.losses", True),
    (metrics.Metric, metrics, "keras.metrics", True),
    (optimizers_schedules.LearningRateSchedule, optimizers_schedules,
     "keras.optimizers.schedules", True),
    (optimizers.Optimizer, optimizers, "keras.optimizers", False),
    (initializers.Initializer, initializers, "keras.initializers", True),
    (regularizers.Regularizer, regularizers, "keras.regularizers", True),
    (constraints.Constraint, constraints, "keras.constraints", True),
    (layers.Layer, layers, "keras.layers", True),
]
_BY_MODULE = {module_name: (family, takes) for _, family, module_name, takes in _FAMILIES}


def serialize_keras_object(obj):
    """Keras 3's config of ``obj``: plain values as they are, lists/tuples/dicts item by item,
    a function as ``{'module': 'builtins', 'class_name': 'function', 'config': name, ...}``,
    a Keras object as its family's ``{'module', 'class_name', 'config', 'registered_name'}``."""
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, (list, tuple)):
        items = [serialize_keras_object(item) for item in obj]
        return tuple(items) if isinstance(obj, tuple) else items
    if isinstance(obj, dict):
        return {key: serialize_keras_object(value) for key, value in obj.items()}
    if isinstance(obj, types.FunctionType):
        return {"module": "builtins", "class_name": "function",
                "config": get_registered_name(obj), "registered_name": "function"}
    for base, family, _, _ in _FAMILIES:
        if isinstance(obj, base):
            return family.serialize(obj)
    if hasattr(obj, "get_config"):
        return {"module": type(obj).__module__, "class_name": type(obj).__name__,
                "config": obj.get_config(), "registered_name": get_registered_name(type(obj))}
    raise TypeError(f"Cannot serialize {obj!r} of type {type(obj).__name__}: it is no Keras "
                    "object (it has no get_config) nor a plain value, list, tuple or dict")


def deserialize_keras_object(config, custom_objects=None, safe_mode=True, **kwargs):
    """The object a ``serialize_keras_object`` config describes (see that function)."""
    if config is None or isinstance(config, (bool, int, float, str)):
        return config
    if isinstance(config, (list, tuple)):
        items = [deserialize_keras_object(item, custom_objects) for item in config]
        return tuple(items) if isinstance(config, tuple) else items
    if not isinstance(config, dict):
        raise TypeError(f"Could not parse config: {config!r} (expected a dict, list, tuple or "
                        "plain value)")
    if "class_name" not in config or "config" not in config:
        return {key: deserialize_keras_object(value, custom_objects)
                for key, value in config.items()}
    if config["class_name"] == "__tuple__":
        return tuple(deserialize_keras_object(item, custom_objects)
                     for item in config["config"]["value"])
    if config["class_name"] == "function":
        name = config["config"]
        found = get_registered_object(name, custom_objects)
        return found if found is not None else activations.get(name)
    family, takes_custom_objects = _BY_MODULE.get(config.get("module"), (None, False))
    if family is not None:
        return family.deserialize(config, custom_objects) if takes_custom_objects else \
            family.deserialize(config)
    registered = config.get("registered_name") or config["class_name"]
    cls = get_registered_object(registered, custom_objects) or \
        get_registered_object(config["class_name"], custom_objects)
    if cls is None:
        raise TypeError(f"Could not locate class '{config['class_name']}'. Make sure custom "
                        "classes are decorated with `@keras.saving.register_keras_serializable()`"
                        f" or passed in custom_objects. Full object config: {config}")
    return cls.from_config(config["config"])
