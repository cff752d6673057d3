// The multi-worker engine for CPUs that pip brings: a Collective over MPI (MPICH from PyPI's
// `mpich` wheel, opened at run time; mpi_library.h). Gloo needs Debian's libgloo-dev at build
// time; this engine needs nothing at build time, so every build has it, and a worker started
// by that MPI's `mpiexec` uses it once `pip install mpich` has put the library in the
// environment. MPI's own ranks are the workers: mpiexec starts them and MPI_Init joins them,
// with no rendezvous of ours (MPICH 5 cannot join processes started one by one, as TF_CONFIG's
// are: its singleton connect/accept is broken).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "distribute/cluster_spec.h"
#include "distribute/collective.h"

namespace gpuaccel::distribute {

// Joins MPI_COMM_WORLD (through a duplicate of its own) with the library at `library_path`
// (empty: libmpi_abi.so.1 found by the dynamic loader). `spec` is what the environment says
// (cluster_spec_from_environment): a TF_CONFIG job is refused (its workers were not started by
// mpiexec), and mpirun's rank and size must be MPI's own, which catches another MPI's launcher
// (Open MPI's mpirun starting processes that load MPICH). All-reduce sums float32, float16,
// bfloat16, int32 and int64 CPU tensors; every operation is nonblocking MPI polled up to
// `timeout`, then PeerUnavailableError, after which the collective is broken. A peer that dies
// under mpiexec usually makes mpiexec end the whole job instead.
std::unique_ptr<Collective> make_mpi_collective(const std::string& library_path,
                                                const ClusterSpec& spec,
                                                std::chrono::milliseconds timeout);

}  // namespace gpuaccel::distribute
