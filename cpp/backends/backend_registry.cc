// Picks the backend for a device (see backend.h).
#include "backends/backend.h"
#include "core/cuda_backend_loader.h"
#include "core/errors.h"

namespace gpuaccel {

Backend& cpu_backend();   // backends/cpu/cpu_backend.cc
Backend* cuda_backend_ops(int ordinal);  // backends/cuda_table_backend.cc: null without the library

Backend& backend_for(const LogicalDevice& device) {
  if (device.type == DeviceType::kCPU) return cpu_backend();
  Backend* cuda = cuda_backend_ops(device.physical_index);
  if (cuda == nullptr) {
    // Only reachable when a GPU device exists without the library (simulated GPUs in tests).
    throw_error(ErrorCode::kFailedPrecondition, "backend_for",
                "ops on " + device.full_name() + " need the CUDA backend library: " +
                    cuda_backend_status().reason);
  }
  return *cuda;
}

}  // namespace gpuaccel
