"""Element types with the names TensorFlow and PyTorch use (``gpuaccel.float16``, ...).

Each dtype is a single ``DType`` instance that compares equal to its name, its aliases and the
matching NumPy dtype, so course code can pass ``'float16'``, ``np.float16`` or
``gpuaccel.float16`` wherever a dtype is expected. Names, sizes and parsing come from the C++
core (``gpuaccel._C``), so Python and C++ agree on them.
"""
import builtins

import numpy as np

from . import _C

try:  # ml_dtypes gives NumPy a bfloat16; optional.
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the environment
    _ml_dtypes = None

__all__ = ("DType", "as_dtype", "float32", "float16", "bfloat16", "float64", "double", "int8",
           "int16", "short", "int32", "int64", "uint8", "bool")

_NUMPY_TYPES = {
    "float32": np.float32,
    "float16": np.float16,
    "bfloat16": _ml_dtypes.bfloat16 if _ml_dtypes is not None else None,
    "float64": np.float64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "bool": np.bool_,
}


class DType:
    """One element type. Use the module's instances (``gpuaccel.float16``); don't construct."""

    __slots__ = ("_name", "_enum", "_itemsize", "_is_floating_point")

    def __init__(self, enum_value):
        self._enum = enum_value
        self._name = _C.dtype_name(enum_value)
        self._itemsize = _C.dtype_size(enum_value)
        self._is_floating_point = _C.dtype_is_floating(enum_value)

    @property
    def name(self):
        """The canonical name: 'float32', 'float16', 'bfloat16', 'float64', 'int32', 'int64', 'uint8',
        'bool'."""
        return self._name

    @property
    def itemsize(self):
        """Bytes per element (torch's ``dtype.itemsize``)."""
        return self._itemsize

    @property
    def size(self):
        """Bytes per element (TF's ``DType.size``)."""
        return self._itemsize

    @property
    def is_floating_point(self):
        """True for float32, float16, bfloat16 and float64 (torch's name)."""
        return self._is_floating_point

    @property
    def is_floating(self):
        """True for float32, float16, bfloat16 and float64 (TF's name)."""
        return self._is_floating_point

    @property
    def as_numpy_dtype(self):
        """The NumPy scalar type; for bfloat16 ``ml_dtypes.bfloat16``, or None without ml_dtypes."""
        return _NUMPY_TYPES[self._name]

    def __repr__(self):
        return "gpuaccel." + self._name

    __str__ = __repr__

    def __eq__(self, other):
        if isinstance(other, DType):
            return self is other
        try:
            return as_dtype(other) is self
        except (ValueError, TypeError):
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        # Equal to its name, so hashes like it: {'float16': x}[gpuaccel.float16] works.
        return hash(self._name)

    def __reduce__(self):
        return (as_dtype, (self._name,))


def _valid_names_text():
    return ", ".join(_C.dtype_names())


def _from_name(name):
    return _BY_NAME[_C.dtype_name(_C.parse_dtype(name))]


class StringMarker:
    """``tf.string``: TensorFlow's dtype of string tensors, which gpuaccel does not have (out of
    scope). String data -- file paths, file contents, serialized records, CSV text -- travels as
    Python ``bytes`` (``HostString``) through Datasets and the ``tf.io`` functions, and those take
    this marker where TensorFlow takes ``tf.string`` (``FixedLenFeature([], tf.string)``,
    ``decode_csv``'s defaults). Anything asking for a string tensor gets a ValueError saying
    so."""

    name = "string"
    is_floating = is_integer = is_bool = is_complex = False

    def __repr__(self):
        return "tf.string"

    def __reduce__(self):
        return "string"  # the module attribute: one marker per process


string = StringMarker()


def _string_tensors_refused(what):
    return ValueError(f"{what}: gpuaccel has no string tensors (tf.string); string data travels "
                      "as Python bytes/str (gpuaccel.io.read_file's HostString, Datasets of "
                      "paths): keep it on the host and convert what you compute with to numbers")


def as_dtype(type_value):
    """Converts a dtype name ('float16', 'half', 'bf16', ...), a ``DType``, or a NumPy dtype or
    scalar type (``np.float16``, ``np.dtype('int32')``) to a gpuaccel ``DType``.

    Anything else raises ValueError naming the valid dtypes.
    """
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, StringMarker) or type_value == "string":
        raise _string_tensors_refused("as_dtype(tf.string)")
    if isinstance(type_value, str):
        return _from_name(type_value)  # the core's ValueError quotes the name and lists all
    if type_value is builtins.float:  # TF maps Python float to float32
        return float32
    if type_value is not None and not isinstance(type_value, (int, float, complex)):
        try:
            np_dtype = np.dtype(type_value)
        except (TypeError, ValueError):
            np_dtype = None
        if np_dtype is not None and np_dtype.name in _BY_NAME:
            return _BY_NAME[np_dtype.name]
        if np_dtype is not None:
            raise ValueError(f"Cannot convert NumPy dtype '{np_dtype.name}' to a gpuaccel dtype. "
                             f"Valid dtypes: {_valid_names_text()}")
    raise ValueError(f"Cannot convert {type_value!r} to a gpuaccel dtype. "
                     f"Valid dtypes: {_valid_names_text()}")


_BY_NAME = {_C.dtype_name(e): DType(e) for e in (getattr(_C.DType, n) for n in _C.dtype_names())}

float32 = _BY_NAME["float32"]
float16 = _BY_NAME["float16"]
bfloat16 = _BY_NAME["bfloat16"]
# float64 (torch.double, tf.float64, NumPy's default float) is explicit here: NumPy float64
# arrays and Python floats become float32 unless float64 is asked for (Keras's floatx and JAX's
# default), and the oneDNN/cuDNN layer kernels (convolution, pooling, normalization) refuse it.
float64 = _BY_NAME["float64"]
double = float64

# The names of the floating dtypes, for `x._dtype_name in FLOATING_NAMES`.
FLOATING_NAMES = tuple(name for name, d in _BY_NAME.items() if d.is_floating_point)
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
short = int16  # torch.short
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
# The names of the integer dtypes (bool is not one), for `x._dtype_name in INTEGER_NAMES`.
INTEGER_NAMES = ("uint8", "int8", "int16", "int32", "int64")
bool = _BY_NAME["bool"]  # noqa: A001 - gpuaccel.bool, as torch.bool and tf.bool
