"""torch.utils.data's samplers: which indices a DataLoader reads, in which order, and how
they are grouped into batches."""
from ._generator import check_generator, permutation


class Sampler:
    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A new random order of the dataset each pass (without replacement), from ``generator``
    or else the global generator (torch.manual_seed)."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.generator = check_generator(generator, "RandomSampler")
        if replacement or num_samples is not None:
            raise ValueError("RandomSampler supports replacement=False and num_samples=None "
                             "only (one permutation of the dataset per pass)")
        self.data_source, self.replacement = data_source, replacement

    def __iter__(self):
        return iter(permutation(len(self.data_source), self.generator))

    def __len__(self):
        return len(self.data_source)


class SubsetRandomSampler(Sampler):
    def __init__(self, indices, generator=None):
        self.indices, self.generator = indices, check_generator(generator, "SubsetRandomSampler")

    def __iter__(self):
        return iter([self.indices[i] for i in permutation(len(self.indices), self.generator)])

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    def __init__(self, sampler, batch_size, drop_last):
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got "
                             f"drop_last={drop_last}")
        self.sampler, self.batch_size, self.drop_last = sampler, batch_size, drop_last

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
