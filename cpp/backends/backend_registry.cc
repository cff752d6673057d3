// Picks the backend for a device (see backend.h).
#include "backends/backend.h"
#include "backends/backend_interposer.h"
#include "backends/tracing_backend.h"
#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/errors.h"
#include "profiler/profiler.h"

namespace gpuaccel {

Backend& cpu_backend();   // backends/cpu/cpu_backend.cc
// backends/library/library_backend.cc: null without the library
Backend* cuda_backend_ops(int ordinal);

namespace {

Backend& untraced_backend_for(const LogicalDevice& device) {
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

}  // namespace

Backend& backend_for(const LogicalDevice& device) {
  // A test's decorator in front of the CPU backend (backend_interposer.h).
  if (device.type == DeviceType::kCPU) {
    if (Backend* interposer = cpu_backend_interposer()) return *interposer;
  }
  // While profiling, every backend call becomes a trace scope (tracing_backend.h).
  if (profiler::enabled()) {
    if (device.type == DeviceType::kCPU) return tracing_backend(cpu_backend(), -1);
    return tracing_backend(untraced_backend_for(device), device.physical_index);
  }
  return untraced_backend_for(device);
}

}  // namespace gpuaccel
