"""Loads a SavedModel gpuaccel wrote (``tf.saved_model.load``, Keras's ``TFSMLayer``) as an
object that runs on gpuaccel, without TensorFlow: the model comes back from the ``.keras``
archive the writer left in ``assets.extra/``, and the signature names TensorFlow wrote come from
the JSON beside it (``_saved_model_format``).

A SavedModel TensorFlow wrote alone is a graph of TensorFlow ops that only TensorFlow's kernels
run; gpuaccel refuses it with :class:`ForeignSavedModelError`, which says what to do instead
(docs/training.md, "TensorFlow SavedModels", gives the reasons).
"""
import json
import os

from .. import nest
from .._convert import convert_to_tensor
from .._tensor_spec import TensorSpec
from ..errors import DataLossError
from . import _keras_archive
from . import _saved_model_format as fmt


class ForeignSavedModelError(NotImplementedError):
    """A SavedModel that TensorFlow wrote without gpuaccel: it holds no model gpuaccel can run."""


def _spec(entry):
    return TensorSpec(entry["shape"], entry["dtype"], entry["name"])


def _check_input(spec, value, signature):
    value = convert_to_tensor(value)
    shape = tuple(value.shape)
    if spec.shape is not None and (len(shape) != len(spec.shape) or any(
            want is not None and want != got for want, got in zip(spec.shape, shape))):
        raise ValueError(f"signature {signature!r}: input {spec.name!r} must have shape "
                         f"{spec.shape} (None: any size); got shape {shape}")
    return value


class SignatureFunction:
    """One entry of ``loaded.signatures``: called with TensorFlow's input names as keywords (or
    the inputs in order), it returns a dict keyed by TensorFlow's output names."""

    def __init__(self, model, key, signature):
        self._model, self.name = model, key
        self._inputs = [_spec(entry) for entry in signature["inputs"]]
        self._outputs = [_spec(entry) for entry in signature["outputs"]]

    @property
    def structured_input_signature(self):
        return (), {spec.name: spec for spec in self._inputs}

    @property
    def structured_outputs(self):
        return {spec.name: spec for spec in self._outputs}

    def __call__(self, *args, **kwargs):
        names = [spec.name for spec in self._inputs]
        if args and kwargs:
            raise TypeError(f"signature {self.name!r} takes its inputs either all by keyword "
                            f"({', '.join(names)}) or all in that order, not both")
        if args:
            if len(args) != len(names):
                raise TypeError(f"signature {self.name!r} takes {len(names)} input(s) "
                                f"({', '.join(names)}); got {len(args)}")
            kwargs = dict(zip(names, args))
        unknown, missing = sorted(set(kwargs) - set(names)), [n for n in names if n not in kwargs]
        if unknown or missing:
            raise TypeError(f"signature {self.name!r} takes the keyword inputs "
                            f"{', '.join(names)}; got {', '.join(sorted(kwargs)) or 'none'}")
        tensors = [_check_input(spec, kwargs[spec.name], self.name) for spec in self._inputs]
        flat = nest.flatten(self._model(
            tensors[0] if len(tensors) == 1 else tensors, training=False))
        return {spec.name: value for spec, value in zip(self._outputs, flat)}

    def __repr__(self):
        return f"<SignatureFunction {self.name!r} inputs={[s.name for s in self._inputs]}>"


class _Endpoint:
    """An endpoint Keras's export adds (``serve``): the model's call for inference, taking and
    returning the model's own structures."""

    def __init__(self, model, name):
        self._model, self.name = model, name

    def __call__(self, inputs):
        return self._model(inputs, training=False)


class LoadedSavedModel:
    """What ``tf.saved_model.load`` returns for a SavedModel gpuaccel wrote, running on gpuaccel:
    ``signatures``, the endpoints the writer recorded (``serve`` after ``model.export``), the
    variables, and (as TensorFlow's loaded Keras 2 models were) callable as the model."""

    def __init__(self, model, metadata):
        self._model = model
        self.signatures = {key: SignatureFunction(model, key, signature)
                           for key, signature in metadata["signatures"].items()}
        self.tensorflow_version = metadata.get("tensorflow_version")
        for name in metadata.get("endpoints", []):
            setattr(self, name, _Endpoint(model, name))

    def __call__(self, inputs, training=False):
        return self._model(inputs, training=training)

    @property
    def variables(self):
        return list(self._model.weights)

    @property
    def trainable_variables(self):
        return list(self._model.trainable_weights)

    @property
    def non_trainable_variables(self):
        return list(self._model.non_trainable_weights)

    def __repr__(self):
        return f"<LoadedSavedModel of {self._model.name!r}, signatures={list(self.signatures)}>"


def _read_metadata(export_dir):
    path = fmt.signatures_path(export_dir)
    try:
        with open(path) as f:
            metadata = json.load(f)
    except FileNotFoundError:
        raise DataLossError(f"{export_dir!r} holds gpuaccel's model archive but not "
                            f"{fmt.EXTRA_ASSETS_DIRECTORY}/{fmt.SIGNATURES_FILENAME}; save the "
                            "model again", "saved_model.load", path) from None
    except ValueError as error:
        raise DataLossError(f"{path!r} is not JSON ({error}); save the model again",
                            "saved_model.load", path) from None
    return metadata


def load(export_dir, tags=None, options=None, what="tf.saved_model.load"):
    """The SavedModel at ``export_dir`` (written by gpuaccel) as a :class:`LoadedSavedModel`."""
    export_dir = os.fspath(export_dir)
    if os.path.exists(export_dir) and not os.path.isdir(export_dir):
        raise NotADirectoryError(f"{what}: {export_dir!r} is a file; a SavedModel is a "
                                 f"directory holding {fmt.SAVED_MODEL_FILENAME_PB}")
    if not fmt.contains_saved_model(export_dir):
        raise FileNotFoundError(f"{what}: SavedModel file does not exist at: "
                                f"{os.path.join(export_dir, fmt.SAVED_MODEL_FILENAME_PB)}")
    if not os.path.isfile(fmt.archive_path(export_dir)):
        raise ForeignSavedModelError(
            f"{what}: {export_dir!r} is a SavedModel TensorFlow wrote, a graph of TensorFlow "
            "ops that gpuaccel does not run. Load it with TensorFlow itself "
            "(import tensorflow as tf; tf.saved_model.load(path)), or save the model from "
            "gpuaccel (tf.saved_model.save / model.export in gpuaccel) or as a Keras archive "
            "(model.save('x.keras'), then keras.models.load_model)")
    metadata = _read_metadata(export_dir)
    if tags is not None:
        wanted = {tags} if isinstance(tags, str) else set(tags)
        if not wanted <= set(metadata.get("tags", [])):
            raise ValueError(f"{what}: {export_dir!r} has no MetaGraph with tags "
                             f"{sorted(wanted)}; its tags are {metadata.get('tags')}")
    return LoadedSavedModel(_keras_archive.load_model(fmt.archive_path(export_dir)), metadata)
