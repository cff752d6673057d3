"""Where the modules below ``keras/models.py`` find its ``Model`` and ``Sequential`` classes.

``models.py`` imports the ``.keras`` archive (``_keras_archive``), models used as layers
(``_nested_models``) and the training loop (whose distributed fit copies a model per replica
through the archive), and each of those must recognise or build a model. Rather than import
``models.py`` back, they ask here; ``models.py`` registers both classes as it loads, and the
``gpuaccel.keras`` package imports it before any model can exist.
"""
_registered = {}


def register(model_class, sequential_class):
    """Called once by models.py with its two classes."""
    _registered["Model"] = model_class
    _registered["Sequential"] = sequential_class


def model_class():
    """``keras.Model``."""
    return _registered["Model"]


def sequential_class():
    """``keras.Sequential``."""
    return _registered["Sequential"]
