"""``tf.data.experimental.CsvDataset`` and ``make_csv_dataset``: CSV files as datasets.

Why it exists: the CSV tutorials (tensorflow/docs' load_data/csv, the Titanic and abalone
examples) read their files with these two. Records are split and converted by gpuaccel._csv's
RowParser, so values and errors are decode_csv's (TF's).

CsvDataset's elements are tuples with one value per column: a 0-d tensor for a numeric column,
``bytes`` for a string column (gpuaccel has no string tensors). ``make_csv_dataset`` batches
the rows itself, column by column (one tensor per numeric column, a NumPy object array of
``bytes`` per string column), into TF's ``OrderedDict`` of columns, or ``(features, label)``
with ``label_name``. Its inferred types follow TF's (int32, int64, float32, float64, string),
except that float64 columns are float32 here (gpuaccel has no float64). Files are read one
after another on the calling thread (``num_parallel_reads``, ``sloppy``, ``buffer_size`` and
``prefetch_buffer_size`` are accepted and have no effect), and the shuffle (``shuffle=True``,
the default) is gpuaccel's seeded shuffle, not TF's order.
"""
import collections
import csv
import glob
import io
import itertools
import os
import warnings

import numpy as np

from .. import _tfrecord, errors
from .._csv import RowParser, column_types, column_values
from .._tensor import tensor as _to_tensor
from ._file_datasets import _FileDataset, text_lines
from .dataset import UNKNOWN_CARDINALITY, _UnaryDataset

__all__ = ["CsvDataset", "make_csv_dataset"]


class _CsvRows(_FileDataset):
    """The rows of CSV files as lists of Python values (int, float, bytes), one per column;
    with ``skip_bad_rows``, rows that do not parse are dropped (make_csv_dataset's
    ignore_errors)."""

    def __init__(self, filenames, parser, compression_type, header, skip_bad_rows=False):
        super().__init__(filenames, compression_type)
        self._parser = parser
        self._header = bool(header)
        self._skip_bad_rows = skip_bad_rows

    def _read(self, path):
        for line in text_lines(path, self._compression)[1 if self._header else 0:]:
            try:
                yield self._parser.parse(line, "")
            except errors.InvalidArgumentError:
                if not self._skip_bad_rows:
                    raise


class CsvDataset(_CsvRows):
    """``tf.data.experimental.CsvDataset(filenames, record_defaults, compression_type=None,
    buffer_size=None, header=False, field_delim=',', use_quote_delim=True, na_value='',
    select_cols=None, exclude_cols=None)``: one tuple per record. ``record_defaults`` as in
    decode_csv, where a dtype (``bytes`` for strings) makes a required column."""

    def __init__(self, filenames, record_defaults, compression_type=None, buffer_size=None,
                 header=False, field_delim=",", use_quote_delim=True, na_value="",
                 select_cols=None, exclude_cols=None):
        if select_cols is not None and exclude_cols is not None:
            raise ValueError("Either select_cols or exclude_cols should be empty")
        parser = RowParser(column_types(record_defaults, dtype_means_required=True),
                           field_delim, use_quote_delim, na_value, select_cols, exclude_cols)
        super().__init__(filenames, parser, compression_type, header)

    def _elements(self):
        types = [dtype_name for dtype_name, _ in self._parser.types]
        for row in super()._elements():
            yield tuple(value if dtype_name == "string" else
                        _to_tensor(np.asarray(value, dtype=dtype_name))
                        for value, dtype_name in zip(row, types))


class _CsvBatches(_UnaryDataset):
    """make_csv_dataset's batches: ``batch_size`` rows as an OrderedDict of columns, or
    (features, label) when a label column is named."""

    def __init__(self, rows, batch_size, drop_remainder, names, types, label_name):
        super().__init__(rows)
        self._batch_size, self._drop_remainder = batch_size, drop_remainder
        self._names, self._types, self._label = names, types, label_name

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _elements(self):
        rows = iter(self._input._elements())
        while True:
            batch = list(itertools.islice(rows, self._batch_size))
            if not batch or (self._drop_remainder and len(batch) < self._batch_size):
                return
            features = collections.OrderedDict(
                (name, column_values([row[j] for row in batch], dtype_name, (len(batch),)))
                for j, (name, (dtype_name, _)) in enumerate(zip(self._names, self._types)))
            if self._label is None:
                yield features
            else:
                label = features.pop(self._label)
                yield features, label


def _matching(file_pattern):
    patterns = [file_pattern] if isinstance(file_pattern, (str, bytes, os.PathLike)) \
        else list(file_pattern)
    paths = []
    for pattern in patterns:
        pattern = os.fsdecode(pattern)
        matches = sorted(glob.glob(pattern))
        if not matches:
            raise ValueError(f"No files match `file_pattern` {pattern}.")
        paths.extend(matches)
    return paths


def _csv_rows(paths, field_delim, use_quote_delim, compression_type, encoding):
    """Python csv rows of every file in turn (the reader TF's type inference uses)."""
    for path in paths:
        text = _tfrecord.read_decompressed(path, compression_type).decode(encoding)
        yield from csv.reader(io.StringIO(text), delimiter=field_delim,
                              quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)


def _is_int(text, bits):
    try:
        value = int(text)
    except ValueError:
        return False
    return -(1 << (bits - 1)) <= value < (1 << (bits - 1))


def _is_float(text, numpy_type):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # overflow to inf is the answer
            return bool(numpy_type(text) < np.inf)
    except ValueError:
        return False


_INFERRED = [("int32", lambda t: _is_int(t, 32)), ("int64", lambda t: _is_int(t, 64)),
             ("float32", lambda t: _is_float(t, np.float32)),
             ("float64", lambda t: _is_float(t, np.float64)), ("string", lambda t: True)]
_ORDER = [name for name, _ in _INFERRED]


def _infer_type(text, na_value, previous):
    """TF's make_csv_dataset inference: the first type that holds ``text`` and every value seen
    before it in the column."""
    if text in ("", na_value):
        return previous
    start = 0 if previous is None else _ORDER.index(previous)
    return next(name for name, holds in _INFERRED[start:] if holds(text))


def _inferred_types(paths, n_columns, selected, header, na_value, num_rows, reader_args):
    inferred = [None] * n_columns
    rows = _csv_rows(paths, *reader_args)
    if header:
        next(rows, None)
    for i, row in enumerate(itertools.islice(rows, num_rows)):
        if len(row) != n_columns:
            raise ValueError(f"Problem inferring types: CSV row {i} has {len(row)} number of "
                             f"fields. Expected: {n_columns}.")
        for j in selected:
            inferred[j] = _infer_type(row[j], na_value, inferred[j])
    # float64 columns are float32 here (no float64); a column with no values is a string one
    return [("float32" if t == "float64" else t or "string",
             b"" if t in (None, "string") else (0.0 if t in ("float32", "float64") else 0))
            for t in (inferred[j] for j in selected)]


def _selected_indices(select_columns, column_names):
    if select_columns is None:
        return list(range(len(column_names)))
    indices = []
    for column in select_columns:
        if isinstance(column, str):
            if column not in column_names:
                raise ValueError(f"Column {column} is not in column_names ({column_names})")
            indices.append(column_names.index(column))
        else:
            indices.append(int(column))
    if len(set(indices)) != len(indices):
        raise ValueError("`select_columns` contains duplicate columns")
    return sorted(indices)


def make_csv_dataset(file_pattern, batch_size, column_names=None, column_defaults=None,
                     label_name=None, select_columns=None, field_delim=",", use_quote_delim=True,
                     na_value="", header=True, num_epochs=None, shuffle=True,
                     shuffle_buffer_size=10000, shuffle_seed=None, prefetch_buffer_size=None,
                     num_parallel_reads=None, sloppy=False, num_rows_for_inference=100,
                     compression_type=None, ignore_errors=False, encoding="utf-8"):
    """``tf.data.experimental.make_csv_dataset``: batches of CSV rows as an OrderedDict of
    columns (``(features, label)`` with ``label_name``), repeated ``num_epochs`` times (None:
    forever, with the last partial batch dropped, as in TF)."""
    paths = _matching(file_pattern)
    if shuffle:
        paths = [paths[i] for i in np.random.default_rng(shuffle_seed).permutation(len(paths))]
    reader_args = (field_delim, use_quote_delim, compression_type, encoding)
    if column_names is None:
        if not header:
            raise ValueError("Expected `column_names` or `header` argument to be set.")
        column_names = next(_csv_rows(paths[:1], *reader_args), [])
    column_names = list(column_names)
    if len(set(column_names)) != len(column_names):
        raise ValueError("Cannot have duplicate column names.")
    selected = _selected_indices(select_columns, column_names)
    names = [column_names[j] for j in selected]
    if label_name is not None and label_name not in names:
        raise ValueError(f"`label_name` provided must be one of the columns: {names}. "
                         f"Received: {label_name}.")
    if column_defaults is None:
        types = _inferred_types(paths, len(column_names), selected, header, na_value,
                                num_rows_for_inference, reader_args)
    else:
        types = column_types(column_defaults, dtype_means_required=True)
        if len(types) != len(names):
            raise ValueError(f"`column_defaults` has {len(types)} entries but {len(names)} "
                             "columns are selected; give one default per selected column")
    parser = RowParser(types, field_delim, use_quote_delim, na_value,
                       selected if select_columns is not None else None)
    rows = _CsvRows(paths, parser, compression_type, header, skip_bad_rows=ignore_errors)
    if shuffle:
        rows = rows.shuffle(shuffle_buffer_size, shuffle_seed)
    if num_epochs != 1:
        rows = rows.repeat(num_epochs)
    return _CsvBatches(rows, int(batch_size), num_epochs is None, names, types, label_name)
