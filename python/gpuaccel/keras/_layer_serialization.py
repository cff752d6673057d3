"""``keras.layers.serialize``/``deserialize``: a layer as Keras's dict (module, class_name,
config) and back, through the KerasObjectRegistry every configurable family uses. Its own
module (not layers.py) so that layers which hold a layer (Wrapper) serialize it without
importing layers.py back; the table of classes is read from ``Layer``'s subclasses when
called, so it holds every gpuaccel layer module imported by then."""
from ._layer_base import Layer
from ._registry import KerasObjectRegistry


def _layer_classes():
    """Keras's names of gpuaccel's public layer classes -> class."""
    by_name, pending = {}, [Layer]
    while pending:
        for subclass in pending.pop().__subclasses__():
            pending.append(subclass)
            if subclass.__module__.startswith("gpuaccel.keras") and \
                    not subclass.__name__.startswith("_"):
                by_name.setdefault(_keras_class_name(subclass), subclass)
    by_name["Layer"] = Layer
    return by_name


def _keras_class_name(cls):
    """The name Keras serializes a class under (``_keras_class_name`` where it differs from
    the class's own, as _keras_archive.py writes it)."""
    return getattr(cls, "_keras_class_name", cls.__name__)


def _registry():
    return KerasObjectRegistry("layer", "keras.layers", Layer, _layer_classes(),
                               accepts_names=False)


def serialize(layer):
    """Keras's dict of ``layer``: {'module', 'class_name', 'config', 'registered_name'}."""
    serialized = _registry().serialize(layer)
    serialized["class_name"] = _keras_class_name(type(layer))
    return serialized


def deserialize(config, custom_objects=None):
    """A new layer from Keras's dict; ``custom_objects`` maps further class names to
    classes."""
    registry = _registry()
    if isinstance(config, dict) and "class_name" in config and \
            config["class_name"] not in (custom_objects or {}) and \
            config["class_name"] not in registry.by_name:
        # Keras's type and words for a class it cannot find
        raise TypeError(f"Could not locate class '{config['class_name']}'. Make sure custom "
                        "classes and functions are decorated with "
                        "`@keras.saving.register_keras_serializable()`. If they are already "
                        "decorated, make sure they are all imported so that the decorator is run "
                        f"before trying to load them. Full object config: {config}")
    return registry.deserialize(config, custom_objects)
