"""``tf.saved_model``: ``save`` writes a gpuaccel Keras model as a TensorFlow SavedModel (through
TensorFlow, a soft dependency: keras/_saved_model_writer.py), and ``load`` brings a SavedModel
gpuaccel wrote back to run on gpuaccel (keras/_saved_model_reader.py); the constants, options and
``contains_saved_model`` are TensorFlow's. docs/training.md, "TensorFlow SavedModels", says what
is supported."""
from ..keras import _saved_model_reader, _saved_model_writer
from ..keras._saved_model_format import (DEFAULT_SERVING_SIGNATURE_DEF_KEY, SAVED_MODEL_FILENAME_PB,
                                         SAVED_MODEL_FILENAME_PBTXT, SERVING, contains_saved_model)
from ..keras._saved_model_reader import ForeignSavedModelError, LoadedSavedModel
from ._options import LoadOptions, SaveOptions

__all__ = ["save", "load", "contains_saved_model", "SaveOptions", "LoadOptions",
           "DEFAULT_SERVING_SIGNATURE_DEF_KEY", "SERVING", "TRAINING", "GPU", "TPU",
           "ASSETS_DIRECTORY", "VARIABLES_DIRECTORY", "VARIABLES_FILENAME",
           "SAVED_MODEL_FILENAME_PB", "SAVED_MODEL_FILENAME_PBTXT", "SAVED_MODEL_SCHEMA_VERSION",
           "PREDICT_METHOD_NAME", "PREDICT_INPUTS", "PREDICT_OUTPUTS", "ForeignSavedModelError",
           "LoadedSavedModel"]

# TensorFlow's tag and file constants (tf.saved_model.*), the same strings
TRAINING = "train"
GPU = "gpu"
TPU = "tpu"
ASSETS_DIRECTORY = "assets"
VARIABLES_DIRECTORY = "variables"
VARIABLES_FILENAME = "variables"
SAVED_MODEL_SCHEMA_VERSION = 1
PREDICT_METHOD_NAME = "tensorflow/serving/predict"
PREDICT_INPUTS = "inputs"
PREDICT_OUTPUTS = "outputs"


def save(obj, export_dir, signatures=None, options=None):
    """``tf.saved_model.save(model, export_dir)`` for gpuaccel Keras models (Sequential and
    functional): TensorFlow's SavedModel, which TensorFlow, TF Serving and gpuaccel load.
    Needs TensorFlow installed; ``model.save('x.keras')`` does not."""
    if options is not None and not hasattr(options, "to_tensorflow") and not type(
            options).__module__.startswith("tensorflow"):
        raise TypeError(f"options must be a tf.saved_model.SaveOptions; got "
                        f"{type(options).__name__}")
    _saved_model_writer.save(obj, export_dir, signatures=signatures, options=options)


def load(export_dir, tags=None, options=None):
    """``tf.saved_model.load(export_dir)`` of a SavedModel gpuaccel wrote: an object with
    ``signatures['serving_default']`` (TensorFlow's input and output names), callable as the
    model, running on gpuaccel. A SavedModel TensorFlow wrote raises ForeignSavedModelError."""
    if options is not None and not isinstance(options, LoadOptions) and not type(
            options).__module__.startswith("tensorflow"):
        raise TypeError(f"options must be a tf.saved_model.LoadOptions; got "
                        f"{type(options).__name__}")
    return _saved_model_reader.load(export_dir, tags=tags, options=options)
