"""``tf.io.parse_single_example`` / ``parse_example`` and their feature specs
(``FixedLenFeature``, ``FixedLenSequenceFeature``; ``VarLenFeature`` and friends are refused).

Why it exists: the tutorial input pipeline is ``TFRecordDataset(files).map(parse_fn)``, where
``parse_fn`` turns one serialized ``tf.train.Example`` into a dict of tensors. The serialized
record is Python ``bytes`` here (gpuaccel has no string tensors), parsed with the real protobuf
message (``_example_proto``) and checked as TensorFlow checks it, with its error texts.

What comes back: float32 and int64 features are gpuaccel tensors of the spec's shape (a leading
batch axis from ``parse_example``); string features stay on the host, ``bytes`` for shape ``()``
and a NumPy object array of ``bytes`` otherwise (what TF's ``.numpy()`` returns for them).

``VarLenFeature`` (TF: a SparseTensor), ``SparseFeature`` and ``RaggedFeature`` need sparse or
ragged tensors, which gpuaccel does not have: parsing with them raises ``UnimplementedError``
naming the dense spec to use instead.
"""
import collections
import math

import numpy as np
from google.protobuf.message import DecodeError

from . import errors
from ._host_strings import string_leaf
from ._example_proto import Example
from ._tensor import tensor as _to_tensor

__all__ = ["FixedLenFeature", "FixedLenSequenceFeature", "VarLenFeature", "SparseFeature",
           "RaggedFeature", "parse_single_example", "parse_example", "feature_dtype",
           "record_bytes"]


class FixedLenFeature(collections.namedtuple("FixedLenFeature",
                                             ["shape", "dtype", "default_value"])):
    """A feature of a fixed number of values, returned with ``shape``; ``default_value`` (of
    that shape) stands in when an example lacks it, else the example is an error."""
    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """A feature holding any number of values of ``shape``: returned as ``[n, *shape]``
    (``parse_example`` pads the batch's shorter ones with ``default_value``, else 0 or b"")."""
    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """TF's variable-length feature (parsed to a SparseTensor): refused when parsing."""
    __slots__ = ()


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """TF's sparse feature (parsed to a SparseTensor): refused when parsing."""
    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """TF's ragged feature (parsed to a RaggedTensor): refused when parsing."""
    __slots__ = ()

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype="int32",
                validate=False):
        return super().__new__(cls, dtype, value_key, partitions, row_splits_dtype, validate)


# dtype name -> (Feature's oneof field, TF's name of it in errors, NumPy type)
_KINDS = {"float32": ("float_list", "float", np.float32),
          "int64": ("int64_list", "int64", np.int64),
          "string": ("bytes_list", "string", object)}
_KIND_NAMES = {field: tf_name for field, tf_name, _ in _KINDS.values()}


def feature_dtype(dtype):
    """'float32', 'int64' or 'string' for a feature spec's dtype: a gpuaccel or TF dtype, a
    NumPy type, a name, or ``bytes``/``str``/``object`` for strings (gpuaccel has no
    ``tf.string`` dtype object)."""
    if dtype in (bytes, str, object):
        return "string"
    name = dtype if isinstance(dtype, str) else getattr(dtype, "name", None)
    if name is None:
        try:
            name = np.dtype(dtype).name
        except TypeError:
            name = repr(dtype)
    if name == "object" or name.startswith(("bytes", "str")):
        name = "string"
    if name == "float":
        name = "float32"
    if name not in _KINDS:
        raise errors.InvalidArgumentError(
            f"Value for attr 'Tdense' of {name} is not in the list of allowed values: float, "
            "int64, string (a feature's dtype must be float32, int64 or string: cast after "
            "parsing)")
    return name


def record_bytes(value, what="serialized"):
    """A serialized record as ``bytes``: bytes-like, str (UTF-8), or a 0-d NumPy/.numpy() value."""
    if hasattr(value, "numpy") and not isinstance(value, (bytes, np.ndarray)):
        value = value.numpy()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        value = value.item()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8")
    raise TypeError(f"{what} must be a serialized record (bytes), got {type(value).__name__}")


def _check_features(features):
    if features is None:
        raise ValueError("Invalid argument: features cannot be None.")
    if not features:
        raise ValueError("Invalid argument: features cannot be empty.")
    specs = {}
    for key, spec in features.items():
        if isinstance(spec, (VarLenFeature, SparseFeature, RaggedFeature)):
            raise errors.UnimplementedError(
                f"Feature {key}: {type(spec).__name__} parses to a "
                f"{'RaggedTensor' if isinstance(spec, RaggedFeature) else 'SparseTensor'}, and "
                "gpuaccel has no sparse or ragged tensors. Use FixedLenFeature(shape, dtype) when "
                "every example has the same number of values, or FixedLenSequenceFeature([], "
                "dtype, allow_missing=True) for a dense 1-D result (what tf.sparse.to_dense gives "
                "for one example; parse_example pads the batch).")
        if not isinstance(spec, (FixedLenFeature, FixedLenSequenceFeature)):
            raise TypeError(f"Feature {key}: expected a FixedLenFeature or "
                            f"FixedLenSequenceFeature, got {type(spec).__name__}")
        shape = tuple(spec.shape) if spec.shape is not None else None
        if shape is None or any(d is None for d in shape):
            if isinstance(spec, FixedLenFeature):
                raise ValueError(f"First dimension of shape for feature {key} unknown. Consider "
                                 f"using FixedLenSequenceFeature. Received feature={spec}.")
            raise ValueError(f"Feature {key}: FixedLenSequenceFeature's shape must be fully "
                             f"defined (the shape of one item), got {spec.shape}")
        if isinstance(spec, FixedLenSequenceFeature) and not spec.allow_missing:
            raise ValueError("Unsupported: FixedLenSequenceFeature requires allow_missing to be "
                             "True.")
        specs[key] = (spec, tuple(int(d) for d in shape), feature_dtype(spec.dtype))
    return specs


def _parse_proto(serialized, name):
    try:
        return Example.FromString(serialized)
    except DecodeError:
        raise errors.InvalidArgumentError(
            f"Could not parse example input, value: '{serialized[:64]!r}'"
            f"{'' if name is None else f' (Name: {name})'}; records given to parse_example "
            "must be serialized tf.train.Example messages") from None


def _values(feature, key, dtype, where):
    """The values of ``feature`` as a 1-D NumPy array of ``dtype``'s type."""
    field, tf_name, numpy_type = _KINDS[dtype]
    kind = feature.WhichOneof("kind")
    if kind is not None and kind != field:
        raise errors.InvalidArgumentError(
            f"{where}Key: {key}.  Data types don't match. Data type: {_KIND_NAMES[kind]} but "
            f"expected type: {tf_name}")
    values = getattr(feature, field).value if kind is not None else []
    if numpy_type is object:
        out = np.empty(len(values), dtype=object)
        out[:] = [bytes(v) for v in values]
        return out
    return np.array(values, dtype=numpy_type)


def _default(spec, shape, dtype, key):
    numpy_type = _KINDS[dtype][2]
    if numpy_type is object:
        flat = np.asarray(spec.default_value, dtype=object).reshape(-1)
        default = np.empty(flat.shape, dtype=object)
        default[:] = [record_bytes(v, f"Feature {key}: default_value") for v in flat]
    else:
        default = np.asarray(spec.default_value, dtype=numpy_type).reshape(-1)
    size = math.prod(shape)
    if default.size != size:
        raise errors.InvalidArgumentError(
            f"Feature {key}: Input to reshape is a tensor with {default.size} values, but the "
            f"requested shape has {size} (default_value must have the feature's shape "
            f"{list(shape)})")
    return default.reshape(shape)


def _parse_one(example, specs, name):
    """{key: NumPy array} for one parsed Example; sequence features come back 2-D+ unpadded."""
    where = "" if name is None else f"Name: {name}, "
    features = example.features.feature
    out = {}
    for key, (spec, shape, dtype) in specs.items():
        size = math.prod(shape)
        if key not in features:
            if isinstance(spec, FixedLenSequenceFeature):
                out[key] = np.empty((0, *shape), dtype=_KINDS[dtype][2])
            elif spec.default_value is None:
                raise errors.InvalidArgumentError(
                    f"{where}Feature: {key} (data type: {_KINDS[dtype][1]}) is required but "
                    "could not be found.")
            else:
                out[key] = _default(spec, shape, dtype, key)
            continue
        values = _values(features[key], key, dtype, where)
        if isinstance(spec, FixedLenSequenceFeature):
            if (size == 0 and values.size) or (size and values.size % size):
                raise errors.InvalidArgumentError(
                    f"{where}Key: {key}, Index: 0.  Number of {_KINDS[dtype][1]} values % "
                    f"{size} != 0 ({values.size} values do not make whole items of shape "
                    f"{list(shape)}).")
            out[key] = values.reshape((values.size // size if size else 0, *shape))
        else:
            if values.size != size:
                raise errors.InvalidArgumentError(
                    f"{where}Key: {key}.  Can't parse serialized Example: the feature has "
                    f"{values.size} values, but FixedLenFeature shape {list(shape)} needs {size}.")
            out[key] = values.reshape(shape)
    return out


def _output(array):
    if array.dtype == object:  # strings: a HostString / HostStrings, as Datasets carry them
        return string_leaf(array)
    return _to_tensor(array)


def parse_single_example(serialized, features, name=None, example_names=None):
    """``tf.io.parse_single_example``: {key: value} of one serialized ``tf.train.Example``
    (float32/int64 features as tensors, string features as bytes / object arrays of bytes)."""
    specs = _check_features(features)
    data = record_bytes(serialized)
    label = None if example_names is None else record_bytes(example_names).decode()
    parsed = _parse_one(_parse_proto(data, label), specs, label)
    return {key: _output(value) for key, value in parsed.items()}


def _pad(arrays, spec, shape, dtype, key):
    """The batch's sequence features padded to the longest, with the spec's default."""
    longest = max((a.shape[0] for a in arrays), default=0)
    numpy_type = _KINDS[dtype][2]
    if spec.default_value is None:
        fill = b"" if numpy_type is object else 0
    elif np.ndim(spec.default_value) != 0:
        raise errors.InvalidArgumentError(
            f"Feature {key}: a FixedLenSequenceFeature's default_value pads single values and "
            f"must be a scalar, got shape {list(np.shape(spec.default_value))}")
    elif numpy_type is object:
        fill = record_bytes(spec.default_value, f"Feature {key}: default_value")
    else:
        fill = numpy_type(spec.default_value)
    out = np.full((len(arrays), longest, *shape), fill, dtype=numpy_type)
    for i, a in enumerate(arrays):
        out[i, :a.shape[0]] = a
    return out


def parse_example(serialized, features, name=None, example_names=None):
    """``tf.io.parse_example``: a batch (a list or 1-D array of serialized ``tf.train.Example``)
    parsed to {key: values with a leading batch axis}."""
    specs = _check_features(features)
    if isinstance(serialized, (bytes, str)) or (isinstance(serialized, np.ndarray)
                                                and serialized.ndim == 0):
        return parse_single_example(serialized, features, name, example_names)
    records = [record_bytes(r) for r in np.asarray(serialized, dtype=object).reshape(-1)]
    names = ([record_bytes(n).decode() for n in np.asarray(example_names, dtype=object).reshape(-1)]
             if example_names is not None else ["<unknown>"] * len(records))
    parsed = [_parse_one(_parse_proto(r, n), specs, n) for r, n in zip(records, names)]
    out = {}
    for key, (spec, shape, dtype) in specs.items():
        column = [p[key] for p in parsed]
        if isinstance(spec, FixedLenSequenceFeature):
            stacked = _pad(column, spec, shape, dtype, key)
        else:
            stacked = np.stack(column) if column else np.empty((0, *shape), _KINDS[dtype][2])
        out[key] = _output(stacked)
    return out
