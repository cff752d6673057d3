"""Which engine joins CPU workers (docs/distribute.md, "Engines for CPU workers"): Gloo when
this build has it (libgloo-dev at build time; the wheel bundles it), else MPI when an MPI
library of the standard ABI is installed (``pip install mpich``), else an error naming what to
install. ``GPUACCEL_COLLECTIVE_ENGINE=gloo|mpi`` forces one (``auto``, the default, chooses as
above); CI forces ``mpi`` to run the pip-only engine through a build that also has Gloo."""
import importlib.metadata
import os

from .. import _C

ENGINE_VARIABLE = "GPUACCEL_COLLECTIVE_ENGINE"
LIBRARY_VARIABLE = "GPUACCEL_MPI_LIBRARY"
_MPI_LIBRARY_FILE = "libmpi_abi.so.1"
_ENGINES = ("auto", "gloo", "mpi")


def requested_engine():
    """``GPUACCEL_COLLECTIVE_ENGINE``, lowercased; ``auto`` when unset."""
    value = os.environ.get(ENGINE_VARIABLE, "").strip().lower() or "auto"
    if value not in _ENGINES:
        raise ValueError(f"{ENGINE_VARIABLE} is {os.environ[ENGINE_VARIABLE]!r}; expected one of "
                         + ", ".join(_ENGINES))
    return value


def find_mpi_library():
    """The libmpi_abi.so.1 to open: ``GPUACCEL_MPI_LIBRARY`` when set (it must exist), else the
    one PyPI's ``mpich`` wheel installed, else None."""
    path = os.environ.get(LIBRARY_VARIABLE, "").strip()
    if path:
        if not os.path.isfile(path):
            raise ValueError(f"{LIBRARY_VARIABLE} is {path!r}, which is not a file; expected the "
                             f"path of an MPI library of the standard ABI ({_MPI_LIBRARY_FILE})")
        return path
    try:
        files = importlib.metadata.distribution("mpich").files or []
    except importlib.metadata.PackageNotFoundError:
        return None
    for file in files:
        if file.name == _MPI_LIBRARY_FILE:
            located = os.path.realpath(file.locate())
            if os.path.isfile(located):
                return located
    return None


def create_cpu_collective(cluster, timeout_seconds):
    """This worker's collective among the CPU workers ``cluster`` describes."""
    engine = requested_engine()
    if engine == "gloo" or (engine == "auto" and _C.collective.gloo_available()):
        return _C.collective.create_gloo(cluster, timeout_seconds)
    library = find_mpi_library()
    if library is None:
        have = ("this build has no Gloo engine" if not _C.collective.gloo_available()
                else f"{ENGINE_VARIABLE}=mpi")
        raise NotImplementedError(
            f"{cluster.source} describes {cluster.world_size} workers, but {have} and no MPI "
            "library is installed: pip install mpich (or gpuaccel[mpi]) and start the workers "
            f"with its launcher, mpiexec -n {cluster.world_size} python your_program.py "
            "(or build gpuaccel with Debian's libgloo-dev for the Gloo engine)")
    return _C.collective.create_mpi(library, cluster, timeout_seconds)
