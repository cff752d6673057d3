"""``gpuaccel.data.Dataset``: tf.data's input pipeline (slices, shuffle, map, batch, prefetch,
repeat, take) yielding gpuaccel Tensors.

Why it is shaped this way: an epoch of a small in-memory dataset must not be a Python loop over
60000 elements. A pipeline that starts with ``from_tensor_slices`` keeps, as long as it can, a
plan of *row indices* instead of elements: ``shuffle`` permutes the indices (a true shuffle
buffer, drawn per epoch), ``take`` cuts them, and ``batch`` hands each slice of indices to C++
(``_C.gather_rows``), which copies the rows of every component with the GIL released. Anything
else (``map``, ``repeat``, a batch of mapped elements) falls back to element-wise iteration,
with elements stacked in C++. ``prefetch`` runs the upstream pipeline on a C++ thread
(``_C.Prefetcher``) so producing the next batch overlaps the consumer's work; when the default
device is a GPU, each batch is uploaded as the consumer takes it, on the GPU's copy stream (as
fit's batches are), so its copy overlaps the step the consumer queued before.
"""
import atexit
import collections.abc
import contextlib
import itertools
import os
import threading
import warnings
import weakref
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from .. import _C, errors
from .._host_strings import HostString, is_host_string, string_leaf, string_rows
from .._convert import python_integer_dtype
from .._int_range import check_int
from ..io.gfile import matching_files as _matching_files
from .._tensor import Tensor, tensor as _to_tensor
from .._tensor_spec import TensorSpec

__all__ = ["Dataset", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2

# Depth chosen for prefetch(AUTOTUNE): two batches hide one slow step without holding many
# batches of memory.
_AUTOTUNE_PREFETCH = 2
# Rows gathered at a time when a slices dataset is iterated element by element.
_ELEMENT_CHUNK = 256
_SUPPORTED_KINDS = {"f", "i", "u", "b"}

# Set on a thread while Keras's fit/evaluate draw batches (keras/_data_adapter.py): a prefetch
# started then keeps its batches in host memory. The Trainer uploads them itself on the GPU's
# copy stream (cpp/train/batch_uploader.h), and a prefetch thread must not queue uploads on the
# compute stream that a training step may be capturing into a CUDA graph.
_host_batches = threading.local()

# The transformations beyond the row-index core (cache, filter, zip, ...) are classes of
# _transformations, which subclasses Dataset and so imports this module. Rather than import it
# back, Dataset's methods look those classes up here; _transformations registers each one as it
# loads, and the package (__init__.py) imports it, so the table is full before any Dataset
# exists (importing gpuaccel.data.dataset runs the package first).
_TRANSFORMATIONS = {}


def register_transformation(cls):
    """Class decorator for _transformations' classes: makes ``cls`` the one ``Dataset``'s
    method of that transformation builds."""
    _TRANSFORMATIONS[cls.__name__] = cls
    return cls


@contextlib.contextmanager
def _batches_stay_on_host():
    previous = getattr(_host_batches, "on", False)
    _host_batches.on = True
    try:
        yield
    finally:
        _host_batches.on = previous


# Set on a thread while an ignore_errors() pulls its input: a map function or filter predicate
# that raises then drops its element (error_dropped) instead of ending the epoch.
_ignoring_errors = threading.local()


@contextlib.contextmanager
def dropping_errors(log_warning=False):
    previous = getattr(_ignoring_errors, "mode", None)
    _ignoring_errors.mode = "log" if log_warning else "quiet"
    try:
        yield
    finally:
        _ignoring_errors.mode = previous


def error_dropped(error):
    """Whether ``error``, raised making one element, is dropped here (inside ignore_errors)."""
    mode = getattr(_ignoring_errors, "mode", None)
    if mode == "log":
        warnings.warn(f"ignore_errors: dropped an element: {type(error).__name__}: {error}",
                      stacklevel=3)
    return mode is not None


# Live prefetchers, closed before the interpreter shuts down so no thread waits for a GIL
# that will never come back.
_live_prefetchers = weakref.WeakSet()


@atexit.register
def _close_prefetchers():
    for p in list(_live_prefetchers):
        try:
            p.close()
        except Exception:  # noqa: BLE001 -- best effort at exit
            pass


# ---- element structure: a Tensor, a (nested) tuple, or a dict ----

_LEAF = None


def _flatten(element):
    """(structure, leaves) of an element; tuples and dicts nest, anything else is a leaf."""
    if isinstance(element, tuple):
        parts = [_flatten(e) for e in element]
        return tuple(s for s, _ in parts), [leaf for _, ls in parts for leaf in ls]
    if isinstance(element, dict):
        keys = list(element.keys())
        parts = [_flatten(element[k]) for k in keys]
        return {k: s for k, (s, _) in zip(keys, parts)}, [leaf for _, ls in parts for leaf in ls]
    return _LEAF, [element]


def _pack(structure, leaves):
    it = iter(leaves)

    def build(s):
        if s is _LEAF:
            return next(it)
        if isinstance(s, tuple):
            return tuple(build(x) for x in s)
        return {k: build(v) for k, v in s.items()}

    return build(structure)


_NOTHING = object()


def _as_element(value):
    """``value`` (a structure of arrays, numbers or Tensors) with every leaf a Tensor."""
    structure, leaves = _flatten(value)
    return _pack(structure, [_as_tensor(v) for v in leaves])


def _spec_of(element):
    """The TensorSpec structure of one element (exact shapes)."""
    structure, leaves = _flatten(element)
    if not all(isinstance(leaf, Tensor) for leaf in leaves):
        raise TypeError("element_spec: only datasets of tensors have an element spec here, got "
                        f"elements holding {sorted({type(l).__name__ for l in leaves})}")
    return _pack(structure, [TensorSpec(leaf.shape, leaf.dtype) for leaf in leaves])


def _specs_map(spec, fn):
    """``spec``'s structure with ``fn(TensorSpec)`` at each leaf."""
    structure, leaves = _flatten(spec)
    return _pack(structure, [fn(leaf) for leaf in leaves])


def _as_tensor(value):
    """A leaf of an element as the pipeline carries it: a Tensor, or a host string (gpuaccel
    has no string tensors; paths and file contents stay Python bytes, see _host_strings)."""
    if isinstance(value, Tensor):
        return value
    if is_host_string(value):
        return string_leaf(value)
    return _to_tensor(value)


def _numpy_leaf(leaf):
    """What as_numpy_iterator yields for a leaf: a copy of a tensor's array, or the strings' bytes
    (TF yields bytes for a string scalar, an object array of bytes for a string vector)."""
    return leaf.numpy() if isinstance(leaf, HostString) or is_host_string(leaf) else leaf._numpy()


def _with_leading_axis(tensors):
    """(structure, leaves) of ``tensors`` with a new leading axis of size 1 on each leaf."""
    structure, leaves = _flatten(tensors)
    return structure, [_C.expand_dims(v, 0) if isinstance(v, Tensor) else
                       np.asarray(v, python_integer_dtype(v))[None] for v in leaves]


def _slice_component(value, position):
    """A component of from_tensor_slices as something _C.gather_rows reads: a NumPy array
    (float64 is batched as float32) or a contiguous CPU tensor."""
    if isinstance(value, Tensor):
        t = value.detach() if value.requires_grad else value
        if t._device_type != "CPU":
            t = t.cpu()
        if not t.is_contiguous():
            t = t.contiguous()
        if t.ndim == 0:
            raise ValueError(f"from_tensor_slices: component {position} is a scalar; slicing "
                             "needs at least 1 dimension (the one that is split into elements)")
        return t
    first = value
    while isinstance(first, (list, tuple)) and first:
        first = first[0]
    if isinstance(first, (str, bytes)) and isinstance(value, (list, tuple)):
        # paths or file contents: kept as bytes on the host, rows picked in Python (converted
        # without np.asarray, whose fixed-width bytes would drop trailing NUL bytes)
        return string_rows(value)
    array = np.asarray(value, python_integer_dtype(value))  # [1, 2, 3] is int32, as TF
    if array.dtype.kind in ("S", "U", "O") and array.ndim > 0:
        return string_rows(array)
    if array.ndim > 0:
        array = np.ascontiguousarray(array)
    if array.dtype.kind not in _SUPPORTED_KINDS and array.dtype.name != "bfloat16":
        raise TypeError(f"from_tensor_slices: component {position} has dtype {array.dtype}, "
                        "which gpuaccel tensors cannot hold; use numbers (float, int, uint8, bool)")
    kind, itemsize = array.dtype.kind, array.dtype.itemsize
    if kind == "u" and itemsize == 2:
        array = array.astype(np.int32)  # uint16: no such dtype here; int32 holds every value
    elif kind == "u" and itemsize != 1:
        if itemsize == 8 and array.size and array.max() > np.iinfo(np.int64).max:
            raise ValueError(f"from_tensor_slices: component {position} (uint64) holds "
                             f"{array.max()}, beyond int64's maximum {np.iinfo(np.int64).max}, "
                             "which would wrap around to a negative number")
        array = array.astype(np.int64)
    if array.ndim == 0:
        raise ValueError(f"from_tensor_slices: component {position} is a scalar; slicing "
                         "needs at least 1 dimension (the one that is split into elements)")
    return array


class Dataset:
    """A sequence of elements, iterated afresh by every ``for`` loop (one epoch each)."""

    # ---- sources ----

    @staticmethod
    def from_tensor_slices(tensors):
        """Elements are the rows (slices along axis 0) of ``tensors``: an array or tensor, a
        tuple such as ``(x, y)``, or a dict of them. All components need the same length."""
        return _SlicesDataset(tensors)

    @staticmethod
    def list_files(file_pattern, shuffle=None, seed=None, name=None):
        """The paths matching ``file_pattern`` (a glob pattern or a list of them) as string
        elements (HostString bytes). As TF: shuffled unless ``shuffle=False`` (then sorted),
        reshuffled each epoch, in a reproducible order for a given ``seed``; no match is an
        InvalidArgumentError."""
        files = _matching_files(file_pattern)
        if not files:
            raise errors.InvalidArgumentError(f"No files matched pattern: {file_pattern}",
                                              "ListFiles")
        dataset = _SlicesDataset([os.fsencode(f) for f in files])
        if shuffle is None or shuffle:
            dataset = dataset.shuffle(len(files), seed=seed)
        return dataset

    @staticmethod
    def range(*args, dtype=None):
        """``Dataset.range(stop)`` / ``range(start, stop[, step])`` of int64 scalars, computed
        as they are read (``range(10**12)`` costs nothing until iterated)."""
        ds = _RangeDataset(*args)
        return ds if dtype is None else ds.map(lambda v: v.to(dtype))

    @staticmethod
    def from_tensors(tensors):
        """A dataset of one element: ``tensors`` itself."""
        return _SlicesDataset(_pack(*_with_leading_axis(tensors)))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        """Elements from ``generator()`` (called afresh each epoch), checked against
        ``output_signature`` (``gpuaccel.TensorSpec``s; None dimensions match any size)."""
        return _TRANSFORMATIONS["GeneratorDataset"](generator, output_types, output_shapes, args,
                                                    output_signature)

    @staticmethod
    def zip(*datasets, name=None):
        """``Dataset.zip((a, b))`` or ``Dataset.zip(a, b)``: tuples of their elements, as long as
        the shortest."""
        return _TRANSFORMATIONS["ZipDataset"](
            datasets[0] if len(datasets) == 1 else tuple(datasets))

    # ---- transformations ----

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True):
        return _ShuffleDataset(self, buffer_size, seed, reshuffle_each_iteration)

    def batch(self, batch_size, drop_remainder=False):
        return _BatchDataset(self, batch_size, drop_remainder)

    def map(self, map_func, num_parallel_calls=None, deterministic=None):
        return _MapDataset(self, map_func, num_parallel_calls)

    def prefetch(self, buffer_size):
        return _PrefetchDataset(self, buffer_size)

    def repeat(self, count=None):
        return _RepeatDataset(self, count)

    def take(self, count):
        return _TakeDataset(self, count)

    def cache(self, filename="", name=None):
        """Keeps the elements of the first complete pass and replays them (in memory; a
        ``filename`` is accepted and the cache still lives in memory)."""
        return _TRANSFORMATIONS["CacheDataset"](self, filename)

    def unbatch(self, name=None):
        return _TRANSFORMATIONS["UnbatchDataset"](self)

    def filter(self, predicate, name=None):
        return _TRANSFORMATIONS["FilterDataset"](self, predicate)

    def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                     drop_remainder=False, name=None):
        """Batches elements of different shapes, padding each component to the batch's largest
        (or to ``padded_shapes``) with ``padding_values`` (0 by default)."""
        return _TRANSFORMATIONS["PaddedBatchDataset"](self, batch_size, padded_shapes,
                                                      padding_values, drop_remainder)

    def interleave(self, map_func, cycle_length=None, block_length=None,
                   num_parallel_calls=None, deterministic=None, name=None):
        """``map_func`` turns each element into a dataset; ``cycle_length`` of them are read in
        turn, ``block_length`` elements at a time (tf.data's order; cycle_length defaults to the
        number of CPU cores, as TF)."""
        cycle = (os.cpu_count() or 1) if cycle_length in (None, AUTOTUNE) else cycle_length
        return _TRANSFORMATIONS["InterleaveDataset"](
            self, map_func, cycle, 1 if block_length is None else block_length)

    def flat_map(self, map_func, name=None):
        return _TRANSFORMATIONS["InterleaveDataset"](self, map_func, 1, 1)

    def skip(self, count, name=None):
        return _TRANSFORMATIONS["SkipDataset"](self, count)

    def enumerate(self, start=0, name=None):
        return _TRANSFORMATIONS["EnumerateDataset"](self, start)

    def concatenate(self, dataset, name=None):
        return _TRANSFORMATIONS["ConcatenateDataset"](self, dataset)

    def take_while(self, predicate, name=None):
        """The elements before the first one for which ``predicate`` is false."""
        return _TRANSFORMATIONS["TakeWhileDataset"](self, predicate)

    def shard(self, num_shards, index, name=None):
        """Every ``num_shards``-th element, starting at position ``index``."""
        return _TRANSFORMATIONS["ShardDataset"](self, num_shards, index)

    def unique(self, name=None):
        """Each distinct scalar (integer or boolean) once, in order of first appearance."""
        return _TRANSFORMATIONS["UniqueDataset"](self)

    def ignore_errors(self, log_warning=False, name=None):
        """Drops the elements whose ``map`` function or ``filter`` predicate raised."""
        return _TRANSFORMATIONS["IgnoreErrorsDataset"](self, log_warning)

    def scan(self, initial_state, scan_func, name=None):
        """``scan_func(state, element) -> (new_state, output)``: yields each output, carrying the
        state from element to element."""
        return _TRANSFORMATIONS["ScanDataset"](self, initial_state, scan_func)

    def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
        """Windows of ``size`` elements (each a Dataset, or a structure of Datasets for
        structured elements), starting every ``shift`` elements, taking every ``stride``-th."""
        return _TRANSFORMATIONS["WindowDataset"](self, size, shift, stride, drop_remainder)

    def group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                        name=None):
        """Groups elements by ``key_func(element)`` (an int64 scalar) into windows of
        ``window_size``; ``reduce_func(key, window_dataset)`` turns each into a dataset."""
        return _TRANSFORMATIONS["GroupByWindowDataset"](self, key_func, reduce_func,
                                                        window_size, window_size_func)

    def bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                                  bucket_batch_sizes, padded_shapes=None, padding_values=None,
                                  pad_to_bucket_boundary=False, no_padding=False,
                                  drop_remainder=False, name=None):
        """Padded batches of elements of similar length: bucket ``i`` holds lengths in
        ``[bucket_boundaries[i-1], bucket_boundaries[i])`` and batches ``bucket_batch_sizes[i]``."""
        return _TRANSFORMATIONS["GroupByWindowDataset"].by_sequence_length(
            self, element_length_func, bucket_boundaries, bucket_batch_sizes, padded_shapes,
            padding_values, pad_to_bucket_boundary, no_padding, drop_remainder)

    def rebatch(self, batch_size, drop_remainder=False, name=None):
        """The same rows in batches of ``batch_size`` (an int, or a list of sizes used in
        turn)."""
        return _TRANSFORMATIONS["RebatchDataset"](self, batch_size, drop_remainder)

    def apply(self, transformation_func):
        """``transformation_func(self)``, which must return a Dataset."""
        result = transformation_func(self)
        if not isinstance(result, Dataset):
            raise TypeError("apply: transformation_func must return a Dataset, got "
                            f"{type(result).__name__}")
        return result

    def with_options(self, options, name=None):
        """The same elements, carrying ``options`` (a ``gpuaccel.data.Options``) merged over
        this dataset's own; the pipeline keeps its behaviour (options are recorded)."""
        return _TRANSFORMATIONS["OptionsDataset"](self, options)

    def options(self):
        """The ``gpuaccel.data.Options`` set on this pipeline with ``with_options``."""
        node, found = self, []
        while node is not None:
            if hasattr(node, "_own_options"):
                found.append(node._own_options)
            node = getattr(node, "_input", None)
        return _TRANSFORMATIONS["OptionsDataset"].merged(reversed(found))

    # ---- sources (beyond slices and ranges) ----

    @staticmethod
    def counter(start=0, step=1, dtype=None, name=None):
        """``start, start + step, ...`` forever (int64 unless ``dtype``)."""
        return _TRANSFORMATIONS["CounterDataset"](start, step, dtype)

    @staticmethod
    def random(seed=None, rerandomize_each_iteration=None, name=None):
        """Uniform int64 values in [0, 2**32) forever; the same sequence for the same seed."""
        return _TRANSFORMATIONS["RandomDataset"](seed, rerandomize_each_iteration)

    @staticmethod
    def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                             rerandomize_each_iteration=None):
        """Each element from a dataset drawn at random with ``weights`` (uniform by default)."""
        return _TRANSFORMATIONS["SampleDataset"](datasets, weights, seed, stop_on_empty_dataset,
                                                 rerandomize_each_iteration)

    @staticmethod
    def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
        """Each element from ``datasets[c]`` for the next ``c`` of ``choice_dataset`` (int64
        scalars)."""
        return _TRANSFORMATIONS["ChooseDataset"](datasets, choice_dataset, stop_on_empty_dataset)

    # ---- reductions ----

    def reduce(self, initial_state, reduce_func, name=None):
        """``reduce_func(state, element)`` over every element, from ``initial_state``; returns
        the final state (Tensors)."""
        if not callable(reduce_func):
            raise TypeError(f"reduce: reduce_func must be callable, got "
                            f"{type(reduce_func).__name__}")
        state = _as_element(initial_state)
        structure = _flatten(state)[0]
        for element in self._elements():
            state = _as_element(reduce_func(state, element))
            if _flatten(state)[0] != structure:
                raise TypeError(f"reduce: reduce_func must return a state of the initial state's "
                                f"structure {structure!r}, got {_flatten(state)[0]!r}")
        return state

    def get_single_element(self, name=None):
        """The dataset's only element; InvalidArgumentError when it has none or more."""
        it = self._elements()
        first = next(it, _NOTHING)
        if first is _NOTHING:
            raise errors.InvalidArgumentError("Dataset was empty.", "DatasetToSingleElement")
        if next(it, _NOTHING) is not _NOTHING:
            raise errors.InvalidArgumentError("Dataset had more than one element.",
                                              "DatasetToSingleElement")
        return first

    @property
    def element_spec(self):
        """The structure of ``gpuaccel.TensorSpec``s of one element (None for a dimension that
        varies, such as a batch that may be short)."""
        return self._element_spec()

    # ---- inspection and iteration ----

    def cardinality(self):
        """Number of elements; INFINITE_CARDINALITY (-1) or UNKNOWN_CARDINALITY (-2)."""
        return self._cardinality()

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):  # a Dataset is truthy even when len() would raise
        return True

    def __iter__(self):
        return self._elements()

    def as_numpy_iterator(self):
        for element in self._elements():
            structure, leaves = _flatten(element)
            # copies (._numpy()): an array that viewed the dataset's rows would let writes to it
            # change later epochs
            yield _pack(structure, [_numpy_leaf(leaf) for leaf in leaves])

    # ---- what subclasses provide ----

    def _elements(self):
        """A fresh iterator over this dataset's elements (structures of Tensors)."""
        raise NotImplementedError

    def _cardinality(self):
        raise NotImplementedError

    def _index_plan(self):
        """For pipelines that are still rows of a slices dataset: (source, indices_fn) where
        indices_fn() returns the next epoch's row indices; None otherwise."""
        return None

    def _element_spec(self):
        """The specs of the first element. Subclasses that know their shapes without running
        the pipeline (slices, range, batch, pass-through transformations) override this."""
        first = next(self._elements(), _NOTHING)
        if first is _NOTHING:
            raise ValueError(f"element_spec: {type(self).__name__} produced no element to read "
                             "the spec from")
        return _spec_of(first)


def _is_string_component(component):
    return isinstance(component, np.ndarray) and component.dtype == object


class _SlicesDataset(Dataset):
    def __init__(self, tensors):
        structure, leaves = _flatten(tensors)
        if not leaves:
            raise ValueError("from_tensor_slices needs at least one array or tensor")
        self._structure = structure
        self._components = [_slice_component(v, i) for i, v in enumerate(leaves)]
        lengths = [int(c.shape[0]) for c in self._components]
        for i, n in enumerate(lengths[1:], start=1):
            if n != lengths[0]:
                raise ValueError(
                    "from_tensor_slices: all components must have the same size in their first "
                    f"dimension, but component 0 has {lengths[0]} and component {i} has {n}")
        self._length = lengths[0]

    def _cardinality(self):
        return self._length

    def _element_spec(self):
        # the dtypes a gathered row really has (float64 arrays are served as float32)
        rows = self._gather_components(np.zeros(min(self._length, 1), np.int64))
        return _pack(self._structure, [_spec_of(r) if isinstance(r, np.ndarray)
                                       else TensorSpec(tuple(c.shape[1:]), r.dtype)
                                       for c, r in zip(self._components, rows)])

    def _index_plan(self):
        n = self._length
        return self, lambda: np.arange(n, dtype=np.int64)

    def _gather_components(self, indices):
        """The rows ``indices`` of every component: numeric ones copied by C++ into Tensors,
        string ones (object arrays of bytes) picked by NumPy as HostStrings."""
        numeric = [c for c in self._components if not _is_string_component(c)]
        gathered = iter(_C.gather_rows(numeric, indices) if numeric else [])
        return [string_leaf(c[indices]) if _is_string_component(c) else next(gathered)
                for c in self._components]

    def _gather(self, indices):
        return _pack(self._structure, self._gather_components(indices))

    def _rows(self, indices):
        """Elements for row indices, gathered in chunks."""
        for start in range(0, len(indices), _ELEMENT_CHUNK):
            chunk = self._gather_components(indices[start:start + _ELEMENT_CHUNK])
            for j in range(int(chunk[0].shape[0])):
                yield _pack(self._structure, [c[j] if isinstance(c, np.ndarray)
                                              else _C.select(c, 0, j) for c in chunk])

    def _elements(self):
        return self._rows(np.arange(self._length, dtype=np.int64))


def _range_bound(value, name):
    """A bound of Dataset.range: an integer or a 0-d integer tensor (as TF), within int64."""
    if isinstance(value, Tensor):
        if value.ndim != 0 or value.dtype.is_floating_point or value.dtype.name == "bool":
            raise TypeError(f"Dataset.range: {name} must be an integer, got a {value.dtype.name} "
                            f"tensor of shape {list(value.shape)}")
        value = value.item()
    return check_int(value, f"Dataset.range: {name}")


class _RangeDataset(Dataset):
    """tf.data's RangeDataset: the numbers are computed as they are read, never held, so a range
    of 10**12 costs nothing until iterated and ``take``/``batch`` over it read only what they
    use. Short ranges also offer the row-index plan (shuffle, take and batch then run on
    indices, as for slices); past _PLANNED_RANGE elements they stream, since the plan is an
    array of every index."""

    _PLANNED_RANGE = 1 << 22  # 32 MiB of int64 indices, made when an epoch starts

    def __init__(self, *args):
        if not 1 <= len(args) <= 3:
            raise ValueError("Dataset.range takes 1 to 3 arguments (stop), (start, stop) or "
                             f"(start, stop, step), got {len(args)}")
        names = {1: ["stop"], 2: ["start", "stop"], 3: ["start", "stop", "step"]}[len(args)]
        bounds = [_range_bound(a, n) for a, n in zip(args, names)]
        if len(bounds) == 3 and bounds[2] == 0:
            raise ValueError(f"Dataset.range: step must not be 0, got range({bounds[0]}, "
                             f"{bounds[1]}, 0)")
        self._range = range(*bounds)
        # len(range) stops at 2**63 - 1; a range across all of int64 holds nearly 2**64
        start, stop, step = self._range.start, self._range.stop, self._range.step
        self._length = max(0, (stop - start + step - (1 if step > 0 else -1)) // step)

    def _cardinality(self):
        return self._length

    def _element_spec(self):
        return TensorSpec((), "int64")

    def _index_plan(self):
        n = self._length
        if n > self._PLANNED_RANGE:
            return None
        return self, lambda: np.arange(n, dtype=np.int64)

    def _values(self, indices):
        """start + index * step for int64 ``indices``, as int64. Computed modulo 2**64 (uint64
        wraps by definition), which is exact because every value of the range fits int64."""
        start = np.uint64(self._range.start % (1 << 64))
        step = np.uint64(self._range.step % (1 << 64))
        return (start + np.asarray(indices).astype(np.uint64) * step).view(np.int64)

    def _gather(self, indices):
        return _to_tensor(self._values(indices))

    def _rows(self, indices):
        for begin in range(0, len(indices), _ELEMENT_CHUNK):
            chunk = _to_tensor(self._values(indices[begin:begin + _ELEMENT_CHUNK]))
            for j in range(int(chunk.shape[0])):
                yield _C.select(chunk, 0, j)

    def _elements(self):
        n = self._length
        for begin in range(0, n, _ELEMENT_CHUNK):
            # uint64 indices: a range over all of int64 has more than 2**63 elements
            yield from self._rows(np.arange(begin, min(begin + _ELEMENT_CHUNK, n),
                                            dtype=np.uint64))


class _UnaryDataset(Dataset):
    def __init__(self, input_dataset):
        if not isinstance(input_dataset, Dataset):
            raise TypeError(f"expected a gpuaccel.data.Dataset, got {type(input_dataset).__name__}")
        self._input = input_dataset

    def _cardinality(self):
        return self._input._cardinality()


class _PassThroughDataset(_UnaryDataset):
    """A transformation whose elements are some of its input's, unchanged (shuffle, take,
    filter...): its element spec is its input's."""

    def _element_spec(self):
        return self._input._element_spec()


def _shuffle_indices(indices, buffer_size, rng):
    """The order a shuffle buffer of ``buffer_size`` produces (as tf.data's): fill the buffer,
    then repeatedly emit a random slot and refill it with the next input."""
    n = len(indices)
    if buffer_size >= n:
        return rng.permutation(indices)
    out = np.empty(n, dtype=np.int64)
    buffer = list(indices[:buffer_size])
    picks = rng.integers(0, buffer_size, size=n - buffer_size)
    for k in range(n - buffer_size):
        slot = int(picks[k])
        out[k] = buffer[slot]
        buffer[slot] = indices[buffer_size + k]
    out[n - buffer_size:] = rng.permutation(np.asarray(buffer, dtype=np.int64))
    return out


class _ShuffleDataset(_PassThroughDataset):
    def __init__(self, input_dataset, buffer_size, seed, reshuffle_each_iteration):
        super().__init__(input_dataset)
        if buffer_size == AUTOTUNE:
            raise ValueError("shuffle: buffer_size must be a positive integer; AUTOTUNE is not "
                             "supported for shuffle (use the dataset size for a full shuffle)")
        self._buffer_size = check_int(buffer_size, "buffer_size", 1)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 63))
        self._seed = check_int(seed, "seed", 0)
        self._reshuffle = bool(reshuffle_each_iteration)
        self._epoch = 0

    def _next_rng(self):
        epoch = self._epoch if self._reshuffle else 0
        self._epoch += 1
        return np.random.default_rng([self._seed, epoch])

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        source, indices_fn = plan
        return source, lambda: _shuffle_indices(indices_fn(), self._buffer_size, self._next_rng())

    def _elements(self):
        plan = self._index_plan()
        if plan is not None:
            source, indices_fn = plan
            return source._rows(indices_fn())
        return self._buffered(self._next_rng())

    def _buffered(self, rng):
        buffer = []
        for element in self._input._elements():
            if len(buffer) < self._buffer_size:
                buffer.append(element)
                continue
            slot = int(rng.integers(0, self._buffer_size))
            out, buffer[slot] = buffer[slot], element
            yield out
        for k in rng.permutation(len(buffer)):
            yield buffer[k]


class _CountedDataset(_PassThroughDataset):
    """``take(count)`` and ``skip(count)``: the elements before or from position ``count``
    (a negative count means every element)."""

    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = check_int(count, "count", -1)


class _TakeDataset(_CountedDataset):
    def _cardinality(self):
        n = self._input._cardinality()
        if self._count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self._count
        if n == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        return min(n, self._count)

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None or self._count < 0:
            return plan
        source, indices_fn = plan
        return source, lambda: indices_fn()[:self._count]

    def _elements(self):
        if self._count < 0:
            return self._input._elements()
        return itertools.islice(self._input._elements(), self._count)


class _RepeatDataset(_PassThroughDataset):
    def __init__(self, input_dataset, count):
        super().__init__(input_dataset)
        self._count = -1 if count is None else check_int(count, "count", -1)

    def _cardinality(self):
        n = self._input._cardinality()
        if self._count < 0:
            return 0 if n == 0 else INFINITE_CARDINALITY
        if self._count == 0 or n == 0:
            return 0
        if n < 0:
            return n
        return n * self._count

    def _elements(self):
        epoch = 0
        while self._count < 0 or epoch < self._count:
            produced = False
            for element in self._input._elements():
                produced = True
                yield element
            epoch += 1
            if not produced:  # repeating an empty dataset would spin forever
                return


class _BatchDataset(_UnaryDataset):
    def __init__(self, input_dataset, batch_size, drop_remainder):
        super().__init__(input_dataset)
        self._batch_size = check_int(batch_size, "batch_size", 1)
        self._drop_remainder = bool(drop_remainder)

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        b = self._batch_size
        return n // b if self._drop_remainder else -(-n // b)

    def _element_spec(self):
        size = self._batch_size if self._drop_remainder else None
        return _specs_map(self._input._element_spec(),
                          lambda spec: TensorSpec((size, *spec.shape), spec.dtype))

    def _elements(self):
        plan = self._input._index_plan()
        if plan is not None:
            source, indices_fn = plan
            return self._gathered(source, indices_fn())
        return self._stacked()

    def _gathered(self, source, indices):
        b = self._batch_size
        stop = len(indices) - len(indices) % b if self._drop_remainder else len(indices)
        for start in range(0, stop, b):
            yield source._gather(indices[start:start + b])

    def _stacked(self):
        it = self._input._elements()
        while True:
            elements = list(itertools.islice(it, self._batch_size))
            if not elements or (self._drop_remainder and len(elements) < self._batch_size):
                return
            structure, first = _flatten(elements[0])
            columns = [[leaf] for leaf in first]
            for e in elements[1:]:
                s, leaves = _flatten(e)
                if s != structure:
                    raise ValueError(f"batch: elements have different structures: {structure!r} "
                                     f"and {s!r}")
                for column, leaf in zip(columns, leaves):
                    column.append(leaf)
            yield _pack(structure, [_stacked_column(col, i) for i, col in enumerate(columns)])


def _stacked_column(column, position):
    """One component of a batch: the leaves stacked along a new axis 0 (strings as HostStrings,
    the 1-D string array TF's batch of string scalars is)."""
    leaves = [_as_tensor(v) for v in column]
    if all(is_host_string(v) for v in leaves):
        return string_leaf(leaves)
    return _C.stack_tensors(leaves, position)


def _apply_fn(fn, element):
    """``fn`` called on an element as tf.data calls user functions: a tuple is spread over the
    arguments."""
    return fn(*element) if isinstance(element, tuple) else fn(element)


def _call(fn, element):
    return _as_element(_apply_fn(fn, element))


class _MapDataset(_UnaryDataset):
    def __init__(self, input_dataset, map_func, num_parallel_calls):
        super().__init__(input_dataset)
        if not callable(map_func):
            raise TypeError(f"map_func must be callable, got {type(map_func).__name__}")
        self._fn = map_func
        if num_parallel_calls is None:
            self._workers = 1
        elif num_parallel_calls == AUTOTUNE:
            self._workers = max(1, os.cpu_count() or 1)
        else:
            self._workers = check_int(num_parallel_calls, "num_parallel_calls", 1)

    def _elements(self):
        if self._workers == 1:
            return self._serial()
        return self._parallel()

    def _serial(self):
        for element in self._input._elements():
            try:
                out = _call(self._fn, element)
            except Exception as error:  # noqa: BLE001 - dropped only inside ignore_errors
                if error_dropped(error):
                    continue
                raise
            yield out

    @staticmethod
    def _results(futures):
        """The results of the finished futures at the front of ``futures``, in order, skipping
        those whose call raised inside ignore_errors."""
        while futures:
            try:
                yield futures.popleft().result()
            except Exception as error:  # noqa: BLE001 - dropped only inside ignore_errors
                if not error_dropped(error):
                    raise

    def _parallel(self):
        """Ordered output, up to 2 x workers calls in flight (they overlap where fn releases
        the GIL: gpuaccel ops, NumPy, I/O, sleeps)."""
        pool = ThreadPoolExecutor(max_workers=self._workers, thread_name_prefix="gpuaccel-map")
        pending = collections.deque()
        try:
            for element in self._input._elements():
                pending.append(pool.submit(_call, self._fn, element))
                if len(pending) >= 2 * self._workers:
                    yield from self._results(collections.deque([pending.popleft()]))
            yield from self._results(pending)
        finally:
            for f in pending:
                f.cancel()
            pool.shutdown(wait=False)


class _PrefetchDataset(_PassThroughDataset):
    def __init__(self, input_dataset, buffer_size):
        super().__init__(input_dataset)
        if buffer_size == AUTOTUNE:
            buffer_size = _AUTOTUNE_PREFETCH
        self._buffer_size = check_int(buffer_size, "buffer_size", 0)

    def _elements(self):
        if self._buffer_size == 0:
            return self._input._elements()
        # Started now, not at the first next(), so the first batches are being made while the
        # caller finishes its own setup.
        structure = []  # set by the producer thread from the first element
        device = "/CPU:0" if getattr(_host_batches, "on", False) else None
        host_leaves = collections.deque()  # appended by the producer thread, popped here
        prefetcher = _C.Prefetcher(self._flat(structure, host_leaves), self._buffer_size, device)
        _live_prefetchers.add(prefetcher)
        return self._unpacked(prefetcher, structure, host_leaves)

    def _flat(self, structure, host_leaves):
        """The producer: each element's tensors for the C++ prefetcher, which carries tensors
        only; its string leaves go, in the same order, through ``host_leaves`` (a FIFO that the
        consumer pops from as it takes the element's tensors)."""
        for element in self._input._elements():
            s, leaves = _flatten(element)
            if not structure:
                structure.append(s)
            elif s != structure[0]:
                raise ValueError(f"prefetch: elements have different structures: "
                                 f"{structure[0]!r} and {s!r}")
            leaves = [_as_tensor(v) for v in leaves]
            host_leaves.append([v if is_host_string(v) else None for v in leaves])
            yield tuple(v for v in leaves if isinstance(v, Tensor))

    @staticmethod
    def _unpacked(prefetcher, structure, host_leaves):
        try:
            for tensors in prefetcher:
                tensors = iter(tensors)
                leaves = [next(tensors) if v is None else v for v in host_leaves.popleft()]
                yield _pack(structure[0], leaves)
        finally:
            prefetcher.close()
