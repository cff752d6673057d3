"""``tf.io.decode_csv``: CSV lines to columns, with TensorFlow's quoting rules, defaults and
errors.

Why it exists: tutorials read CSV files line by line (``TextLineDataset(...).map(decode)``) or
hand ``decode_csv`` a list of lines. Python's ``csv`` module accepts what TF rejects (a quote
inside an unquoted field, text after a closing quote), so the few rules are written out here to
fail where TF fails.

Column types come from ``record_defaults``: each entry is a one-value list (``[0]`` int32,
``[0.0]`` float32, ``[""]`` string, or an int64 tensor/array) that fills empty fields, or an
empty tensor of a dtype (``tf.constant([], tf.float32)``) for a required column. Numeric columns
come back as gpuaccel tensors of the records' shape; string columns stay on the host, ``bytes``
for one record and a NumPy object array of ``bytes`` for several (gpuaccel has no string
tensors). float64 defaults give float32 columns (gpuaccel has no float64).
"""
import re

import numpy as np

from . import errors
from ._host_strings import string_leaf
from ._example_parsing import record_bytes
from ._tensor import Tensor, tensor as _to_tensor
from .dtypes import DType

__all__ = ["decode_csv", "column_types", "RowParser", "column_values"]

_INT_LIMITS = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}
# What TF's number parsers accept: optional surrounding spaces, no digit separators, no hex.
_INTEGER = re.compile(rb"\s*[+-]?\d+\s*")
_FLOAT = re.compile(rb"\s*[+-]?(\d+\.?\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|nan|inf|infinity)\s*",
                    re.IGNORECASE)
_NUMPY_TYPES = {"int32": np.int32, "int64": np.int64, "float32": np.float32, "string": object}
_TF_NAMES = {"float32": "float", "int32": "int32", "int64": "int64", "string": "string"}


def _default_entry(default, index, dtype_means_required):
    """(dtype name, default value or None when the column is required) of one record_default."""
    if dtype_means_required and (default is bytes or default is str):
        return "string", None
    if dtype_means_required and isinstance(default, DType):
        return default.name, None
    if isinstance(default, Tensor):
        array, dtype_name = default.numpy(), default.dtype.name
    else:
        array = np.asarray(default, dtype=object if isinstance(default, (str, bytes)) else None)
        if array.dtype.kind in "SUO":
            array, dtype_name = array.astype(object), "string"
        elif array.size == 0 and array.dtype == np.float64:
            dtype_name = "float32"  # TF converts [] to an empty float32 tensor
        elif array.dtype.kind == "f":
            dtype_name = "float32"
        elif array.dtype.kind in "iu":
            # Python ints are int32 in TF; an int64 NumPy array stays int64 only when asked for
            dtype_name = "int64" if (array.dtype == np.int64 and not _is_python_ints(default)) \
                else "int32"
        else:
            raise TypeError(f"decode_csv: record_defaults[{index}] has dtype {array.dtype}; "
                            "columns are int32, int64, float32 or string")
    if dtype_name not in _NUMPY_TYPES:
        raise TypeError(f"decode_csv: record_defaults[{index}] has dtype {dtype_name}; columns "
                        "are int32, int64, float32 or string")
    flat = array.reshape(-1)
    if flat.size > 1:
        raise errors.InvalidArgumentError(
            f"There should only be 1 default per field but field {index} has {flat.size}",
            "DecodeCSV")
    if flat.size == 0:
        return dtype_name, None
    value = flat[0]
    return dtype_name, (record_bytes(value) if dtype_name == "string"
                        else _NUMPY_TYPES[dtype_name](value))


def _is_python_ints(default):
    values = default if isinstance(default, (list, tuple)) else [default]
    return all(isinstance(v, int) for v in values)


def column_types(record_defaults, dtype_means_required=False):
    """[(dtype name, default or None)] for ``record_defaults``; with ``dtype_means_required``
    (CsvDataset) an entry may also be a dtype (``bytes``/``str`` for strings): a required
    column of that type."""
    if not isinstance(record_defaults, (list, tuple)):
        raise TypeError("decode_csv: record_defaults must be a list with one entry per column, "
                        f"got {type(record_defaults).__name__}")
    return [_default_entry(d, i, dtype_means_required) for i, d in enumerate(record_defaults)]


def _split(record, delim, use_quote_delim):
    """The fields of one CSV record (bytes), unquoted, as TF's DecodeCSV splits them."""
    if not use_quote_delim or b'"' not in record:
        return record.split(delim)
    fields, i, n = [], 0, len(record)
    while True:
        if i < n and record[i:i + 1] == b'"':
            i += 1
            field = bytearray()
            while True:
                if i >= n:
                    raise errors.InvalidArgumentError(
                        "Quoted field has to end with quote followed by delim or end",
                        "DecodeCSV")
                if record[i:i + 1] == b'"':
                    if record[i + 1:i + 2] == b'"':
                        field += b'"'
                        i += 2
                        continue
                    if i + 1 < n and record[i + 1:i + 2] != delim:
                        raise errors.InvalidArgumentError(
                            "Quote inside a string has to be escaped by another quote",
                            "DecodeCSV")
                    i += 1
                    break
                field += record[i:i + 1]
                i += 1
            fields.append(bytes(field))
        else:
            end = record.find(delim, i)
            end = n if end < 0 else end
            field = record[i:end]
            if b'"' in field:
                raise errors.InvalidArgumentError("Unquoted fields cannot have quotes inside",
                                                  "DecodeCSV")
            fields.append(field)
            i = end
        if i >= n:
            return fields
        i += 1  # the delimiter
        if i == n:
            fields.append(b"")
            return fields


def _convert(text, dtype_name, column, label):
    if dtype_name == "string":
        return text
    pattern = _FLOAT if dtype_name == "float32" else _INTEGER
    if pattern.fullmatch(text):
        if dtype_name == "float32":
            with np.errstate(over="ignore"):  # beyond float32's range is inf, as in TF
                return np.float32(float(text))
        value = int(text)
        low, high = _INT_LIMITS[dtype_name]
        if low <= value <= high:
            return value
    raise errors.InvalidArgumentError(
        f"Field {column} in record{label} is not a valid {_TF_NAMES[dtype_name]}: "
        f"{text.decode('utf-8', 'replace')}", "DecodeCSV")


def _check_select_cols(select_cols, n_defaults):
    if select_cols is None:
        return None
    cols = [int(c) for c in select_cols]
    if any(c < 0 for c in cols):
        raise ValueError("select_cols contains negative values.")
    if any(b <= a for a, b in zip(cols, cols[1:])):
        raise ValueError("select_cols is not strictly increasing.")
    if len(cols) != n_defaults:
        raise ValueError("Length of select_cols and record_defaults do not match.")
    return cols


class RowParser:
    """Splits and converts CSV records as TF's DecodeCSV / CsvDataset do: ``parse(line, label)``
    gives one Python value (int, float or bytes) per column; ``label`` names the record in
    errors (" 0" -> "in record 0", "" -> "in record")."""

    def __init__(self, types, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None):
        self.types = types
        self._cols = _check_select_cols(select_cols, len(types))
        self._excluded = set(int(c) for c in exclude_cols) if exclude_cols is not None else None
        delim = record_bytes(field_delim, "field_delim")
        if len(delim) != 1:
            raise errors.InvalidArgumentError(
                f"field_delim should be only 1 char, got {field_delim!r}", "DecodeCSV")
        self._delim, self._quoted = delim, bool(use_quote_delim)
        self._na = record_bytes(na_value, "na_value")

    def _picked(self, fields, label):
        if self._cols is not None:
            if len(fields) <= self._cols[-1]:
                raise errors.InvalidArgumentError(
                    f"Expect {self._cols[-1] + 1} fields but have {len(fields)} in record{label}",
                    "DecodeCSV")
            return [fields[c] for c in self._cols]
        if self._excluded is not None:
            fields = [f for i, f in enumerate(fields) if i not in self._excluded]
        if len(fields) != len(self.types):
            raise errors.InvalidArgumentError(
                f"Expect {len(self.types)} fields but have {len(fields)} in record{label}",
                "DecodeCSV")
        return fields

    def parse(self, line, label):
        values = []
        fields = self._picked(_split(line, self._delim, self._quoted), label)
        for j, (text, (dtype_name, default)) in enumerate(zip(fields, self.types)):
            if text == b"" or text == self._na:
                if default is None:
                    raise errors.InvalidArgumentError(
                        f"Field {j} is required but missing in record{label}!", "DecodeCSV")
                values.append(default)
            else:
                values.append(_convert(text, dtype_name, j, label))
        return values


def column_values(values, dtype_name, shape):
    """One column's values (Python numbers or bytes) as decode_csv returns them: a tensor of
    ``shape``, or for strings bytes (shape ()) / a NumPy object array of bytes."""
    if dtype_name == "string":
        column = np.empty(len(values), dtype=object)
        column[:] = values
        column = column.reshape(shape)
        return string_leaf(column)
    return _to_tensor(np.asarray(values, dtype=_NUMPY_TYPES[dtype_name]).reshape(shape))


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, na_value="",
               select_cols=None, name=None):
    """``tf.io.decode_csv``: a list with one value per column (``select_cols`` picks columns),
    each of ``records``' shape (a string, or a list/array of strings)."""
    parser = RowParser(column_types(record_defaults), field_delim, use_quote_delim, na_value,
                       select_cols)
    single = isinstance(records, (bytes, str)) or (isinstance(records, np.ndarray)
                                                   and records.ndim == 0)
    array = np.asarray(records if not single else [records], dtype=object)
    lines = [record_bytes(r, "decode_csv: records") for r in array.reshape(-1)]
    rows = [parser.parse(line, f" {r}") for r, line in enumerate(lines)]
    shape = () if single else array.shape
    return [column_values([row[j] for row in rows], dtype_name, shape)
            for j, (dtype_name, _) in enumerate(parser.types)]
