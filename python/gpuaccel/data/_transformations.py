"""tf.data transformations beyond the fast row-index core of ``dataset.py``: ``cache``,
``unbatch``, ``filter``, ``zip``, ``from_generator``, ``padded_batch``, ``interleave``,
``flat_map``, ``skip``, ``enumerate``, ``concatenate``, ``take_while``, ``shard``, ``unique``,
``ignore_errors``, ``scan`` and ``with_options``, with TensorFlow's semantics.

``cache`` keeps the fast path where it can: over a pipeline that is still row indices of a
``from_tensor_slices`` source it freezes the first epoch's indices (so ``shuffle().cache()``
repeats the first order, as tf.data does) and batches keep being gathered in C++.
"""
import itertools
import numbers

import numpy as np

from .._host_strings import is_host_string
from .._int_range import check_int
from .._tensor import Tensor
from .._tensor_spec import TensorSpec
from . import _options
from .dataset import (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, _CountedDataset,
                      _LEAF, _PassThroughDataset, _UnaryDataset, _apply_fn, _as_element, _as_tensor,
                      _flatten, _pack, _specs_map, dropping_errors, error_dropped,
                      register_transformation)


def _truth(value, transformation="filter"):
    if isinstance(value, Tensor):
        if value.numel() != 1:
            raise ValueError(f"{transformation}: the predicate must return a scalar boolean, got "
                             f"shape {list(value.shape)}")
        return bool(value.item())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"{transformation}: the predicate must return a boolean or a scalar bool "
                    f"tensor, got {type(value).__name__}")


@register_transformation
class CacheDataset(_PassThroughDataset):
    def __init__(self, input_dataset, filename):
        super().__init__(input_dataset)
        if not isinstance(filename, str):
            raise TypeError(f"cache: filename must be a string, got {type(filename).__name__}")
        self._indices = None
        self._elements_cache = None

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        source, indices_fn = plan

        def frozen():
            if self._indices is None:
                self._indices = np.asarray(indices_fn(), dtype=np.int64)
            return self._indices
        return source, frozen

    def _elements(self):
        plan = self._index_plan()
        if plan is not None:
            source, indices_fn = plan
            return source._rows(indices_fn())
        if self._elements_cache is not None:
            return iter(self._elements_cache)
        return self._filling()

    def _filling(self):
        seen = []
        for element in self._input._elements():
            seen.append(element)
            yield element
        self._elements_cache = seen  # only a complete pass is kept, as tf.data


@register_transformation
class UnbatchDataset(_UnaryDataset):
    def _cardinality(self):
        return UNKNOWN_CARDINALITY if self._input._cardinality() >= 0 else \
            self._input._cardinality()

    def _element_spec(self):
        return _specs_map(self._input._element_spec(),
                          lambda spec: TensorSpec(spec.shape[1:], spec.dtype))

    def _elements(self):
        for batch in self._input._elements():
            structure, leaves = _flatten(batch)
            sizes = {int(leaf.shape[0]) if leaf.ndim else -1 for leaf in leaves}
            if -1 in sizes or len(sizes) != 1:
                raise ValueError("unbatch: every component needs the same leading (batch) "
                                 f"dimension, got shapes {[list(l.shape) for l in leaves]}")
            for i in range(sizes.pop()):
                yield _pack(structure, [leaf[i] for leaf in leaves])


@register_transformation
class FilterDataset(_PassThroughDataset):
    _NAME = "filter"

    def __init__(self, input_dataset, predicate):
        super().__init__(input_dataset)
        if not callable(predicate):
            raise TypeError(f"{self._NAME}: predicate must be callable, got "
                            f"{type(predicate).__name__}")
        self._predicate = predicate

    def _cardinality(self):
        n = self._input._cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _keeps(self, element):
        """The predicate's verdict; None when it raised inside ``ignore_errors``."""
        try:
            return _truth(_apply_fn(self._predicate, element), self._NAME)
        except Exception as error:  # noqa: BLE001 - dropped only where ignore_errors asks
            if error_dropped(error):
                return None
            raise

    def _elements(self):
        for element in self._input._elements():
            if self._keeps(element):
                yield element


@register_transformation
class TakeWhileDataset(FilterDataset):
    _NAME = "take_while"

    def _elements(self):
        for element in self._input._elements():
            verdict = self._keeps(element)
            if verdict is False:
                return
            if verdict:
                yield element


@register_transformation
class ShardDataset(_PassThroughDataset):
    def __init__(self, input_dataset, num_shards, index):
        super().__init__(input_dataset)
        self._num_shards = check_int(num_shards, "shard: num_shards", 1)
        self._index = check_int(index, "shard: index", 0)
        if self._index >= self._num_shards:
            raise ValueError(f"shard: index must be in [0, num_shards), got index={index} with "
                             f"num_shards={num_shards}")

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return max(0, -(-(n - self._index) // self._num_shards))

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        source, indices_fn = plan
        return source, lambda: indices_fn()[self._index::self._num_shards]

    def _elements(self):
        return itertools.islice(self._input._elements(), self._index, None, self._num_shards)


@register_transformation
class UniqueDataset(_PassThroughDataset):
    def _cardinality(self):
        n = self._input._cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _elements(self):
        seen = set()
        for element in self._input._elements():
            if not isinstance(element, Tensor) or element.ndim != 0 or \
                    element.dtype.is_floating_point:
                raise TypeError("unique: the elements must be integer or boolean scalars, got "
                                + (f"a {element.dtype.name} tensor of shape "
                                   f"{list(element.shape)}" if isinstance(element, Tensor)
                                   else f"a {type(element).__name__}"))
            value = element.item()
            if value not in seen:
                seen.add(value)
                yield element


@register_transformation
class IgnoreErrorsDataset(_PassThroughDataset):
    """Pulls its input with ``dropping_errors`` on, so a ``map`` function or ``filter``
    predicate that raises drops its element instead of ending the epoch."""

    def __init__(self, input_dataset, log_warning):
        super().__init__(input_dataset)
        self._log_warning = bool(log_warning)

    def _cardinality(self):
        n = self._input._cardinality()
        return n if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _elements(self):
        it = self._input._elements()
        while True:
            with dropping_errors(self._log_warning):
                element = next(it, _END)
            if element is _END:
                return
            yield element


_END = object()


@register_transformation
class ScanDataset(_UnaryDataset):
    def __init__(self, input_dataset, initial_state, scan_func):
        super().__init__(input_dataset)
        if not callable(scan_func):
            raise TypeError(f"scan: scan_func must be callable, got {type(scan_func).__name__}")
        self._initial_state = _as_element(initial_state)
        self._fn = scan_func

    def _elements(self):
        state = self._initial_state
        structure = _flatten(state)[0]
        for element in self._input._elements():
            result = self._fn(state, element)
            if not isinstance(result, tuple) or len(result) != 2:
                raise TypeError("scan: scan_func must return a (new_state, output_element) pair, "
                                f"got {type(result).__name__}")
            state, output = _as_element(result[0]), _as_element(result[1])
            if _flatten(state)[0] != structure:
                raise TypeError(f"scan: the new state must have the initial state's structure "
                                f"{structure!r}, got {_flatten(state)[0]!r}")
            yield output


@register_transformation
class OptionsDataset(_PassThroughDataset):
    def __init__(self, input_dataset, options):
        super().__init__(input_dataset)
        if not isinstance(options, _options.Options):
            raise TypeError("with_options: options must be a gpuaccel.data.Options, got "
                            f"{type(options).__name__}")
        self._own_options = options

    def _index_plan(self):
        return self._input._index_plan()

    def _elements(self):
        return self._input._elements()

    merged = staticmethod(_options.merged)


@register_transformation
class ZipDataset(Dataset):
    def __init__(self, datasets):
        structure, leaves = _flatten(datasets)
        if not leaves or not all(isinstance(d, Dataset) for d in leaves):
            raise TypeError("zip expects a (nested) tuple or dict of datasets")
        self._structure, self._datasets = structure, leaves

    def _cardinality(self):
        counts = [d._cardinality() for d in self._datasets]
        finite = [c for c in counts if c >= 0]
        if finite:
            return min(finite)
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else INFINITE_CARDINALITY

    def _element_spec(self):
        return _pack(self._structure, [d._element_spec() for d in self._datasets])

    def _elements(self):
        for parts in zip(*(d._elements() for d in self._datasets)):
            yield _pack(self._structure, list(parts))


@register_transformation
class ConcatenateDataset(Dataset):
    def __init__(self, first, second):
        if not isinstance(second, Dataset):
            raise TypeError(f"concatenate expects a Dataset, got {type(second).__name__}")
        self._first, self._second = first, second

    def _cardinality(self):
        a, b = self._first._cardinality(), self._second._cardinality()
        if INFINITE_CARDINALITY in (a, b):
            return INFINITE_CARDINALITY
        return a + b if a >= 0 and b >= 0 else UNKNOWN_CARDINALITY

    def _element_spec(self):
        """The most specific spec both inputs' elements fit (a dimension they disagree on, or
        both ranks when those differ, becomes unknown), as tf.data's."""
        first, second = self._first._element_spec(), self._second._element_spec()
        s1, leaves1 = _flatten(first)
        s2, leaves2 = _flatten(second)
        if s1 != s2 or any(a.dtype != b.dtype for a, b in zip(leaves1, leaves2)):
            raise TypeError(f"concatenate: the datasets' elements differ in structure or dtype: "
                            f"{first!r} and {second!r}")
        return _pack(s1, [TensorSpec(None if a.shape is None or b.shape is None or
                                     len(a.shape) != len(b.shape) else
                                     [x if x == y else None for x, y in zip(a.shape, b.shape)],
                                     a.dtype) for a, b in zip(leaves1, leaves2)])

    def _elements(self):
        return itertools.chain(self._first._elements(), self._second._elements())


@register_transformation
class SkipDataset(_CountedDataset):
    def _cardinality(self):
        n = self._input._cardinality()
        if self._count < 0:
            return 0 if n >= 0 else n
        return max(n - self._count, 0) if n >= 0 else n

    def _index_plan(self):
        plan = self._input._index_plan()
        if plan is None:
            return None
        source, indices_fn = plan
        return source, lambda: indices_fn()[self._count:] if self._count >= 0 else \
            indices_fn()[:0]

    def _elements(self):
        if self._count < 0:
            return iter(())
        return itertools.islice(self._input._elements(), self._count, None)


@register_transformation
class EnumerateDataset(_UnaryDataset):
    def __init__(self, input_dataset, start):
        super().__init__(input_dataset)
        self._start = check_int(start, "start", -(1 << 62))

    def _element_spec(self):
        return (TensorSpec((), "int64"), self._input._element_spec())

    def _elements(self):
        for i, element in enumerate(self._input._elements(), self._start):
            yield (_as_tensor(np.int64(i)), element)


def _spec_leaves(output_signature):
    structure, leaves = _flatten(output_signature)
    return structure, leaves


def _check_spec(leaf, spec, position):
    shape = getattr(spec, "shape", None)
    dtype = getattr(spec, "dtype", None)
    if dtype is not None and leaf.dtype != dtype:
        leaf = leaf.to(dtype)
    if shape is not None:
        expected = list(shape)
        actual = list(leaf.shape)
        if len(expected) != len(actual) or any(e is not None and e != a
                                               for e, a in zip(expected, actual)):
            raise TypeError(f"from_generator: element component {position} has shape {actual}, "
                            f"which does not match the output_signature shape {expected}")
    return leaf


def _shapes_up_to(structure, shapes):
    """One shape per component of ``output_types``' structure: ``output_shapes`` nests like
    the types only down to their leaves, where a tuple or list is a shape (TF's rule: with
    ``output_types=tf.int32``, ``output_shapes=()`` is a scalar's shape, not an empty
    structure)."""
    if structure is _LEAF:
        return [shapes]
    if isinstance(structure, tuple):
        if not isinstance(shapes, (tuple, list)) or len(shapes) != len(structure):
            raise ValueError(f"from_generator: `output_shapes` {shapes!r} does not match the "
                             f"structure of `output_types` ({len(structure)} components)")
        return [shape for s, part in zip(structure, shapes) for shape in _shapes_up_to(s, part)]
    if not isinstance(shapes, dict) or set(shapes) != set(structure):
        raise ValueError(f"from_generator: `output_shapes` {shapes!r} does not have the keys "
                         f"of `output_types` {sorted(structure)}")
    return [shape for key, s in structure.items() for shape in _shapes_up_to(s, shapes[key])]


@register_transformation
class GeneratorDataset(Dataset):
    def __init__(self, generator, output_types, output_shapes, args, output_signature):
        if not callable(generator):
            raise TypeError("from_generator: `generator` must be a callable that returns an "
                            f"iterator, got {type(generator).__name__}")
        if output_signature is None and output_types is None:
            raise TypeError("from_generator: `output_signature` (or the deprecated "
                            "`output_types`) must be given, as in TensorFlow")
        self._generator = generator
        self._args = tuple(args or ())
        self._signature = output_signature
        self._types, self._shapes = output_types, output_shapes

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        if self._signature is not None:
            return self._signature
        return _pack(_flatten(self._types)[0], self._specs())

    def _specs(self):
        if self._signature is not None:
            return _flatten(self._signature)[1]
        structure, types = _flatten(self._types)
        shapes = (_shapes_up_to(structure, self._shapes) if self._shapes is not None
                  else [None] * len(types))
        from .._tensor_spec import TensorSpec
        return [TensorSpec(s, t) for s, t in zip(shapes, types)]

    def _elements(self):
        specs = self._specs()
        for value in self._generator(*self._args):
            structure, leaves = _flatten(value if not isinstance(value, list) else tuple(value))
            if len(leaves) != len(specs):
                raise TypeError(f"from_generator: the generator yielded {len(leaves)} "
                                f"components, the signature has {len(specs)}")
            yield _pack(structure, [_check_spec(_as_tensor(np.asarray(v) if not isinstance(
                v, Tensor) else v), spec, i) for i, (v, spec) in enumerate(zip(leaves, specs))])


@register_transformation
class PaddedBatchDataset(_UnaryDataset):
    def __init__(self, input_dataset, batch_size, padded_shapes, padding_values, drop_remainder):
        super().__init__(input_dataset)
        self._batch_size = check_int(batch_size, "batch_size", 1)
        self._padded_shapes = padded_shapes
        self._padding_values = padding_values
        self._drop_remainder = bool(drop_remainder)

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return n // self._batch_size if self._drop_remainder else -(-n // self._batch_size)

    def _element_spec(self):
        spec = self._input._element_spec()
        structure, leaves = _flatten(spec)
        targets = self._target_shapes(len(leaves))
        size = self._batch_size if self._drop_remainder else None
        return _pack(structure, [TensorSpec(
            (size, *([None] * len(leaf.shape) if target is None else
                     [None if d in (None, -1) else int(d) for d in target])), leaf.dtype)
            for leaf, target in zip(leaves, targets)])

    def _target_shapes(self, count):
        if self._padded_shapes is None:
            return [None] * count
        is_shape = isinstance(self._padded_shapes, (list, tuple)) and all(
            d is None or isinstance(d, numbers.Integral) for d in self._padded_shapes)
        # (3,) is one component's shape, as in TF, not a structure of three components
        leaves = [self._padded_shapes] if isinstance(self._padded_shapes, list) or (
            count == 1 and is_shape) else _flatten(self._padded_shapes)[1]
        if len(leaves) != count:
            raise ValueError(f"padded_batch: padded_shapes has {len(leaves)} components, the "
                             f"elements have {count}")
        return leaves

    def _pad_values(self, count):
        if self._padding_values is None:
            return [0] * count
        leaves = _flatten(self._padding_values)[1]
        return leaves if len(leaves) == count else leaves * count

    def _elements(self):
        it = self._input._elements()
        while True:
            elements = list(itertools.islice(it, self._batch_size))
            if not elements or (self._drop_remainder and len(elements) < self._batch_size):
                return
            structure = _flatten(elements[0])[0]
            columns = list(zip(*(_flatten(e)[1] for e in elements)))
            targets = self._target_shapes(len(columns))
            values = self._pad_values(len(columns))
            yield _pack(structure, [self._padded(col, t, v, i) for i, (col, t, v) in
                                    enumerate(zip(columns, targets, values))])

    @staticmethod
    def _padded(column, target, value, position):
        strings = all(is_host_string(c) for c in column)
        if strings:
            # object arrays (NumPy's fixed-width bytes would cut longer strings to the first's
            # width); TF pads strings with b"" where numbers get 0
            arrays = [np.asarray(c.numpy(), dtype=object) for c in column]
            value = b"" if value is None or (isinstance(value, int) and value == 0) else value
        else:
            arrays = [np.asarray(c.numpy()) for c in column]
        ranks = {a.ndim for a in arrays}
        if len(ranks) != 1:
            raise ValueError(f"padded_batch: component {position} has elements of different "
                             f"ranks {sorted(ranks)}")
        longest = np.max([a.shape for a in arrays], axis=0) if arrays[0].ndim else np.array([])
        shape = [int(d) for d in longest]
        if target is not None:
            target = list(target) if isinstance(target, (list, tuple)) else target
            if not isinstance(target, list) or len(target) != len(shape) or not all(
                    d is None or (isinstance(d, numbers.Integral) and d >= -1) for d in target):
                raise ValueError(f"padded_batch: the padded shape of component {position} must "
                                 f"list {len(shape)} sizes (ints, or -1/None for the longest), "
                                 f"got {target!r}")
            for k, d in enumerate(target):
                if d is not None and d != -1:
                    if shape[k] > d:
                        raise ValueError(f"padded_batch: component {position} has size "
                                         f"{shape[k]} in dimension {k}, above the padded shape "
                                         f"{d}")
                    shape[k] = int(d)
        out = np.full([len(arrays)] + shape, value, dtype=arrays[0].dtype)
        for i, a in enumerate(arrays):
            out[(i,) + tuple(slice(0, n) for n in a.shape)] = a
        return _as_tensor(out)


@register_transformation
class InterleaveDataset(_UnaryDataset):
    """TF's order: ``cycle_length`` input elements are open at once; each yields
    ``block_length`` elements in turn; an exhausted one is replaced by the next input."""

    def __init__(self, input_dataset, map_func, cycle_length, block_length):
        super().__init__(input_dataset)
        if not callable(map_func):
            raise TypeError(f"map_func must be callable, got {type(map_func).__name__}")
        self._fn = map_func
        self._cycle = check_int(cycle_length, "cycle_length", 1)
        self._block = check_int(block_length, "block_length", 1)

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    def _open(self, element):
        dataset = _apply_fn(self._fn, element)
        if not isinstance(dataset, Dataset):
            raise TypeError(f"interleave: map_func must return a Dataset, got "
                            f"{type(dataset).__name__}")
        return dataset._elements()

    def _elements(self):
        inputs = self._input._elements()
        slots = [self._open(e) for e in itertools.islice(inputs, self._cycle)]
        while slots:
            k = 0
            while k < len(slots):
                block = list(itertools.islice(slots[k], self._block))
                yield from block
                if len(block) < self._block:
                    replacement = next(inputs, None)
                    if replacement is None:
                        slots.pop(k)
                        continue
                    slots[k] = self._open(replacement)  # starts at its next turn, as tf.data
                k += 1
