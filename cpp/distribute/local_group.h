// The collectives of the replicas that share one process (MirroredStrategy): one per replica,
// by the devices the replicas' weights live on. CPU replicas share the in-process engine; GPU
// replicas get one NCCL communicator, rank r on replica r's GPU.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "core/device_registry.h"
#include "distribute/collective.h"

namespace gpuaccel::distribute {

// `devices[r]` is replica r's device; all CPUs or all GPUs (InvalidArgumentError otherwise).
// GPU ranks join their communicator concurrently (one thread each), as NCCL requires.
std::vector<std::shared_ptr<Collective>> make_local_group(const std::vector<LogicalDevice>& devices,
                                                          std::chrono::milliseconds timeout);

}  // namespace gpuaccel::distribute
