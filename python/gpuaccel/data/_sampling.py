"""tf.data's sources of numbers and its mixers of datasets: ``Dataset.counter``,
``Dataset.random``, ``Dataset.sample_from_datasets`` and ``Dataset.choose_from_datasets``.

Why together: each either draws numbers (seeded NumPy generators, one per epoch, so a seed
reproduces an epoch as TF's does, though not TF's exact values) or picks which input dataset
the next element comes from.
"""
import numpy as np

from .. import errors
from .._int_range import check_int
from .._tensor import Tensor, tensor
from .._tensor_spec import TensorSpec
from .dataset import INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, Dataset, register_transformation

_CHUNK = 256  # numbers made at a time


def _seed(seed, what):
    if seed is None:
        return int(np.random.SeedSequence().entropy % (1 << 63))
    return check_int(seed, f"{what}: seed", 0)


class _EpochDraws:
    """A fresh NumPy generator per iteration: the same one each time unless the dataset
    re-randomizes each iteration (tf.data's ``rerandomize_each_iteration``)."""

    def __init__(self, seed, rerandomize, what):
        # without a seed every iteration draws afresh, as an unseeded TF op does
        self._rerandomize = bool(rerandomize) or seed is None
        self._seed, self._epoch = _seed(seed, what), 0

    def next_generator(self):
        epoch = self._epoch if self._rerandomize else 0
        self._epoch += 1
        return np.random.default_rng([self._seed, epoch])


@register_transformation
class CounterDataset(Dataset):
    def __init__(self, start, step, dtype):
        self._start = check_int(start, "counter: start")
        self._step = check_int(step, "counter: step")
        self._dtype = "int64" if dtype is None else dtype
        self._spec = TensorSpec((), self._dtype)

    def _cardinality(self):
        return INFINITE_CARDINALITY

    def _element_spec(self):
        return self._spec

    def _elements(self):
        value = self._start
        while True:
            chunk = tensor(value + self._step * np.arange(_CHUNK, dtype=np.int64))
            if self._spec.dtype.name != "int64":
                chunk = chunk.to(self._spec.dtype)
            for j in range(_CHUNK):
                yield chunk[j]
            value += self._step * _CHUNK


@register_transformation
class RandomDataset(Dataset):
    """Uniform int64 numbers in [0, 2**32), the range tf.data.Dataset.random draws from."""

    def __init__(self, seed, rerandomize_each_iteration):
        self._draws = _EpochDraws(seed, rerandomize_each_iteration, "random")

    def _cardinality(self):
        return INFINITE_CARDINALITY

    def _element_spec(self):
        return TensorSpec((), "int64")

    def _elements(self):
        rng = self._draws.next_generator()
        while True:
            chunk = tensor(rng.integers(0, 1 << 32, size=_CHUNK, dtype=np.int64))
            for j in range(_CHUNK):
                yield chunk[j]


def _datasets(datasets, what):
    datasets = list(datasets)
    if not datasets or not all(isinstance(d, Dataset) for d in datasets):
        raise TypeError(f"{what}: datasets must be a non-empty list of gpuaccel.data.Dataset, "
                        f"got {[type(d).__name__ for d in datasets]}")
    return datasets


def _mixed_cardinality(datasets):
    counts = [d._cardinality() for d in datasets]
    return INFINITE_CARDINALITY if all(c == INFINITE_CARDINALITY for c in counts) \
        else UNKNOWN_CARDINALITY


@register_transformation
class SampleDataset(Dataset):
    """Each element from a dataset drawn with probability proportional to its weight; an
    exhausted dataset ends the mix (``stop_on_empty_dataset``) or leaves it, the others'
    weights renormalized."""

    def __init__(self, datasets, weights, seed, stop_on_empty_dataset, rerandomize):
        self._datasets = _datasets(datasets, "sample_from_datasets")
        n = len(self._datasets)
        if weights is None:
            weights = np.full(n, 1.0 / n)
        if isinstance(weights, Dataset):
            raise TypeError("sample_from_datasets: weights given as a Dataset are not supported "
                            "here; pass a list of floats")
        weights = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights,
                             dtype=np.float64)
        if weights.shape != (n,) or not np.all(np.isfinite(weights)) or np.any(weights < 0) \
                or weights.sum() <= 0:
            raise ValueError(f"sample_from_datasets: weights must be {n} non-negative finite "
                             f"numbers (one per dataset) with a positive sum, got "
                             f"{weights.tolist()}")
        self._weights = weights
        self._stop_on_empty = bool(stop_on_empty_dataset)
        self._draws = _EpochDraws(seed, rerandomize, "sample_from_datasets")

    def _cardinality(self):
        return _mixed_cardinality(self._datasets)

    def _element_spec(self):
        return self._datasets[0]._element_spec()

    def _elements(self):
        rng = self._draws.next_generator()
        iterators = [d._elements() for d in self._datasets]
        weights = self._weights.copy()
        while weights.sum() > 0:
            k = int(rng.choice(len(iterators), p=weights / weights.sum()))
            element = next(iterators[k], _END)
            if element is not _END:
                yield element
            elif self._stop_on_empty:
                return
            else:
                weights[k] = 0.0


_END = object()


@register_transformation
class ChooseDataset(Dataset):
    def __init__(self, datasets, choice_dataset, stop_on_empty_dataset):
        self._datasets = _datasets(datasets, "choose_from_datasets")
        if not isinstance(choice_dataset, Dataset):
            raise TypeError("choose_from_datasets: choice_dataset must be a Dataset of int64 "
                            f"scalars, got {type(choice_dataset).__name__}")
        self._choices = choice_dataset
        self._stop_on_empty = bool(stop_on_empty_dataset)

    def _cardinality(self):
        n = self._choices._cardinality()
        return n if n == INFINITE_CARDINALITY and all(
            d._cardinality() == INFINITE_CARDINALITY for d in self._datasets) \
            else UNKNOWN_CARDINALITY

    def _element_spec(self):
        return self._datasets[0]._element_spec()

    def _elements(self):
        iterators = [d._elements() for d in self._datasets]
        exhausted = set()
        for choice in self._choices._elements():
            if not isinstance(choice, Tensor) or choice.ndim != 0 or \
                    choice.dtype.name != "int64":
                raise TypeError("choose_from_datasets: choice_dataset must yield int64 scalars, "
                                f"got {getattr(choice, 'dtype', type(choice).__name__)} "
                                f"of shape {list(getattr(choice, 'shape', []))}")
            k = int(choice.item())
            if not 0 <= k < len(iterators):
                raise errors.InvalidArgumentError(
                    f"choose_from_datasets: choice {k} is outside [0, {len(iterators)}), the "
                    "indices of the datasets", "DirectedInterleave")
            if k in exhausted:
                continue
            element = next(iterators[k], _END)
            if element is not _END:
                yield element
                continue
            if self._stop_on_empty:
                return
            exhausted.add(k)
            if len(exhausted) == len(iterators):
                return
