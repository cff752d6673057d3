"""The default process group of ``torch.distributed``: ``init_process_group`` joins the other
ranks through one of gpuaccel's collective engines (gpuaccel._C.collective, the ones
``MultiWorkerMirroredStrategy`` uses; docs/distribute.md) and keeps it until
``destroy_process_group``. The rendezvous follows PyTorch's init methods: ``env://`` reads
MASTER_ADDR, MASTER_PORT, RANK and WORLD_SIZE, ``tcp://host:port`` takes rank and world size
as arguments; in both, rank 0 serves the engine's key-value store on that port, as PyTorch's
TCPStore does. Errors use PyTorch 1.13's types and messages."""
import datetime
import ipaddress
import os
import socket
import urllib.parse
import warnings

from ... import _C
from ... import cuda as _cuda
from ...distribute._cpu_engine import find_mpi_library

default_pg_timeout = datetime.timedelta(minutes=30)

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


class Backend(str):
    """A backend's name, lowercased: ``Backend("GLOO") == Backend.GLOO == "gloo"``."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    TCP = "tcp"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend name must be a string, but got: {name}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.TCP:
            raise ValueError("TCP backend has been deprecated. Please use Gloo or MPI backend "
                             "for collective operations on CPU tensors.")
        if value == Backend.UNDEFINED:
            raise ValueError(f"Invalid backend: '{name}'")
        return value


class ProcessGroup:
    """This process's handle on a group of ranks and the engine that joins them (None with one
    rank: nothing crosses processes)."""

    def __init__(self, backend, rank, world_size, collective):
        self._backend, self._rank, self._world_size = backend, rank, world_size
        self.collective = collective

    def rank(self):
        return self._rank

    def size(self):
        return self._world_size

    def __repr__(self):
        return (f"ProcessGroup(backend={self._backend!r}, rank={self._rank}, "
                f"world_size={self._world_size})")


class GroupMember:
    """``GroupMember.WORLD``: the default group once initialized, else None."""
    WORLD = None
    NON_GROUP_MEMBER = object()


class group:  # noqa: N801 - PyTorch's name
    WORLD = None  # kept equal to GroupMember.WORLD


def _set_world(process_group):
    GroupMember.WORLD = group.WORLD = process_group


def is_available():
    return True


def is_gloo_available():
    return bool(_C.collective.gloo_available())


def is_mpi_available():
    return find_mpi_library() is not None


def is_nccl_available():
    return _cuda.is_available()


def is_initialized():
    return GroupMember.WORLD is not None


def default_group(group_argument=None):
    """The default group, for a ``group=`` argument that is None or that group; PyTorch's
    RuntimeError before init_process_group. Other groups (``new_group``) are not supported."""
    if GroupMember.WORLD is None:
        raise RuntimeError(_NOT_INITIALIZED)
    if group_argument is not None and group_argument is not GroupMember.WORLD:
        raise NotImplementedError(f"group={group_argument!r}: only the default group "
                                  f"(group=None or dist.group.WORLD) is supported; "
                                  f"torch.distributed.new_group is not implemented")
    return GroupMember.WORLD


def get_rank(group=None):
    return default_group(group).rank()


def get_world_size(group=None):
    return default_group(group).size()


def get_backend(group=None):
    return default_group(group)._backend


def _query_int(query, name):
    values = query.get(name)
    return None if not values else int(values[-1])


def _rendezvous_error(scheme, message):
    return ValueError(f"Error initializing torch.distributed using {scheme}:// rendezvous: "
                      f"{message}")


def _environment(name):
    value = os.environ.get(name)
    if not value:
        raise _rendezvous_error("env", f"environment variable {name} expected, but not set")
    return value


def _rendezvous(init_method, rank, world_size):
    """(master host, master port, rank, world size) from an ``env://`` or ``tcp://`` URL, with
    ``rank``/``world_size`` (when not -1) taking precedence as in PyTorch's rendezvous."""
    if not isinstance(init_method, str):
        raise RuntimeError(f"`url` must be a string. {type(init_method)}: {init_method}")
    url = urllib.parse.urlparse(init_method)
    query = urllib.parse.parse_qs(url.query)
    rank = rank if rank != -1 else _query_int(query, "rank")
    world_size = world_size if world_size != -1 else _query_int(query, "world_size")
    if url.scheme == "env":
        rank = int(_environment("RANK")) if rank is None else rank
        world_size = int(_environment("WORLD_SIZE")) if world_size is None else world_size
        return _environment("MASTER_ADDR"), int(_environment("MASTER_PORT")), rank, world_size
    if url.scheme == "tcp":
        if not url.port:
            raise _rendezvous_error("tcp", "port number missing")
        if rank is None:
            raise _rendezvous_error("tcp", "rank parameter missing")
        if world_size is None:
            raise _rendezvous_error("tcp", "world size parameter missing")
        return url.hostname, url.port, rank, world_size
    raise ValueError(f"init_method {init_method!r}: gpuaccel supports the 'env://' and "
                     f"'tcp://host:port' init methods (no {url.scheme or 'scheme'}://)")


def _binds_to_loopback(host):
    """Whether ``host`` is this machine's loopback address: then every rank runs here and the
    Gloo endpoints listen on 127.0.0.1 (the hostname may resolve to another address)."""
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def _cluster_spec(init_method, rank, world_size):
    """The engines' description of this rank's job, from the init method."""
    host, port, rank, world_size = _rendezvous(init_method, rank, world_size)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"rank {rank} and world_size {world_size}: expected world_size >= 1 "
                         f"and 0 <= rank < world_size")
    spec = _C.collective.ClusterSpec()
    spec.rank, spec.world_size = rank, world_size
    spec.coordinator = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    spec.local_host = "127.0.0.1" if _binds_to_loopback(host) else ""
    spec.source = f"torch.distributed.init_process_group (init_method={init_method!r})"
    return spec


def _gloo_group(init_method, rank, world_size, timeout_seconds):
    spec = _cluster_spec(init_method, rank, world_size)
    collective = (_C.collective.create_gloo(spec, timeout_seconds) if spec.world_size > 1
                  else None)
    return ProcessGroup(Backend.GLOO, spec.rank, spec.world_size, collective)


def _mpi_group(rank, world_size, timeout_seconds):
    if world_size != -1 or rank != -1:
        warnings.warn(f"For MPI backend, world_size ({world_size}) and rank ({rank}) are "
                      f"ignored since they are assigned by the MPI runtime.")
    library = find_mpi_library()
    if library is None:
        raise RuntimeError("Distributed package doesn't have MPI built in. gpuaccel's MPI "
                           "backend opens MPICH's standard-ABI library: pip install mpich, "
                           "then start the ranks with its launcher, mpiexec -n N python "
                           "your_program.py (or use backend='gloo')")
    collective = _C.collective.create_mpi(library, None, timeout_seconds)
    return ProcessGroup(Backend.MPI, collective.rank, collective.world_size, collective)


def _nccl_group(init_method, rank, world_size, timeout_seconds):
    if not _cuda.is_available():
        raise RuntimeError("Distributed package doesn't have NCCL built in: backend 'nccl' "
                           "needs one GPU per rank and this process sees none; use "
                           "backend='gloo' for CPU tensors")
    spec = _cluster_spec(init_method, rank, world_size)
    device = f"GPU:{_cuda.current_device()}"  # the tutorials' torch.cuda.set_device(rank)
    collective = _C.collective.create_nccl(device, spec, timeout_seconds)
    return ProcessGroup(Backend.NCCL, spec.rank, spec.world_size, collective)


def init_process_group(backend, init_method=None, timeout=default_pg_timeout, world_size=-1,
                       rank=-1, store=None, group_name="", pg_options=None):
    """Joins this process to the default group of ``world_size`` ranks as ``rank`` through
    ``backend``: "gloo" (CPU tensors; gpuaccel's Gloo engine), "mpi" (started by mpiexec) or
    "nccl" (one GPU per rank). Returns once every rank has joined."""
    if not isinstance(timeout, datetime.timedelta):
        raise RuntimeError("Expected timeout argument to be of typedatetime.timedelta")
    if GroupMember.WORLD is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if store is not None:
        raise NotImplementedError("init_process_group(store=...) is not supported: gpuaccel has "
                                  "no torch.distributed Store; use init_method='env://' "
                                  "(MASTER_ADDR/MASTER_PORT) or 'tcp://host:port'")
    if pg_options is not None:
        raise NotImplementedError("init_process_group(pg_options=...) is not supported")
    init_method = "env://" if init_method is None else init_method
    backend = Backend(backend)
    seconds = timeout.total_seconds()
    if backend == Backend.GLOO:
        process_group = _gloo_group(init_method, rank, world_size, seconds)
    elif backend == Backend.MPI:
        process_group = _mpi_group(rank, world_size, seconds)
    elif backend == Backend.NCCL:
        process_group = _nccl_group(init_method, rank, world_size, seconds)
    else:
        raise RuntimeError(f"backend '{backend}' is not available in gpuaccel: use 'gloo' "
                           f"(CPU), 'nccl' (GPU) or 'mpi'")
    if process_group.collective is not None:
        process_group.collective.barrier()  # every rank has joined once this returns
    _set_world(process_group)


def destroy_process_group(group=None):
    """Leaves the default group (its engine's connections close); init_process_group may be
    called again afterwards."""
    if GroupMember.WORLD is None:
        raise RuntimeError(_NOT_INITIALIZED)
    if group is not None and group is not GroupMember.WORLD:
        raise RuntimeError("Invalid process group specified")
    _set_world(None)
