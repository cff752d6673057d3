"""``torch.utils.data`` of the PyTorch face: map-style and iterable datasets, samplers, the
DataLoader and its default collation, as PyTorch 1.13 defines them; ``distributed`` has the
DistributedSampler. Loading runs in the calling
process (``num_workers`` is accepted and loads there too)."""
from . import distributed
from ._collate import default_collate, default_convert
from .dataloader import DataLoader
from .dataset import (ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset,
                      random_split)
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler

__all__ = ["DataLoader", "Dataset", "IterableDataset", "TensorDataset", "Subset",
           "ConcatDataset", "random_split", "Sampler", "SequentialSampler", "RandomSampler",
           "SubsetRandomSampler", "BatchSampler", "default_collate", "default_convert",
           "distributed"]
