"""``keras.saving``: saving and loading models (``save_model``, ``load_model``) and Keras's
registry of user classes (``register_keras_serializable``, ``get_custom_objects``,
``custom_object_scope``...), so a ``.keras`` archive of a model with a registered Python layer
loads without ``custom_objects``, as in Keras; ``serialize_keras_object`` /
``deserialize_keras_object`` (_object_serialization.py). The registry lives in
``_object_registration``; ``keras.utils`` exports the same functions."""
from .. import _unsupported
from ._object_serialization import deserialize_keras_object, serialize_keras_object
from ._object_registration import (CustomObjectScope, custom_object_scope, get_custom_objects,
                                   get_registered_name, get_registered_object,
                                   register_keras_serializable)

__all__ = ["CustomObjectScope", "custom_object_scope", "get_custom_objects",
           "get_registered_name", "get_registered_object", "register_keras_serializable",
           "load_model", "save_model", "serialize_keras_object", "deserialize_keras_object"]


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):
    """``keras.saving.load_model``: ``keras.models.load_model``."""
    from . import models
    return models.load_model(filepath, custom_objects=custom_objects, compile=compile,
                             safe_mode=safe_mode)


def save_model(model, filepath, overwrite=True, **kwargs):
    """``keras.saving.save_model(model, 'x.keras')``: ``model.save``."""
    return model.save(filepath, overwrite=overwrite, **kwargs)


__getattr__ = _unsupported.module_getattr(__name__, "keras.saving", {})
