// The collectives of the replicas that share one process (MirroredStrategy): one per replica,
// by the devices the replicas' weights live on. CPU replicas share the in-process engine; GPU
// replicas get one NCCL communicator, rank r on replica r's GPU, unless two of them are logical
// GPUs of one physical GPU: NCCL refuses two ranks on one device ("Duplicate GPU detected"),
// so those reduce through the in-process engine, staged through host memory (TensorFlow falls
// back to ReductionToOneDevice for virtual GPUs the same way).
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

// True when two of `devices` (GPUs) live on the same physical GPU: NCCL cannot serve them.
bool gpus_share_a_physical_device(const std::vector<LogicalDevice>& devices);

}  // namespace gpuaccel::distribute
