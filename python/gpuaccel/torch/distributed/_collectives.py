"""``torch.distributed``'s collective calls on the default group, in place as in PyTorch.

gpuaccel's engines sum and broadcast (``Collective.all_reduce_sum``/``broadcast``); the rest is
composed from those: ``all_gather`` is one broadcast from each rank, and MAX, MIN and PRODUCT
reduce the gathered values locally (exact, in rank order). AVG is refused as PyTorch 1.13's
Gloo backend refuses it; the bitwise ops and PREMUL_SUM are not implemented."""
import enum

import numpy as np

from ... import _C
from ..._tensor import Tensor, no_grad
from ._process_group import default_group


class ReduceOp(enum.Enum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


_GATHERED_REDUCTIONS = {ReduceOp.MAX: np.maximum, ReduceOp.MIN: np.minimum,
                        ReduceOp.PRODUCT: np.multiply}


class Work:
    """What ``async_op=True`` returns: gpuaccel's collectives finish before the call returns,
    so the work is already complete."""

    def wait(self, timeout=None):
        return True

    def is_completed(self):
        return True

    def is_success(self):
        return True


def _check_tensor(value, name="tensor"):
    if not isinstance(value, Tensor):
        raise RuntimeError(f"Invalid function argument. Expected parameter `{name}` to be of "
                           f"type torch.Tensor.")


def _check_rank(rank, process_group, what, role):
    if not 0 <= rank < process_group.size():
        raise RuntimeError(f"{what}: invalid {role} rank: {rank}")


def _finish(async_op):
    return Work() if async_op else None


def _write(target, values):
    """Copies ``values`` (a tensor of target's shape) into ``target`` in place."""
    with no_grad():
        target.copy_(values)


def _broadcast_in_place(process_group, tensor, src):
    """``tensor`` takes rank ``src``'s values on every rank (through a contiguous copy when it
    is a view the engine cannot write through)."""
    if process_group.collective is None:
        return
    if tensor.is_contiguous():
        process_group.collective.broadcast([tensor], src)
        return
    buffer = _C.clone(_C.detach(tensor)).contiguous()
    process_group.collective.broadcast([buffer], src)
    _write(tensor, buffer)


def _gather_values(process_group, tensor):
    """Every rank's ``tensor``, by rank, as detached contiguous tensors."""
    gathered = []
    for source in range(process_group.size()):
        buffer = _C.clone(_C.detach(tensor)).contiguous()
        _broadcast_in_place(process_group, buffer, source)
        gathered.append(buffer)
    return gathered


def _reduced(process_group, tensor, op):
    """The reduction of every rank's ``tensor`` by ``op`` (a new tensor)."""
    if not isinstance(op, ReduceOp):
        raise TypeError(f"op must be a torch.distributed.ReduceOp (SUM, PRODUCT, MIN, MAX), "
                        f"got {op!r}")
    if op == ReduceOp.AVG:
        raise RuntimeError("Cannot use ReduceOp.AVG with Gloo")
    if op == ReduceOp.SUM:
        total = _C.clone(_C.detach(tensor)).contiguous()
        if process_group.collective is not None:
            process_group.collective.all_reduce_sum([total])
        return total
    if op not in _GATHERED_REDUCTIONS:
        raise NotImplementedError(f"ReduceOp.{op.name} is not implemented in gpuaccel; "
                                  f"supported: SUM, PRODUCT, MIN, MAX")
    combine = _GATHERED_REDUCTIONS[op]
    values = [t.numpy() for t in _gather_values(process_group, tensor)]
    result = values[0]
    for value in values[1:]:
        result = combine(result, value)
    return _C.tensor_from_numpy(np.ascontiguousarray(result).reshape(values[0].shape),
                                tensor._device_name, tensor._dtype_name, True)


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Every rank's ``tensor`` becomes the reduction (``op``) of all ranks' tensors."""
    _check_tensor(tensor)
    process_group = default_group(group)
    _write(tensor, _reduced(process_group, tensor, op))
    return _finish(async_op)


def reduce(tensor, dst, op=ReduceOp.SUM, group=None, async_op=False):
    """Rank ``dst``'s ``tensor`` becomes the reduction of all ranks' tensors (the others keep
    theirs)."""
    _check_tensor(tensor)
    process_group = default_group(group)
    _check_rank(dst, process_group, "ProcessGroupGloo::reduce", "root")
    result = _reduced(process_group, tensor, op)
    if process_group.rank() == dst:
        _write(tensor, result)
    return _finish(async_op)


def broadcast(tensor, src, group=None, async_op=False):
    """Every rank's ``tensor`` takes rank ``src``'s values."""
    _check_tensor(tensor)
    process_group = default_group(group)
    _check_rank(src, process_group, "ProcessGroupGloo::broadcast", "root")
    _broadcast_in_place(process_group, tensor, src)
    return _finish(async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """``tensor_list[r]`` becomes rank r's ``tensor`` on every rank."""
    _check_tensor(tensor)
    if not isinstance(tensor_list, (list, tuple)) or not all(
            isinstance(t, Tensor) for t in tensor_list):
        raise RuntimeError("Invalid function argument. Expected parameter `tensor_list` to be "
                           "of type List[torch.Tensor].")
    process_group = default_group(group)
    if len(tensor_list) != process_group.size():
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index 0 "
                           f"(expected length {process_group.size()}, got {len(tensor_list)})")
    for index, target in enumerate(tensor_list):
        if tuple(target.shape) != tuple(tensor.shape):
            raise RuntimeError(f"ProcessGroupGloo::allgather: invalid tensor size at index "
                               f"{index} (expected {_shape_text(tensor.shape)}, got "
                               f"{_shape_text(target.shape)})")
    for target, value in zip(tensor_list, _gather_values(process_group, tensor)):
        _write(target, value)
    return _finish(async_op)


def _shape_text(shape):
    return "(" + ", ".join(str(d) for d in shape) + ")"


def barrier(group=None, async_op=False, device_ids=None):
    """Returns once every rank has called barrier."""
    process_group = default_group(group)
    if process_group.collective is not None:
        process_group.collective.barrier()
    return _finish(async_op)
