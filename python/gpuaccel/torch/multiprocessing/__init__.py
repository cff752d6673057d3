"""``torch.multiprocessing`` of the PyTorch face: the standard library's ``multiprocessing``
under PyTorch's name (every name it exports), plus ``spawn``/``start_processes``, which the
DistributedDataParallel tutorials use to start one process per rank.

gpuaccel tensors pickle by value (``gpuaccel._tensor``), so they travel through a Queue or
``spawn``'s ``args`` as copies; PyTorch moves CPU tensors to shared memory instead. So the
sharing-strategy functions are here for programs that set one, and change nothing.
"""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403 - PyTorch re-exports the whole module

from .spawn import (ProcessContext, ProcessExitedException, ProcessRaisedException,
                    SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies",
           "spawn", "start_processes", "ProcessContext", "SpawnContext", "ProcessRaisedException",
           "ProcessExitedException"] + list(multiprocessing.__all__)

_ALL_SHARING_STRATEGIES = ({"file_system"} if sys.platform in ("darwin", "win32")
                           else {"file_descriptor", "file_system"})
_sharing_strategy = "file_system" if sys.platform in ("darwin", "win32") else "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Records PyTorch's CPU-tensor sharing strategy (tensors are copied here either way)."""
    global _sharing_strategy
    if new_strategy not in _ALL_SHARING_STRATEGIES:
        raise ValueError(f"sharing strategy {new_strategy!r} is not one of "
                         f"{sorted(_ALL_SHARING_STRATEGIES)}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return set(_ALL_SHARING_STRATEGIES)
