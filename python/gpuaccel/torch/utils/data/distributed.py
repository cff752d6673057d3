"""``torch.utils.data.distributed.DistributedSampler``: each rank reads its own share of the
dataset's indices (rank, rank + world size, ...), padded by repeating the first indices so
every rank reads as many (or cut, with ``drop_last``). With ``shuffle`` the order is PyTorch's
exactly: ``torch.randperm(n)`` from a generator seeded with ``seed + epoch``, so the same
program gives every rank the same indices as under PyTorch."""
import math

import numpy as np

from ...distributed._process_group import get_rank, get_world_size
from .sampler import Sampler


def torch_cpu_randperm(n, seed):
    """``torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()`` of PyTorch's
    CPU generator: a Mersenne Twister (MT19937) seeded with the seed's low 32 bits, whose
    32-bit draws swap each position i with position i + draw % (n - i). NumPy's legacy
    RandomState seeds the same generator the same way from a 32-bit integer seed, and draws
    its raw 32-bit words for ``randint(0, 2**32)``."""
    draws = np.random.RandomState(seed & 0xFFFFFFFF).randint(0, 2 ** 32, size=max(n - 1, 0),
                                                             dtype=np.uint64)
    order = list(range(n))
    for i, draw in enumerate(draws.tolist()):
        j = i + draw % (n - i)
        order[i], order[j] = order[j], order[i]
    return order


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        num_replicas = get_world_size() if num_replicas is None else num_replicas
        rank = get_rank() if rank is None else rank
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                             f"[0, {num_replicas - 1}]")
        self.dataset, self.num_replicas, self.rank = dataset, num_replicas, rank
        self.epoch, self.drop_last, self.shuffle, self.seed = 0, drop_last, shuffle, seed
        if drop_last and len(dataset) % num_replicas != 0:
            self.num_samples = math.ceil((len(dataset) - num_replicas) / num_replicas)
        else:
            self.num_samples = math.ceil(len(dataset) / num_replicas)
        self.total_size = self.num_samples * num_replicas

    def __iter__(self):
        count = len(self.dataset)
        indices = (torch_cpu_randperm(count, self.seed + self.epoch) if self.shuffle
                   else list(range(count)))
        if self.drop_last:
            indices = indices[:self.total_size]
        else:
            missing = self.total_size - len(indices)
            repeats = math.ceil(missing / len(indices)) if indices else 0
            indices += (indices * repeats)[:missing]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples

    def set_epoch(self, epoch):
        """The epoch that, with ``seed``, picks this pass's order (call it before each epoch,
        or every epoch reads the same order)."""
        self.epoch = epoch
