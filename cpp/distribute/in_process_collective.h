// The engine for replicas that share one process (one thread per replica: MirroredStrategy on
// logical CPUs). No bytes move: after every rank has arrived, each rank sums its own slice of
// every tensor's elements, reading all ranks' tensors in rank order and writing the sum back
// into all of them. The rank order makes the result identical on every run and every rank.
// It also serves replicas on logical GPUs split from one physical GPU (which NCCL refuses):
// their device tensors are staged through host memory, each rank copying its own.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "distribute/collective.h"

namespace gpuaccel::distribute {

// One Collective per rank, all in one group. Tensors must be contiguous float32 (anything else
// is an InvalidArgumentError); device tensors are copied to the host and back by their rank. A rank that
// does not arrive within `timeout`, or that called abort(), makes the others throw
// PeerUnavailableError.
std::vector<std::shared_ptr<Collective>> make_in_process_group(int world_size,
                                                               std::chrono::milliseconds timeout);

// Tells every rank of `member`'s group that `member`'s rank failed: their current and later
// calls throw PeerUnavailableError instead of waiting for the timeout. For a replica whose step
// threw before it reached the collective.
void abort_in_process_group(Collective& member, const std::string& why);

// Makes an aborted or timed-out group usable again. Only while no rank is inside a collective
// (the replica threads have all returned): fit's next step after a failed one.
void reset_in_process_group(Collective& member);

}  // namespace gpuaccel::distribute
