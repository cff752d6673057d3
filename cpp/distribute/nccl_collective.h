// The engine for GPUs: a Collective over an NCCL communicator of the CUDA backend library
// (core/cuda_loader/nccl_library.h), its collectives on the backend's stream of the replica's GPU.
// Every call waits for the collective to finish, bounded by the timeout, because a dead peer would
// otherwise hang the next synchronization forever (NCCL never gives up by itself).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "core/device_registry.h"
#include "distribute/cluster_spec.h"
#include "distribute/collective.h"

namespace gpuaccel::distribute {

// A new communicator id. One rank makes it; every rank of that communicator passes it below.
// Throws FailedPrecondition when there is no usable GPU or NCCL cannot be opened.
std::string nccl_unique_id();

// Joins communicator `unique_id` as `rank` of `world_size` on `device` (a GPU). Several GPUs
// of one process (MirroredStrategy): one thread per rank, all with the same id, since each
// call returns only once every rank has joined (or PeerUnavailableError after `timeout`).
std::unique_ptr<Collective> make_nccl_collective(const LogicalDevice& device, int rank,
                                                 int world_size, const std::string& unique_id,
                                                 std::chrono::milliseconds timeout);

// Several processes (one GPU each): rank 0 makes the id and hands it out through the
// rendezvous store it serves at spec.coordinator (as the Gloo engine does; one engine per job).
std::unique_ptr<Collective> make_nccl_collective(const ClusterSpec& spec,
                                                 const LogicalDevice& device,
                                                 std::chrono::milliseconds timeout);

}  // namespace gpuaccel::distribute
