"""``tf.data.TFRecordDataset`` and ``tf.data.TextLineDataset``: the records (or lines) of
files, one element each, in TF's order.

Why it exists: the tutorial pipelines ``TFRecordDataset(files).map(parse_fn).batch(n)`` and
``TextLineDataset(csv_file).skip(1).map(decode_csv_line)`` read files written by TensorFlow or
by gpuaccel. gpuaccel has no string tensors, so each element is Python ``bytes``; the map
function turns it into tensors (``parse_single_example``, ``decode_raw``, ``decode_csv``...).
TFRecord files are read as the pipeline iterates (gpuaccel._tfrecord.read_records); a text file
is read whole when its turn comes.
"""
import os

import numpy as np

from .. import _tfrecord
from .._host_strings import HostString
from .dataset import UNKNOWN_CARDINALITY, Dataset

__all__ = ["TFRecordDataset", "TextLineDataset", "file_names", "text_lines"]


def _file_name(value):
    if isinstance(value, (str, bytes, os.PathLike)):
        return os.fsdecode(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "SUO":
        return _file_name(value.item())
    raise TypeError(f"The `filenames` argument must contain string elements (file paths). Got "
                    f"`{type(value).__name__}` elements.")


def file_names(filenames):
    """A fresh list of paths from a path, a list/array of paths or a Dataset of paths."""
    if isinstance(filenames, (str, bytes, os.PathLike)):
        return [_file_name(filenames)]
    if isinstance(filenames, Dataset):
        return [_file_name(f) for f in filenames]
    if isinstance(filenames, (list, tuple, np.ndarray)):
        return [_file_name(f) for f in np.asarray(filenames, dtype=object).reshape(-1)]
    raise TypeError(f"The `filenames` argument must contain string elements (file paths). Got "
                    f"`{type(filenames).__name__}`.")


def text_lines(path, compression_type=None):
    """The lines of a text file without their "\\n" or "\\r\\n" (TF's TextLineDataset lines;
    CsvDataset's records)."""
    lines = _tfrecord.read_decompressed(path, compression_type).split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [line[:-1] if line.endswith(b"\r") else line for line in lines]


class _FileDataset(Dataset):
    """The items of files (``_read(path)`` gives one file's), file after file, or interleaved
    ``num_parallel_reads`` files at a time in TF's deterministic order (files are read on the
    calling thread; ``buffer_size`` is accepted and has no effect)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None,
                 num_parallel_reads=None, name=None):
        if not isinstance(filenames, Dataset):
            file_names(filenames)  # bad names fail here, as in TF, not at the first element
        self._filenames = filenames
        self._compression = _tfrecord.compression_type_string(compression_type)
        if num_parallel_reads is not None and num_parallel_reads != -1 and (
                not isinstance(num_parallel_reads, int) or num_parallel_reads < 1):
            raise ValueError(f"num_parallel_reads must be a positive integer or AUTOTUNE (-1), "
                             f"got {num_parallel_reads!r}")
        self._parallel_reads = num_parallel_reads

    def _read(self, path):
        raise NotImplementedError

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _elements(self):
        paths = file_names(self._filenames)
        cycle = self._parallel_reads
        if cycle is None:
            return (item for path in paths for item in self._read(path))
        if cycle == -1:
            cycle = max(1, os.cpu_count() or 1)
        return self._interleaved(paths, cycle)

    def _interleaved(self, paths, cycle_length):
        """tf.data's interleave(cycle_length, block_length=1): one item from each slot in
        turn. A file that ends empties its slot (the turn passes on); an empty slot opens the
        next file when its turn comes and reads from it at once."""
        pending = iter(paths)
        slots = [None] * cycle_length
        more_files = True
        index = 0
        while more_files or any(slot is not None for slot in slots):
            if slots[index] is None and more_files:
                path = next(pending, None)
                more_files = path is not None
                if more_files:
                    slots[index] = iter(self._read(path))
            if slots[index] is not None:
                item = next(slots[index], None)
                if item is None:
                    slots[index] = None
                else:
                    yield item
            index = (index + 1) % cycle_length


class TFRecordDataset(_FileDataset):
    """``tf.data.TFRecordDataset(filenames, compression_type=None, buffer_size=None,
    num_parallel_reads=None)``: the records (``bytes``) of ``filenames``."""

    def _read(self, path):
        # each record as the Datasets of strings carry it: a HostString, whose .numpy() is the
        # plain bytes TF's scalar string tensor gives
        return (HostString(record) for record in _tfrecord.read_records(path, self._compression))


class TextLineDataset(_FileDataset):
    """``tf.data.TextLineDataset(filenames, compression_type=None, buffer_size=None,
    num_parallel_reads=None)``: the lines (``bytes``, without "\\n" or "\\r\\n") of
    ``filenames``."""

    def _read(self, path):
        return (HostString(line) for line in text_lines(path, self._compression))
