"""torch.utils.data's datasets: Dataset (map-style), IterableDataset, TensorDataset, Subset,
ConcatDataset and random_split."""
import bisect
import math
import numbers

from ...._tensor import Tensor
from ._generator import check_generator, permutation


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iterating it (``__iter__``); the DataLoader batches what it yields."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class TensorDataset(Dataset):
    """Sample i is ``tuple(t[i] for t in tensors)``; the tensors share their first size."""

    def __init__(self, *tensors):
        if not tensors:
            raise ValueError("TensorDataset needs at least one tensor")
        sizes = {t.shape[0] if isinstance(t, Tensor) and t.ndim else None for t in tensors}
        if len(sizes) != 1 or None in sizes:
            raise AssertionError("Size mismatch between tensors")  # PyTorch's assert, words
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")  # PyTorch asserts
        for dataset in self.datasets:
            if isinstance(dataset, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes, total = [], 0
        for dataset in self.datasets:
            total += len(dataset)
            self.cumulative_sizes.append(total)

    def __len__(self):
        return self.cumulative_sizes[-1] if self.cumulative_sizes else 0

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def _split_lengths(total, lengths):
    """Integer lengths, or fractions turned into lengths as PyTorch 1.13 does (floor of each,
    then one more to the first ones, round-robin, until they add up)."""
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = []
        for fraction in lengths:
            if not 0 <= fraction <= 1:
                raise ValueError(f"Fraction at index {len(sizes)} is not between 0 and 1")
            sizes.append(int(math.floor(total * fraction)))
        for i in range(total - sum(sizes)):
            sizes[i % len(sizes)] += 1
        return sizes
    for length in lengths:
        if isinstance(length, bool) or not isinstance(length, numbers.Integral):
            raise ValueError(f"lengths must be ints or fractions that sum to 1, got {lengths}")
    return list(lengths)


def random_split(dataset, lengths, generator=None):
    """Disjoint random Subsets of the given lengths (ints adding up to len(dataset), or
    fractions adding up to 1), in an order drawn from ``generator`` (else the global one)."""
    check_generator(generator, "random_split")
    sizes = _split_lengths(len(dataset), list(lengths))
    if sum(sizes) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = permutation(sum(sizes), generator)
    subsets, start = [], 0
    for size in sizes:
        subsets.append(Subset(dataset, order[start:start + size]))
        start += size
    return subsets
