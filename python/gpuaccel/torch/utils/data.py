"""``torch.utils.data`` of the PyTorch face: ``Dataset``, ``IterableDataset``, ``TensorDataset``,
``Subset``, ``ConcatDataset``, ``random_split``, ``default_collate`` and ``DataLoader``.

Why: PyTorch's tutorials feed their training loops through ``DataLoader(dataset, batch_size,
shuffle=True)`` over map-style datasets (``torch.utils`` is the face's second most used missing
name in them). ``gpuaccel.data.Dataset`` is tf.data's face, with other semantics (a pipeline of
transformations rather than indexable samples batched by a collate function), so the torch
meaning lives here, composed in Python over ``torch.stack`` after PyTorch 1.13's rules.

Where it differs from torch: loading runs in the calling process whatever ``num_workers`` says
(the batches and their order are the same; workers only overlap loading with compute);
``pin_memory`` has nothing to pin; shuffling draws from gpuaccel's generator
(``torch.manual_seed`` makes it repeatable, but the permutation is not PyTorch's), and a
``generator=`` argument is refused (gpuaccel has no ``torch.Generator``); Python floats collate
to float32 (gpuaccel has no float64; torch makes float64).
"""
import bisect
import collections.abc
import itertools
import math

import numpy as np

from ... import _torch_functions
from ..._array_ops import stack
from ..._torch_functions import randperm
from ..._tensor import Tensor

__all__ = ["ConcatDataset", "DataLoader", "Dataset", "IterableDataset", "Subset",
           "TensorDataset", "default_collate", "random_split"]


class Dataset:
    """A map-style dataset: ``__getitem__(index)`` and ``__len__``; ``a + b`` concatenates."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iterating it (``__iter__``), in its own order."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other):
        raise TypeError("an IterableDataset is concatenated with ChainDataset, which gpuaccel "
                        "does not have yet; chain the iterators with itertools.chain")


class TensorDataset(Dataset):
    """Sample ``i`` is ``tuple(t[i] for t in tensors)``; all tensors share their first size."""

    def __init__(self, *tensors):
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    """The samples of several map-style datasets one after the other."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        for dataset in self.datasets:
            if isinstance(dataset, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(itertools.accumulate(len(d) for d in self.datasets))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def _refuse_generator(generator):
    if generator is not None:
        raise TypeError("generator= is not supported by gpuaccel (it has no torch.Generator); "
                        "seed gpuaccel's generator with torch.manual_seed instead")


def random_split(dataset, lengths, generator=None):
    """Splits ``dataset`` into non-overlapping Subsets of the given lengths (or fractions that
    sum to 1, the remainder going one by one to the first splits) in a random order."""
    _refuse_generator(generator)
    total = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        for index, fraction in enumerate(lengths):
            if not 0 <= fraction <= 1:
                raise ValueError(f"Fraction at index {index} is not between 0 and 1")
        sizes = [int(math.floor(total * fraction)) for fraction in lengths]
        for i in range(total - sum(sizes)):
            sizes[i % len(sizes)] += 1
        lengths = sizes
    if sum(lengths) != total:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = randperm(total).tolist()
    offsets = [0, *itertools.accumulate(lengths)]
    return [Subset(dataset, order[offsets[i]:offsets[i + 1]]) for i in range(len(lengths))]


_COLLATE_ERROR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or "
                  "lists; found {}")


def default_collate(batch):
    """Stacks a list of samples into a batch: tensors, arrays and numbers along a new first
    axis, dicts key by key, tuples and lists field by field (tuples give lists, as in torch)."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), dim=0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "SaUO":
        return default_collate([_torch_functions.as_tensor(b) for b in batch])
    if isinstance(elem, np.generic) and elem.dtype.kind not in "SaUO":
        return _torch_functions.as_tensor(np.array(batch))
    if isinstance(elem, bool):
        return _torch_functions.as_tensor(np.array(batch))
    if isinstance(elem, float):
        return _torch_functions.as_tensor(np.array(batch, np.float32))
    if isinstance(elem, int):
        return _torch_functions.as_tensor(np.array(batch, np.int64))
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in elem}
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(list(field)) for field in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(sample) != len(elem) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(list(field)) for field in zip(*batch)]
    raise TypeError(_COLLATE_ERROR.format(type(elem)))


class DataLoader:
    """Batches of a dataset: ``batch_size`` samples (the last batch shorter unless
    ``drop_last``) collated by ``collate_fn``, in order or shuffled each epoch; ``sampler``
    (indices) or ``batch_sampler`` (lists of indices) choose the samples instead."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=2, persistent_workers=False, pin_memory_device=""):
        _refuse_generator(generator)
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if isinstance(dataset, IterableDataset):
            if shuffle not in (None, False):
                raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle "
                                 f"option, but got shuffle={shuffle}")
            if sampler is not None or batch_sampler is not None:
                raise ValueError("DataLoader with IterableDataset: expected unspecified sampler "
                                 "and batch_sampler options")
        elif sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None and (batch_size != 1 or shuffle or sampler is not None
                                          or drop_last):
            raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                             "shuffle, sampler, and drop_last")
        if batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        self.dataset = dataset
        self.batch_size = None if batch_sampler is not None else batch_size
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.num_workers = num_workers
        self.drop_last = drop_last
        self.pin_memory = pin_memory
        self._auto_collation = batch_sampler is not None or batch_size is not None
        self.collate_fn = collate_fn or (default_collate if self._auto_collation
                                         else _default_convert)

    def _indices(self):
        if self.sampler is not None:
            return iter(self.sampler)
        if self.shuffle:
            return iter(randperm(len(self.dataset)).tolist())
        return iter(range(len(self.dataset)))

    def _index_batches(self):
        if self.batch_sampler is not None:
            yield from self.batch_sampler
            return
        yield from _chunks(self._indices(), self.batch_size, self.drop_last)

    def __iter__(self):
        if isinstance(self.dataset, IterableDataset):
            if not self._auto_collation:
                yield from map(self.collate_fn, self.dataset)
                return
            for samples in _chunks(iter(self.dataset), self.batch_size, self.drop_last):
                yield self.collate_fn(samples)
            return
        if not self._auto_collation:
            for index in self._indices():
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self._index_batches():
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self):
        if isinstance(self.dataset, IterableDataset):
            count = len(self.dataset)  # a TypeError when the dataset has no length, as in torch
        elif self.batch_sampler is not None:
            return len(self.batch_sampler)
        else:
            count = len(self.sampler) if self.sampler is not None else len(self.dataset)
        if self.batch_size is None:
            return count
        whole, rest = divmod(count, self.batch_size)
        return whole + (1 if rest and not self.drop_last else 0)


def _chunks(items, size, drop_last):
    """Lists of ``size`` consecutive items (the last one shorter unless ``drop_last``)."""
    chunk = []
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk and not drop_last:
        yield chunk


def _default_convert(sample):
    """A sample as it is when ``batch_size=None`` turns batching off (arrays become tensors)."""
    if isinstance(sample, np.ndarray) and sample.dtype.kind not in "SaUO":
        return _torch_functions.as_tensor(sample)
    if isinstance(sample, collections.abc.Mapping):
        return {key: _default_convert(value) for key, value in sample.items()}
    if isinstance(sample, tuple) and hasattr(sample, "_fields"):
        return type(sample)(*(_default_convert(value) for value in sample))
    if isinstance(sample, (list, tuple)):
        return type(sample)(_default_convert(value) for value in sample)
    return sample
