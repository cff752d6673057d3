"""Writes a gpuaccel Keras model as a TensorFlow SavedModel: ``tf.saved_model.save(model, dir)``
and Keras 3's ``model.export(dir)``.

A SavedModel is a graph of TensorFlow ops plus a TensorFlow checkpoint, which only TensorFlow
writes (Keras 3 too needs TensorFlow to export from its JAX or PyTorch backends). So TensorFlow
is a soft dependency imported only here: the model goes through its ``.keras`` archive (which
real Keras loads, see ``_keras_archive``) into a real Keras model with the same weights, and
TensorFlow or Keras writes that, with the signatures they write for it. The archive stays in
the directory (``_saved_model_format``) so that gpuaccel loads the model back natively.

The directory is written under a temporary name next to ``export_dir`` and renamed into place,
so a failed save leaves no half-written SavedModel.
"""
import json
import os
import re
import shutil
import tempfile

from .. import nest
from . import _keras_archive, _model_classes
from . import _saved_model_format as fmt


def import_tensorflow(what):
    """TensorFlow and real Keras, or an ImportError saying how to get them."""
    try:
        import keras
        import tensorflow as tf
    except ImportError as error:
        raise ImportError(
            f"{what} writes a TensorFlow SavedModel, which only TensorFlow can write, and "
            f"TensorFlow is not installed ({error}): pip install tensorflow, or save the model "
            "as Keras's archive with model.save('x.keras'), which needs no TensorFlow") from None
    return tf, keras


def _check_model(obj, what):
    Model = _model_classes.model_class()
    if not isinstance(obj, Model):
        raise TypeError(f"{what} writes gpuaccel Keras models (keras.Sequential, a functional "
                        f"keras.Model); got {type(obj).__name__}. gpuaccel cannot trace other "
                        "Python objects into a TensorFlow graph")
    if obj._is_subclassed():
        raise NotImplementedError(
            f"{what}: {type(obj).__name__} is a subclassed model, whose call is Python code "
            "that real Keras cannot rebuild from gpuaccel's archive; build the same network as "
            "a Sequential or functional model, or save its weights with "
            "model.save_weights('x.weights.h5')")
    if not obj.built:
        raise ValueError(f"{what}: the model has not been built yet; call it on data or give "
                         "it an input shape first")


def _keras_twin(tf, keras, archive):
    """The real Keras model our archive describes (the archive holds its weights)."""
    if keras.backend.backend() != "tensorflow":
        raise RuntimeError(f"tf.saved_model.save needs Keras's TensorFlow backend to trace the "
                           f"model; Keras runs on {keras.backend.backend()!r}: set "
                           "KERAS_BACKEND=tensorflow before Python starts, or use "
                           "model.export(path), which works from any Keras backend")
    try:
        return keras.saving.load_model(archive, compile=False)
    except Exception as error:  # noqa: BLE001 - Keras's own error types vary by layer
        raise ValueError(f"real Keras could not rebuild this model from gpuaccel's .keras "
                         f"archive ({type(error).__name__}: {error}); a model with Python layer "
                         "classes needs the same classes registered in Keras") from error


def _tensorflow_spec(tf, spec):
    """A gpuaccel or Keras spec (anything with shape and dtype) as a ``tf.TensorSpec``."""
    if isinstance(spec, tf.TensorSpec) or not hasattr(spec, "shape"):
        return spec
    dtype = getattr(spec.dtype, "name", spec.dtype) or "float32"
    return tf.TensorSpec(spec.shape, dtype, getattr(spec, "name", None))


def _read_signature_defs(tf, export_dir):
    """{signature key: {"inputs"/"outputs": {name: {"shape", "dtype"}}}} from the written
    ``saved_model.pb``, and its tags."""
    from tensorflow.core.protobuf import saved_model_pb2
    proto = saved_model_pb2.SavedModel()
    with open(os.path.join(export_dir, fmt.SAVED_MODEL_FILENAME_PB), "rb") as f:
        proto.ParseFromString(f.read())
    graph = proto.meta_graphs[0]

    def specs(infos):
        return {name: {"shape": None if info.tensor_shape.unknown_rank else
                       [None if d.size < 0 else d.size for d in info.tensor_shape.dim],
                       "dtype": tf.dtypes.as_dtype(info.dtype).name}
                for name, info in infos.items()}

    return ({key: {"inputs": specs(sig.inputs), "outputs": specs(sig.outputs)}
             for key, sig in graph.signature_def.items()
             if not key.startswith("__saved_model")},  # TF's init op, not a signature
            list(graph.meta_info_def.tags))


def _index_suffix(name):
    """TensorFlow names a function's flat inputs ``inputs``, ``inputs_1``... and outputs
    ``output_0``, ``output_1``...: the position of ``name`` among them."""
    match = re.search(r"_(\d+)$", name)
    return int(match.group(1)) if match else 0


def _in_model_order(names, model_names):
    """``names`` ordered as the model's flat inputs or outputs: by the model's own names where
    TensorFlow used them (Keras's export names inputs after them; dict outputs keep their
    keys), else by TensorFlow's position suffix."""
    if set(names) == set(model_names):
        return list(model_names)
    if len(names) != len(model_names):
        raise ValueError(f"the SavedModel's signature names {sorted(names)} do not match the "
                         f"model's {len(model_names)} flat inputs/outputs")
    return sorted(names, key=_index_suffix)


def _flat_names(twin):
    """The Keras model's flat input names and flat output keys (a dict's sorted keys, as
    TensorFlow flattens it, else positions); gpuaccel's model has the same, in the same order."""
    graph = getattr(twin, "_functional", None) or twin  # a Sequential's graph, as Keras reads it
    outputs = graph.output
    keys = sorted(outputs) if isinstance(outputs, dict) else [
        str(i) for i in range(len(graph.outputs))]
    return [t.name for t in graph.inputs], keys


def _signature_metadata(tf, export_dir, twin, endpoints):
    defs, tags = _read_signature_defs(tf, export_dir)
    input_names, output_names = _flat_names(twin)

    def ordered(specs, model_names):
        return [dict(specs[name], name=name) for name in _in_model_order(list(specs), model_names)]

    return {"format": 1, "tags": tags, "endpoints": endpoints,
            "tensorflow_version": tf.__version__,
            "signatures": {key: {"inputs": ordered(d["inputs"], input_names),
                                 "outputs": ordered(d["outputs"], output_names)}
                           for key, d in defs.items()}}


def _move_into_place(staging, export_dir):
    """Renames the finished ``staging`` directory to ``export_dir``, replacing an old one."""
    old = None
    if os.path.isdir(export_dir):
        old = tempfile.mkdtemp(prefix=f".{os.path.basename(export_dir)}.old.",
                               dir=os.path.dirname(export_dir))
        os.rename(export_dir, os.path.join(old, "previous"))
    os.rename(staging, export_dir)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write(model, export_dir, what, save_with):
    """Writes ``model`` to ``export_dir``: ``save_with(tf, keras_twin, staging_dir)`` writes
    TensorFlow's files and returns the endpoint names the loaded object has."""
    tf, keras = import_tensorflow(what)
    _check_model(model, what)
    export_dir = os.path.abspath(os.fspath(export_dir))
    if os.path.exists(export_dir) and not os.path.isdir(export_dir):
        raise FileExistsError(f"{what}: {export_dir!r} is a file; a SavedModel is a directory")
    parent = os.path.dirname(export_dir)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=f".{os.path.basename(export_dir)}.{os.getpid()}.",
                               suffix=".tmp", dir=parent)
    try:
        archive = fmt.archive_path(staging)
        _keras_archive.save_model(model, archive)
        twin = _keras_twin(tf, keras, archive)
        endpoints = save_with(tf, twin, staging)
        metadata = _signature_metadata(tf, staging, twin, endpoints)
        with open(fmt.signatures_path(staging), "w") as f:
            json.dump(metadata, f, indent=1)
        os.chmod(staging, 0o755)  # mkdtemp makes it private; a SavedModel is meant to be shared
        _move_into_place(staging, export_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return export_dir


def save(obj, export_dir, signatures=None, options=None):
    """``tf.saved_model.save``: the signatures TensorFlow writes for the same Keras model (its
    ``serving_default``)."""
    if signatures is not None:
        raise NotImplementedError(
            "tf.saved_model.save(signatures=...): signatures are TensorFlow functions, which "
            "gpuaccel cannot trace; gpuaccel writes the serving_default signature TensorFlow "
            "writes for a Keras model. For another input signature use "
            "model.export(path, input_signature=[tf.TensorSpec(...)])")

    def save_with(tf, twin, staging):
        tf_options = options.to_tensorflow(tf) if hasattr(options, "to_tensorflow") else options
        tf.saved_model.save(twin, staging, options=tf_options)
        return []

    return write(obj, export_dir, "tf.saved_model.save", save_with)


EXPORT_FORMATS = ("tf_saved_model", "onnx", "openvino", "litert")


def export(model, filepath, format="tf_saved_model", verbose=None, input_signature=None,
           **kwargs):
    """Keras 3's ``model.export``: a SavedModel whose ``serve`` endpoint (and
    ``serving_default`` signature) runs the model for inference."""
    if format not in EXPORT_FORMATS:
        raise ValueError(f"Unrecognized format={format!r}: model.export supports "
                         f"{', '.join(EXPORT_FORMATS)}")
    if format != "tf_saved_model":
        raise NotImplementedError(f"model.export(format={format!r}) is not supported by "
                                  "gpuaccel; format='tf_saved_model' is")

    def save_with(tf, twin, staging):
        signature = None if input_signature is None else nest.map_structure(
            lambda spec: _tensorflow_spec(tf, spec), input_signature)
        twin.export(staging, format="tf_saved_model", verbose=verbose,
                    input_signature=signature, **kwargs)
        return ["serve"]

    return write(model, filepath, "model.export", save_with)
