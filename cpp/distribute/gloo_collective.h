// The multi-worker engine for CPUs: a Collective over Gloo's TCP transport (ring all-reduce,
// broadcast, barrier), with the rendezvous on rank 0's TcpStore. Gloo is optional at build
// time (cmake/gloo_option.cmake); without it the factory throws an error saying how to get it.
#pragma once

#include <chrono>
#include <memory>

#include "distribute/cluster_spec.h"
#include "distribute/collective.h"

namespace gpuaccel::distribute {

// True when this build has Gloo (libgloo-dev was found when it was configured).
bool gloo_available();

// Joins the job `spec` describes: rank 0 serves the rendezvous at spec.coordinator, every rank
// connects to every other, and the call returns once all world_size ranks have arrived.
// All-reduce sums float32, float16, bfloat16, int32 and int64 CPU tensors (several per call,
// flattened per dtype into one Gloo all-reduce). Every operation, the rendezvous included, is
// bounded by `timeout` and throws PeerUnavailableError past it or when a peer dies; after that
// the collective is broken and every later call throws the same error at once.
// Throws gpuaccel::Error (FailedPrecondition) when the build has no Gloo.
std::unique_ptr<Collective> make_gloo_collective(const ClusterSpec& spec,
                                                 std::chrono::milliseconds timeout);

}  // namespace gpuaccel::distribute
