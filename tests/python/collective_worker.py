"""One worker of test_collective.py's multi-process jobs, run as a child process with TF_CONFIG
set, so that it can die (SIGKILL, no cleanup) where a test wants a dead peer.

    python collective_worker.py MODE [ENGINE]

MODE 'sum': all-reduces and broadcasts tensors whose values depend on the rank and prints the
results as one JSON line. MODE 'die': rank 1 is killed after one all-reduce; rank 0 keeps
all-reducing and must get UnavailableError, which it prints (as JSON) before exiting 0.
MODE 'stall': rank 1 never calls the all-reduce rank 0 waits in (it sleeps, then exits);
rank 0 must get UnavailableError within the timeout and prints it.
ENGINE: 'gloo' (the default) or 'mpi' (test_mpi_engine.py: started by mpiexec, the library
from GPUACCEL_MPI_LIBRARY).
"""
import json
import os
import signal
import sys
import time

import numpy as np

import gpuaccel  # noqa: F401  (loads _C with its error translation)
from gpuaccel import _C
from gpuaccel.errors import UnavailableError


def tensor(values):
    return _C.tensor_from_numpy(np.asarray(values, dtype=np.float32))


def report(result):
    """One write of the whole line: under mpirun both ranks share one stdout, and a line written
    in one piece (under PIPE_BUF) is never split by the other rank's."""
    os.write(1, (json.dumps(result) + "\n").encode())


def main(mode, engine="gloo"):
    if engine == "mpi":
        collective = _C.collective.create_mpi(os.environ["GPUACCEL_MPI_LIBRARY"])
    else:
        collective = _C.collective.create_gloo()
    rank = collective.rank
    if mode == "sum":
        a = tensor(np.arange(6).reshape(2, 3) * (rank + 1))
        b = tensor([0.5 + rank, -1.0])
        half = tensor([1.5 * (rank + 1), 2.0]).bfloat16()
        ints = _C.tensor_from_numpy(np.asarray([rank + 1, 2 ** 40], dtype=np.int64))
        float16 = _C.tensor_from_numpy(np.asarray([0.25 * (rank + 1), 1.5], dtype=np.float16))
        collective.all_reduce_sum([a, b, half, ints, float16])
        weights = tensor([rank + 10.0, rank + 20.0])
        collective.broadcast([weights], root=1)
        collective.barrier()
        report({
            "rank": rank, "world_size": collective.world_size, "engine": collective.engine,
            "a": a.numpy().tolist(), "b": b.numpy().tolist(),
            "half": half.float().numpy().tolist(), "ints": ints.numpy().tolist(),
            "float16": float16.numpy().astype(np.float32).tolist(),
            "weights": weights.numpy().tolist()})
        return 0
    if mode == "die":
        t = tensor([1.0, 2.0])
        collective.all_reduce_sum([t])
        if rank == 1:
            os.kill(os.getpid(), signal.SIGKILL)
        start = time.monotonic()
        try:
            for _ in range(1000):
                collective.all_reduce_sum([t])
        except UnavailableError as error:
            report({"rank": rank, "error": str(error), "seconds": time.monotonic() - start})
            return 0
        return 1
    if mode == "stall":
        if rank == 1:
            time.sleep(float(os.environ["GPUACCEL_COLLECTIVE_TIMEOUT_SECONDS"]) + 3)
            return 0
        start = time.monotonic()
        try:
            collective.all_reduce_sum([tensor([1.0])])
        except UnavailableError as error:
            report({"rank": rank, "error": str(error), "seconds": time.monotonic() - start})
            return 0
        return 1
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
