"""``torch.utils.data.DataLoader``: batches of a dataset, read in the calling process, in order
or shuffled each pass (``shuffle=True``, from ``generator`` or else the global generator that
``torch.manual_seed`` seeds), collated with ``default_collate`` unless a ``collate_fn`` is given."""
from ._collate import default_collate, default_convert
from ._generator import check_generator
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=2, persistent_workers=False, pin_memory_device=""):
        self.generator = check_generator(generator, "DataLoader")
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        self.dataset, self.num_workers, self.drop_last = dataset, num_workers, drop_last
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for option, value, unset in (("shuffle", shuffle, not shuffle),
                                         ("sampler", sampler, sampler is None),
                                         ("batch_sampler", batch_sampler, batch_sampler is None)):
                if not unset:
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{option} option, but got {option}={value}")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size, self.sampler, self.batch_sampler = batch_size, sampler, batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_size is not None or batch_sampler is not None \
                else default_convert
        self.collate_fn = collate_fn

    def __iter__(self):
        if self._iterable:
            return self._iterate_stream()
        if self.batch_sampler is None:
            return (self.collate_fn(self.dataset[i]) for i in self.sampler)
        return (self.collate_fn([self.dataset[i] for i in indices])
                for indices in self.batch_sampler)

    def _iterate_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            size = len(self.dataset)
            if self.batch_size is None:
                return size
            return size // self.batch_size if self.drop_last else \
                -(-size // self.batch_size)
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
