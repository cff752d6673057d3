"""tf.data's regrouping transformations: ``window``, ``group_by_window`` (and
``bucket_by_sequence_length``, built on it) and ``rebatch``.

Why a module of their own: each regroups its input's elements into new units rather than
mapping or filtering them one by one, and ``window``/``group_by_window`` hand the user Datasets
of buffered elements (``_BufferedDataset``), which nothing else in the package does.
"""
import bisect
import collections
import itertools

import numpy as np

from .. import errors
from .._int_range import check_int
from .._tensor import Tensor, tensor
from .._tensor_spec import TensorSpec
from .dataset import (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, _UnaryDataset,
                      _apply_fn, _flatten, _pack, _specs_map, register_transformation)


class _BufferedDataset(Dataset):
    """A finite Dataset over elements already in memory: one window, or one group's window.
    ``spec`` is its element spec, or a function giving it when asked (a group's windows have
    their input's spec, which reading would cost a pass over the input's first element)."""

    def __init__(self, elements, spec):
        self._buffered, self._spec = list(elements), spec

    def _cardinality(self):
        return len(self._buffered)

    def _element_spec(self):
        return self._spec() if callable(self._spec) else self._spec

    def _elements(self):
        return iter(self._buffered)


@register_transformation
class WindowDataset(_UnaryDataset):
    """Window ``k`` holds the input positions ``k*shift + i*stride`` for ``i < size`` that exist;
    windows start at every ``k*shift`` before the end (only complete ones with
    ``drop_remainder``). Each window is a Dataset per component, as tf.data's."""

    def __init__(self, input_dataset, size, shift, stride, drop_remainder):
        super().__init__(input_dataset)
        self._size = check_int(size, "window: size", 1)
        self._shift = self._size if shift is None else check_int(shift, "window: shift", 1)
        self._stride = check_int(stride, "window: stride", 1)
        self._drop_remainder = bool(drop_remainder)

    def _span(self):
        return (self._size - 1) * self._stride + 1

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        if not self._drop_remainder:
            return -(-n // self._shift)
        return (n - self._span()) // self._shift + 1 if n >= self._span() else 0

    def _element_spec(self):
        raise TypeError("element_spec: window's elements are Datasets; read the spec of one "
                        "window's elements with next(iter(windows)).element_spec")

    def _window(self, elements):
        if not elements:
            return None
        structure = _flatten(elements[0])[0]
        columns = list(zip(*(_flatten(e)[1] for e in elements)))
        return _pack(structure, [_BufferedDataset(column, TensorSpec(column[0].shape,
                                                                     column[0].dtype))
                                 for column in columns])

    def _elements(self):
        inputs = self._input._elements()
        buffer = collections.deque()  # (position, element) from the current window's start
        read, start, exhausted = 0, 0, False
        while True:
            last = start + self._span() - 1
            while not exhausted and read <= last:
                element = next(inputs, _END)
                if element is _END:
                    exhausted = True
                else:
                    buffer.append((read, element))
                    read += 1
            while buffer and buffer[0][0] < start:
                buffer.popleft()
            if not buffer:
                return
            members = [e for p, e in buffer if p <= last and (p - start) % self._stride == 0]
            if self._drop_remainder and len(members) < self._size:
                return
            yield self._window(members)
            start += self._shift


_END = object()


def _int64(value):
    return tensor(np.int64(value))


def _key(value, what):
    """An integer scalar returned by a user function, as a Python int."""
    if isinstance(value, Tensor):
        if value.ndim != 0 or value.dtype.is_floating_point or value.dtype.name == "bool":
            raise TypeError(f"group_by_window: {what} must return an int64 scalar, got a "
                            f"{value.dtype.name} tensor of shape {list(value.shape)}")
        return int(value.item())
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise TypeError(f"group_by_window: {what} must return an int64 scalar, got "
                        f"{type(value).__name__}")
    return int(value)


@register_transformation
class GroupByWindowDataset(_UnaryDataset):
    """Elements gather per key; a group that reaches its window size becomes
    ``reduce_func(key, window)``'s elements; at the end the unfinished groups follow, by
    ascending key (tf.data's order)."""

    def __init__(self, input_dataset, key_func, reduce_func, window_size, window_size_func):
        super().__init__(input_dataset)
        for name, fn in (("key_func", key_func), ("reduce_func", reduce_func)):
            if not callable(fn):
                raise TypeError(f"group_by_window: {name} must be callable, got "
                                f"{type(fn).__name__}")
        if (window_size is None) == (window_size_func is None):
            raise ValueError("group_by_window: give exactly one of window_size and "
                             "window_size_func")
        if window_size is not None:
            size = check_int(window_size, "group_by_window: window_size", 1)
            window_size_func = lambda key: size  # noqa: E731
        self._key_func, self._reduce_func = key_func, reduce_func
        self._window_size_func = window_size_func
        self._input_spec = None

    def _window_spec(self):
        if self._input_spec is None:
            self._input_spec = self._input._element_spec()
        return self._input_spec

    def _cardinality(self):
        n = self._input._cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _reduced(self, key, group):
        window = _BufferedDataset(group, self._window_spec)
        out = self._reduce_func(_int64(key), window)
        if not isinstance(out, Dataset):
            raise TypeError(f"group_by_window: reduce_func must return a Dataset, got "
                            f"{type(out).__name__}")
        return out._elements()

    def _elements(self):
        groups = {}
        for element in self._input._elements():
            key = _key(_apply_fn(self._key_func, element), "key_func")
            group = groups.setdefault(key, [])
            group.append(element)
            size = check_int(_key(self._window_size_func(_int64(key)), "window_size_func"),
                             "group_by_window: window_size_func's result", 1)
            if len(group) >= size:
                del groups[key]
                yield from self._reduced(key, group)
        for key in sorted(groups):
            yield from self._reduced(key, groups[key])

    @classmethod
    def by_sequence_length(cls, dataset, element_length_func, bucket_boundaries,
                           bucket_batch_sizes, padded_shapes, padding_values,
                           pad_to_bucket_boundary, no_padding, drop_remainder):
        """Dataset.bucket_by_sequence_length: group_by_window keyed by the bucket of each
        element's length, each window padded-batched (or batched, with ``no_padding``)."""
        boundaries = [check_int(b, "bucket_by_sequence_length: bucket_boundaries", 1)
                      for b in bucket_boundaries]
        if boundaries != sorted(boundaries):
            raise ValueError(f"bucket_by_sequence_length: bucket_boundaries must be sorted, got "
                             f"{list(bucket_boundaries)}")
        sizes = [check_int(b, "bucket_by_sequence_length: bucket_batch_sizes", 1)
                 for b in bucket_batch_sizes]
        if len(sizes) != len(boundaries) + 1:
            raise ValueError(f"bucket_by_sequence_length: len(bucket_batch_sizes) must equal "
                             f"len(bucket_boundaries) + 1, got {len(sizes)} and "
                             f"{len(boundaries)}")
        if not callable(element_length_func):
            raise TypeError("bucket_by_sequence_length: element_length_func must be callable")

        def bucket(*element):
            length = _key(element_length_func(*element), "element_length_func")
            index = bisect.bisect_right(boundaries, length)
            if pad_to_bucket_boundary and index == len(boundaries):
                raise errors.InvalidArgumentError(
                    f"bucket_by_sequence_length: an element of length {length} is not below the "
                    f"largest bucket boundary {boundaries[-1]}, which pad_to_bucket_boundary "
                    "needs", "BucketBySequenceLength")
            return index

        def batch_window(key, window):
            index, size = int(key.item()), sizes[int(key.item())]
            if no_padding:
                return window.batch(size, drop_remainder=drop_remainder)
            shapes = padded_shapes
            if pad_to_bucket_boundary:
                spec = padded_shapes if padded_shapes is not None else _specs_map(
                    window.element_spec, lambda s: list(s.shape))
                structure, leaves = _flatten(spec if not isinstance(spec, list) else tuple([spec]))
                filled = [[boundaries[index] - 1 if d in (None, -1) else d for d in leaf.shape]
                          if isinstance(leaf, TensorSpec) else
                          [boundaries[index] - 1 if d in (None, -1) else d for d in leaf]
                          for leaf in leaves]
                shapes = filled[0] if isinstance(spec, list) else _pack(structure, filled)
            return window.padded_batch(size, padded_shapes=shapes, padding_values=padding_values,
                                       drop_remainder=drop_remainder)

        return cls(dataset, bucket, batch_window, None, lambda key: sizes[int(key.item())])


@register_transformation
class RebatchDataset(_UnaryDataset):
    """The rows of the input's batches in new batches of ``batch_size`` (a list of sizes is used
    in turn), as ``unbatch().batch(...)``."""

    def __init__(self, input_dataset, batch_size, drop_remainder):
        super().__init__(input_dataset)
        sizes = list(batch_size) if isinstance(batch_size, (list, tuple)) else [batch_size]
        if not sizes:
            raise ValueError("rebatch: batch_size must be a positive int or a non-empty list")
        self._sizes = [check_int(s, "rebatch: batch_size", 1) for s in sizes]
        self._drop_remainder = bool(drop_remainder)

    def _cardinality(self):
        n = self._input._cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _element_spec(self):
        size = self._sizes[0] if self._drop_remainder and len(set(self._sizes)) == 1 else None
        return _specs_map(self._input._element_spec(),
                          lambda spec: TensorSpec((size, *spec.shape[1:]), spec.dtype))

    def _elements(self):
        rows = self._input.unbatch()._elements()
        for size in itertools.cycle(self._sizes):
            batch = list(itertools.islice(rows, size))
            if not batch or (self._drop_remainder and len(batch) < size):
                return
            yield from _BufferedDataset(batch, None).batch(size)._elements()
