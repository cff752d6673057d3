// Picks the backend for a device (see backend.h).
#include "backends/backend.h"
#include "core/errors.h"

namespace gpuaccel {

Backend& cpu_backend();   // backends/cpu/cpu_backend.cc
Backend* cuda_backend_ops();  // backends/cuda_table_backend.cc: null when CUDA ops are unavailable

Backend& backend_for(const LogicalDevice& device) {
  if (device.type == DeviceType::kCPU) return cpu_backend();
  Backend* cuda = cuda_backend_ops();
  if (cuda == nullptr) {
    throw_error(ErrorCode::kUnimplemented, "backend_for",
                "tensor ops on " + device.full_name() +
                    " need the CUDA backend's op table, which this build does not provide yet");
  }
  return *cuda;
}

}  // namespace gpuaccel
