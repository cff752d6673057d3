"""What a SavedModel directory gpuaccel writes holds besides TensorFlow's own files, shared by
the writer (``_saved_model_writer``, which needs TensorFlow) and the reader
(``_saved_model_reader``, which does not).

TensorFlow's loader reads ``saved_model.pb`` and ``variables/``; ``assets.extra/`` is the folder
TensorFlow leaves to "higher-level libraries and users" for files the graph does not use (TF
Serving keeps its warm-up requests there), so gpuaccel keeps two files there:

- ``gpuaccel_model.keras``: the model's ``.keras`` archive, from which gpuaccel rebuilds the
  model natively (TensorFlow's graph needs TensorFlow's kernels to run);
- ``gpuaccel_signatures.json``: the signature keys, input and output names TensorFlow wrote
  (read from ``saved_model.pb`` at save time) and which model input or output each name is, so
  the loaded object answers with TensorFlow's names without TensorFlow.
"""
import os

SAVED_MODEL_FILENAME_PB = "saved_model.pb"
SAVED_MODEL_FILENAME_PBTXT = "saved_model.pbtxt"
EXTRA_ASSETS_DIRECTORY = "assets.extra"
ARCHIVE_FILENAME = "gpuaccel_model.keras"
SIGNATURES_FILENAME = "gpuaccel_signatures.json"
DEFAULT_SERVING_SIGNATURE_DEF_KEY = "serving_default"
SERVING = "serve"


def contains_saved_model(export_dir):
    """``tf.saved_model.contains_saved_model``: whether ``export_dir`` is a directory holding a
    SavedModel's graph file."""
    export_dir = os.fspath(export_dir)
    return os.path.isdir(export_dir) and any(
        os.path.isfile(os.path.join(export_dir, name))
        for name in (SAVED_MODEL_FILENAME_PB, SAVED_MODEL_FILENAME_PBTXT))


def archive_path(export_dir):
    return os.path.join(export_dir, EXTRA_ASSETS_DIRECTORY, ARCHIVE_FILENAME)


def signatures_path(export_dir):
    return os.path.join(export_dir, EXTRA_ASSETS_DIRECTORY, SIGNATURES_FILENAME)
