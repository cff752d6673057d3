"""``torch.distributed`` of the PyTorch face: the default process group over gpuaccel's
collective engines (Gloo for CPU tensors, MPI, NCCL with a GPU per rank) and its collective
calls, for the DistributedDataParallel tutorials' programs (docs/distribute.md, "PyTorch's
torch.distributed"). ``torch.nn.parallel.DistributedDataParallel`` and
``torch.utils.data.distributed.DistributedSampler`` build on it."""
from ... import _unsupported
from ._collectives import (ReduceOp, Work, all_gather, all_reduce, barrier, broadcast,
                           reduce)
from ._process_group import (Backend, GroupMember, ProcessGroup, default_pg_timeout,
                             destroy_process_group, get_backend, get_rank, get_world_size, group,
                             init_process_group, is_available, is_gloo_available,
                             is_initialized, is_mpi_available, is_nccl_available)

__all__ = ["is_available", "is_gloo_available", "is_mpi_available", "is_nccl_available",
           "init_process_group", "destroy_process_group", "is_initialized", "get_rank",
           "get_world_size", "get_backend", "Backend", "ReduceOp", "ProcessGroup", "GroupMember",
           "group", "Work", "default_pg_timeout", "all_reduce", "reduce", "broadcast",
           "all_gather", "barrier"]

__getattr__ = _unsupported.module_getattr(__name__, "torch.distributed", {
    "new_group": "the default group (group=None)",
    "all_gather_object": "pickle.dumps into a uint8 tensor with all_gather",
    "broadcast_object_list": "pickle.dumps into a uint8 tensor with broadcast",
    "reduce_scatter": "all_reduce, then each rank's slice",
    "scatter": "broadcast from src, then each rank's slice",
    "gather": "all_gather (every rank receives the list)",
})
