"""``keras.utils``' helpers that turn arrays into training data: ``pad_sequences``,
``timeseries_dataset_from_array``, ``split_dataset`` and ``pack/unpack_x_y_sample_weight``.

Why a module of their own: they are Keras's glue between a course's raw arrays and ``fit`` (the
datasets they make are ``gpuaccel.data.Dataset``s where Keras, on TensorFlow, makes tf.data
ones), and they share the argument checks Keras gives them.
"""
import numbers

import numpy as np

from .._int_range import check_int
from .._tensor import Tensor
from ..data import Dataset


def _array(value):
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


# ---- pad_sequences ----

def pad_sequences(sequences, maxlen=None, dtype="int32", padding="pre", truncating="pre",
                  value=0.0):
    """A ``(len(sequences), maxlen, ...)`` NumPy array of the sequences, each cut to ``maxlen``
    (keeping its end with ``truncating='pre'``, its start with ``'post'``) and filled with
    ``value`` before (``padding='pre'``) or after (``'post'``) it."""
    if not hasattr(sequences, "__len__"):
        raise ValueError("`sequences` must be iterable.")
    for name, choice in (("Padding", padding), ("Truncating", truncating)):
        if choice not in ("pre", "post"):
            raise ValueError(f'{name} type "{choice}" not understood (use "pre" or "post")')
    rows = []
    for s in sequences:
        if not hasattr(s, "__len__"):
            raise ValueError(f"`sequences` must be a list of iterables. Found non-iterable: {s}")
        rows.append(_array(s) if len(s) else None)
    sample_shape = next((r.shape[1:] for r in rows if r is not None), ())
    lengths = [0 if r is None else len(r) for r in rows]
    if maxlen is None:
        maxlen = max(lengths, default=0)
    maxlen = check_int(maxlen, "pad_sequences: maxlen", 0)
    dtype = np.dtype(dtype)
    if isinstance(value, str) and dtype.kind not in "OUS":
        raise ValueError(f"`dtype` {dtype} is not compatible with `value`'s type: "
                         f"{type(value)}\nYou should set `dtype=object` for variable length "
                         "strings.")
    out = np.full((len(rows), maxlen) + tuple(sample_shape), value, dtype=dtype)
    for i, row in enumerate(rows):
        if row is None or maxlen == 0:
            continue
        kept = row[-maxlen:] if truncating == "pre" else row[:maxlen]
        if kept.shape[1:] != tuple(sample_shape):
            raise ValueError(f"Shape of sample {kept.shape[1:]} of sequence at position {i} is "
                             f"different from expected shape {tuple(sample_shape)}")
        if padding == "post":
            out[i, :len(kept)] = kept
        else:
            out[i, maxlen - len(kept):] = kept
    return out


# ---- timeseries_dataset_from_array ----

def timeseries_dataset_from_array(data, targets, sequence_length, sequence_stride=1,
                                  sampling_rate=1, batch_size=128, shuffle=False, seed=None,
                                  start_index=None, end_index=None):
    """Windows of ``data``: sequence ``i`` holds the rows ``start_index + p_i + k*sampling_rate``
    (``k < sequence_length``, ``p_i = i*sequence_stride``), paired with
    ``targets[start_index + p_i]`` when targets are given; batched by ``batch_size`` (None:
    one sequence per element). The windows are gathered as they are read, so a long series is
    never copied ``sequence_length`` times."""
    data = _array(data)
    total = len(data)
    start = 0 if start_index is None else start_index
    end = total if end_index is None else end_index
    if isinstance(start, bool) or not isinstance(start, numbers.Integral) or \
            not 0 <= start < total:
        raise ValueError("`start_index` must be 0 <= start_index < len(data). Received: "
                         f"start_index={start_index}")
    if isinstance(end, bool) or not isinstance(end, numbers.Integral) or \
            not start < end <= total:
        raise ValueError("`end_index` must be start_index < end_index <= len(data). Received: "
                         f"start_index={start_index}, end_index={end_index}, and "
                         f"len(data)={total}")
    for name, argument in (("sequence_length", sequence_length),
                           ("sequence_stride", sequence_stride),
                           ("sampling_rate", sampling_rate)):
        check_int(argument, f"timeseries_dataset_from_array: {name}", 1)
    if batch_size is not None:
        check_int(batch_size, "timeseries_dataset_from_array: batch_size", 1)
    count = end - start - (sequence_length - 1) * sampling_rate
    if targets is not None:
        targets = _array(targets)
        count = min(count, len(targets) - start)
    positions = np.arange(0, max(count, 0), sequence_stride, dtype=np.int64) + start
    if shuffle:
        np.random.default_rng(seed).shuffle(positions)
    offsets = np.arange(sequence_length, dtype=np.int64) * sampling_rate

    def windows(first_rows):
        rows = first_rows.numpy()
        sequences = data[rows[..., None] + offsets]
        return sequences if targets is None else (sequences, targets[rows])

    starts = Dataset.from_tensor_slices(positions)
    if batch_size is not None:
        starts = starts.batch(batch_size)
    return starts.map(windows)


# ---- split_dataset ----

def _split_size(size, total, name):
    """A split's size as a count: an int in (0, total) or a float in (0, 1) of ``total``."""
    if size is None:
        return None
    if isinstance(size, numbers.Integral) and not isinstance(size, bool) and 0 < size < total:
        return int(size)
    if isinstance(size, float) and 0 < size < 1:
        return int(round(size * total))
    raise ValueError(f"`{name}` should be either a positive integer smaller than {total}, or a "
                     f"float within the range `[0, 1]`. Received: {name}={size}")


def _columns_of(dataset):
    """split_dataset's input as a structure of equally long arrays (a tuple for a list or
    tuple of arrays; a gpuaccel Dataset is read once, its elements stacked) and its length."""
    if isinstance(dataset, Dataset):
        total = int(dataset.cardinality())
        if total < 0:
            total = sum(1 for _ in dataset)
        if total == 0:
            return (), 0
        columns = _as_arrays(dataset.batch(total).get_single_element())
    elif isinstance(dataset, (list, tuple)):
        columns = tuple(_array(a) for a in dataset)
    elif isinstance(dataset, (np.ndarray, Tensor)):
        columns = _array(dataset)
    else:
        raise TypeError("split_dataset: `dataset` must be a gpuaccel.data.Dataset, a NumPy "
                        f"array, or a list/tuple of arrays; got {type(dataset).__name__}")
    lengths = {len(a) for a in _leaves(columns)}
    if len(lengths) != 1:
        raise ValueError("split_dataset: the arrays of `dataset` must have the same length, got "
                         f"lengths {sorted(lengths)}")
    return columns, lengths.pop()


def _leaves(structure):
    if isinstance(structure, tuple):
        return [leaf for part in structure for leaf in _leaves(part)]
    if isinstance(structure, dict):
        return [leaf for part in structure.values() for leaf in _leaves(part)]
    return [structure]


def _as_arrays(structure):
    """``structure`` (tuples and dicts of Tensors or arrays) with NumPy leaves."""
    if isinstance(structure, tuple):
        return tuple(_as_arrays(part) for part in structure)
    if isinstance(structure, dict):
        return {key: _as_arrays(part) for key, part in structure.items()}
    return _array(structure)


def _rows(structure, indices):
    if isinstance(structure, tuple):
        return tuple(_rows(part, indices) for part in structure)
    if isinstance(structure, dict):
        return {key: _rows(part, indices) for key, part in structure.items()}
    return structure[indices]


def split_dataset(dataset, left_size=None, right_size=None, shuffle=False, seed=None,
                  preferred_backend=None):
    """Two Datasets of the first ``left_size`` and the last ``right_size`` elements (an int
    count or a float fraction; a missing one is the rest), after a seeded shuffle with
    ``shuffle``."""
    if left_size is None and right_size is None:
        raise ValueError("At least one of the `left_size` or `right_size` must be specified. "
                         "Received: left_size=None and right_size=None")
    columns, total = _columns_of(dataset)
    left = _split_size(left_size, total, "left_size")
    right = _split_size(right_size, total, "right_size")
    if isinstance(left_size, float) and isinstance(right_size, float) and \
            left_size + right_size > 1:
        raise ValueError("The sum of `left_size` and `right_size` is greater than 1. It must be "
                         "less than or equal to 1.")
    left = total - right if left is None else left
    right = total - left if right is None else right
    if left + right > total:
        raise ValueError(f"The sum of `left_size` and `right_size` should be smaller than the "
                         f"{total} samples of the dataset. Received: left_size={left_size}, "
                         f"right_size={right_size}")
    order = np.arange(total)
    if shuffle:
        np.random.default_rng(seed).shuffle(order)
    return (Dataset.from_tensor_slices(_rows(columns, order[:left])),
            Dataset.from_tensor_slices(_rows(columns, order[total - right:])))


# ---- pack / unpack ----

def unpack_x_y_sample_weight(data):
    """``(x, y, sample_weight)`` from ``x``, ``(x,)``, ``(x, y)`` or ``(x, y, sample_weight)``
    (a list counts as a tuple), None for what is missing."""
    if isinstance(data, list):
        data = tuple(data)
    if not isinstance(data, tuple):
        return data, None, None
    if 1 <= len(data) <= 3:
        return tuple(data) + (None,) * (3 - len(data))
    raise ValueError("Data is expected to be in format `x`, `(x,)`, `(x, y)`, or "
                     f"`(x, y, sample_weight)`, found: {data}")


def pack_x_y_sample_weight(x, y=None, sample_weight=None):
    """What ``unpack_x_y_sample_weight`` reads back: ``x`` alone (a list or tuple ``x`` wrapped
    as ``(x,)`` so it is not taken for ``(x, y)``), ``(x, y)`` or ``(x, y, sample_weight)``."""
    if y is None:
        return (x,) if isinstance(x, (list, tuple)) else x
    return (x, y) if sample_weight is None else (x, y, sample_weight)
