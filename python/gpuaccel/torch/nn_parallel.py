"""``torch.nn.parallel`` of the PyTorch face: DistributedDataParallel (one process per rank,
over torch.distributed). ``DataParallel`` (one process driving several GPUs) is not here."""
from .. import _unsupported
from ._distributed_data_parallel import DistributedDataParallel

__all__ = ["DistributedDataParallel"]

__getattr__ = _unsupported.module_getattr(__name__, "torch.nn.parallel", {
    "DataParallel": "DistributedDataParallel with one process per GPU (mp.spawn)",
})
