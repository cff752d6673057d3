"""Keras 3's registry of user classes for saving (``keras.saving.register_keras_serializable``,
``get_custom_objects``, ``custom_object_scope``), which ``keras.saving`` and ``keras.utils`` both
export.

Why: a ``.keras`` archive names a Python layer by its registered name; ``load_model`` finds
the class here when no ``custom_objects`` is passed, as Keras does. The lookup order is
Keras's (keras/src/saving/serialization_lib.py): the ``custom_objects`` argument, then the
innermost open ``custom_object_scope``, then the registered classes, and a later source wins
where two hold the same name."""
import inspect
import threading

_GLOBAL_CUSTOM_OBJECTS = {}  # registered name ("package>Name") -> class
_GLOBAL_CUSTOM_NAMES = {}  # class -> registered name
_scope = threading.local()  # Keras keeps its scope per thread too


def _scope_objects():
    return getattr(_scope, "objects", {})


class CustomObjectScope:
    """``with custom_object_scope({'MyLayer': MyLayer}):``: those names are known to
    deserialization (``load_model``, ``from_config``) inside the block; an inner scope
    replaces an outer one for its duration, as in Keras."""

    def __init__(self, custom_objects):
        if custom_objects is not None and not isinstance(custom_objects, dict):
            raise TypeError("custom_object_scope takes a dict {name: class or function}; got "
                            f"{type(custom_objects).__name__}")
        self.custom_objects = dict(custom_objects or {})
        self.backup = None

    def __enter__(self):
        self.backup = _scope_objects()
        _scope.objects = dict(self.custom_objects)
        return self

    def __exit__(self, *exc):
        _scope.objects = self.backup
        return False


custom_object_scope = CustomObjectScope


def get_custom_objects():
    """The live dict of registered objects (name -> class): assigning to it registers."""
    return _GLOBAL_CUSTOM_OBJECTS


def register_keras_serializable(package="Custom", name=None):
    """A class decorator: registers the class as ``"package>name"`` (``name`` defaults to the
    class's name), the name a saved archive gives it and ``load_model`` finds it by."""

    def decorator(arg):
        class_name = name if name is not None else arg.__name__
        registered_name = f"{package}>{class_name}"
        if inspect.isclass(arg) and not hasattr(arg, "get_config"):
            raise ValueError("Cannot register a class that does not have a get_config() "
                             "method.")  # Keras's words
        _GLOBAL_CUSTOM_OBJECTS[registered_name] = arg
        _GLOBAL_CUSTOM_NAMES[arg] = registered_name
        return arg

    return decorator


def get_registered_name(obj):
    """The registered name of ``obj``, or its Python name when it is not registered."""
    return _GLOBAL_CUSTOM_NAMES.get(obj, getattr(obj, "__name__", None))


def get_registered_object(name, custom_objects=None, module_objects=None):
    """The class or function known as ``name`` (Keras's order: the open scope, the
    registered objects, ``custom_objects``, ``module_objects``), or None."""
    for source in (_scope_objects(), _GLOBAL_CUSTOM_OBJECTS, custom_objects or {},
                   module_objects or {}):
        if name in source:
            return source[name]
    return None


def find_custom_class(names, custom_objects=None):
    """What deserialization builds for a saved entry known by ``names`` (its registered name,
    then its class name): Keras merges ``custom_objects``, the open scope and the registered
    objects, a later one winning; None when none holds any of the names."""
    merged = {**(custom_objects or {}), **_scope_objects(), **_GLOBAL_CUSTOM_OBJECTS}
    for name in names:
        if name and name in merged:
            return merged[name]
    return None
