"""Tensors to and from bytes: ``tf.io.serialize_tensor`` / ``parse_tensor`` (TensorFlow's
``TensorProto``) and ``tf.io.decode_raw`` (an array's raw memory).

Why it exists: TFRecord tutorials store whole arrays in a ``BytesList`` feature, either as a
serialized ``TensorProto`` or as the array's raw bytes, and read them back in the parse
function. Both must be TensorFlow's bytes, so files move between the two libraries.

The ``TensorProto`` message is TensorBoard's copy of TF's tensor.proto (same field numbers, so
the same bytes); numbers travel in ``tensor_content`` (little-endian memory), as TF writes them,
and strings in ``string_val``. gpuaccel's numeric dtypes are float32, float16, bfloat16, float64,
int8, int16, int32, int64, uint8 and bool; a ``TensorProto`` of another dtype (uint16, complex...)
is refused with a TypeError naming it.
"""
import numpy as np
from google.protobuf.message import DecodeError

from . import errors
from ._host_strings import string_leaf
from ._example_parsing import record_bytes
from ._tensor import Tensor, tensor as _to_tensor
from .dtypes import as_dtype

__all__ = ["serialize_tensor", "parse_tensor", "decode_raw"]

# TF's DataType enum values (types.proto) of the dtypes a gpuaccel tensor or string can hold.
_DATA_TYPES = {"float32": 1, "float64": 2, "int32": 3, "uint8": 4, "int16": 5, "int8": 6,
               "string": 7, "int64": 9,
               "bool": 10, "bfloat16": 14, "float16": 19}
_DATA_TYPE_NAMES = {1: "float", 2: "double", 3: "int32", 4: "uint8", 5: "int16", 6: "int8",
                    7: "string", 9: "int64", 10: "bool", 14: "bfloat16", 17: "uint16",
                    19: "half", 22: "uint32", 23: "uint64"}
_TF_NAMES = {"float32": "float", "float16": "half", "float64": "double"}


def _tensor_pb2():
    from tensorboard.compat.proto import tensor_pb2
    return tensor_pb2


def _numpy_type(dtype_name):
    """The NumPy type of a gpuaccel dtype name (bfloat16: ml_dtypes', when installed)."""
    numpy_type = as_dtype(dtype_name).as_numpy_dtype
    if numpy_type is None:
        raise TypeError(f"{dtype_name} needs the 'ml_dtypes' package for its NumPy type")
    return np.dtype(numpy_type)


def _is_string_array(array):
    return array.dtype.kind in "SUO"


def _as_array(value):
    """(NumPy array, dtype name) of a Tensor, array, number, bytes or list of bytes."""
    if isinstance(value, Tensor):
        return value.numpy(), value.dtype.name
    if isinstance(value, (bytes, str)):
        return np.array(value, dtype=object), "string"
    array = np.asarray(value)
    if _is_string_array(array):
        return array.astype(object), "string"
    if array.dtype == np.float64 and not isinstance(value, np.ndarray):
        array = array.astype(np.float32)  # TF's constant() of Python floats is float32
    return array, as_dtype(array.dtype).name


def _text(value):
    return value.encode("utf-8") if isinstance(value, str) else bytes(value)


def serialize_tensor(tensor, name=None):
    """``tf.io.serialize_tensor``: the ``TensorProto`` bytes of ``tensor`` (a gpuaccel tensor, a
    NumPy array or number, or bytes / an array of bytes for a string tensor)."""
    array, dtype_name = _as_array(tensor)
    proto = _tensor_pb2().TensorProto(dtype=_DATA_TYPES[dtype_name])
    proto.tensor_shape.SetInParent()  # TF writes the shape even for a scalar
    for size in array.shape:
        proto.tensor_shape.dim.add(size=int(size))
    if dtype_name == "string":
        proto.string_val.extend(_text(v) for v in array.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(array, array.dtype.newbyteorder("<")).tobytes()
    return proto.SerializeToString()


def _proto_values(proto, numpy_type, count):
    """A ``TensorProto``'s values from its typed repeated fields (TF's make_tensor_proto writes
    small tensors there; fewer values than elements repeat the last one)."""
    if proto.dtype == 1:
        values = list(proto.float_val)
    elif proto.dtype in (14, 19):
        values = list(proto.half_val)  # the 16-bit patterns
        bits = np.asarray(values, np.uint16)
        return _filled(bits.view(numpy_type), count)
    elif proto.dtype == 9:
        values = list(proto.int64_val)
    elif proto.dtype == 10:
        values = list(proto.bool_val)
    else:
        values = list(proto.int_val)
    return _filled(np.asarray(values, dtype=numpy_type), count)


def _filled(values, count):
    if values.size == count:
        return values
    if values.size == 0:
        return np.zeros(count, dtype=values.dtype)
    return np.concatenate([values, np.repeat(values[-1:], count - values.size)])


def parse_tensor(serialized, out_type, name=None):
    """``tf.io.parse_tensor``: the tensor in ``TensorProto`` bytes; ``out_type`` must be its
    dtype (InvalidArgumentError otherwise, as in TF). Strings come back as bytes / an object
    array of bytes."""
    data = record_bytes(serialized, "parse_tensor: serialized")
    try:
        proto = _tensor_pb2().TensorProto.FromString(data)
    except DecodeError:
        proto = None
    if proto is None or proto.dtype == 0:
        raise errors.InvalidArgumentError(
            f"Could not parse `serialized` as TensorProto: {data[:32]!r}", "ParseTensor")
    wanted = "string" if _is_string_type(out_type) else as_dtype(out_type).name
    if proto.dtype != _DATA_TYPES[wanted]:
        parsed = _DATA_TYPE_NAMES.get(proto.dtype, proto.dtype)
        raise errors.InvalidArgumentError(
            f"Type mismatch between parsed tensor ({parsed}) and dtype "
            f"({_TF_NAMES.get(wanted, wanted)})", "ParseTensor")
    shape = tuple(int(d.size) for d in proto.tensor_shape.dim)
    count = int(np.prod(shape, dtype=np.int64))
    if wanted == "string":
        values = np.empty(len(proto.string_val), dtype=object)
        values[:] = [bytes(v) for v in proto.string_val]
        values = values.reshape(shape)
        return string_leaf(values)
    numpy_type = _numpy_type(wanted)
    if proto.tensor_content:
        values = np.frombuffer(proto.tensor_content, numpy_type.newbyteorder("<"))
        if values.size != count:
            raise errors.InvalidArgumentError(
                f"TensorProto of shape {list(shape)} holds {values.size} values", "ParseTensor")
        values = values.astype(numpy_type)
    else:
        values = _proto_values(proto, numpy_type, count)
    return _to_tensor(values.reshape(shape), dtype=as_dtype(values.dtype))


def _is_string_type(dtype):
    if dtype in (bytes, str, object) or dtype == "string":
        return True
    return getattr(dtype, "name", None) == "string"


_RAW_TYPES = ("float16", "float32", "float64", "int8", "int16", "int32", "uint8", "int64", "bool",
              "bfloat16")


def decode_raw(input_bytes, out_type, little_endian=True, fixed_length=None, name=None):
    """``tf.io.decode_raw``: the bytes of ``input_bytes`` read as numbers of ``out_type``. A
    single bytes value gives a 1-D tensor; a list/array of them a tensor with one row per
    value (all of one size, unless ``fixed_length`` pads or cuts each to that many bytes)."""
    if _is_string_type(out_type):
        raise TypeError("decode_raw: out_type must be a numeric dtype (float16, float32, "
                        "bfloat16, int32, int64, uint8, bool), got string")
    dtype_name = as_dtype(out_type).name
    numpy_type = _numpy_type(dtype_name)
    if not little_endian:
        numpy_type = numpy_type.newbyteorder(">")
    item = numpy_type.itemsize
    single = isinstance(input_bytes, (bytes, bytearray, str)) or (
        isinstance(input_bytes, np.ndarray) and input_bytes.ndim == 0)
    values = [record_bytes(input_bytes, "decode_raw: input_bytes")] if single else [
        record_bytes(v, "decode_raw: input_bytes") for v in
        np.asarray(input_bytes, dtype=object).reshape(-1)]
    if fixed_length is not None:
        fixed_length = int(fixed_length)
        if fixed_length % item:
            raise errors.InvalidArgumentError(
                f"fixed_length ({fixed_length}) must be a multiple of the size of out_type "
                f"({item})", "DecodePaddedRaw")
        values = [v[:fixed_length].ljust(fixed_length, b"\0") for v in values]
    for i, v in enumerate(values):
        if len(v) % item:
            raise errors.InvalidArgumentError(
                f"Input to DecodeRaw has length {len(v)} that is not a multiple of {item}, the "
                f"size of {_TF_NAMES.get(dtype_name, dtype_name)}", "DecodeRaw")
        if len(v) != len(values[0]):
            raise errors.InvalidArgumentError(
                f"DecodeRaw requires input strings to all be the same size, but element {i} has "
                f"size {len(values[0])} != {len(v)}", "DecodeRaw")
    rows = [np.frombuffer(v, numpy_type).astype(numpy_type.newbyteorder("=")) for v in values]
    dtype = as_dtype(numpy_type)  # float64 stays float64
    if single:
        return _to_tensor(rows[0], dtype=dtype)
    shape = np.asarray(input_bytes, dtype=object).shape
    width = len(values[0]) // item if values else 0
    return _to_tensor(np.stack(rows).reshape((*shape, width)) if rows
                      else np.empty((*shape, width), numpy_type), dtype=dtype)
