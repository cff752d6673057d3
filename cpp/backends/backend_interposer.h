// A hook that puts a decorator in front of the CPU backend: while one is installed,
// backend_for(a CPU device) returns it, so code deep inside the ops (a training step, a metric)
// reaches a call-counting or fake capture-capable backend without being told. Tests use it to
// prove what the GPU path would do (no device-to-host copy inside a step, capture attempted once
// per shape set) on the CPU. Off, it costs backend_for one relaxed atomic load.
#pragma once

#include "backends/backend.h"

namespace gpuaccel {

// The installed decorator, or null.
Backend* cpu_backend_interposer();

// Installs `decorator` for its lifetime (it must outlive the scope; typically a ForwardingBackend
// around the CPU backend) and restores the previous one after. Scopes nest; not for concurrent
// use from several threads.
class ScopedCpuBackendInterposer {
 public:
  explicit ScopedCpuBackendInterposer(Backend& decorator);
  ~ScopedCpuBackendInterposer();
  ScopedCpuBackendInterposer(const ScopedCpuBackendInterposer&) = delete;
  ScopedCpuBackendInterposer& operator=(const ScopedCpuBackendInterposer&) = delete;

 private:
  Backend* previous_;
};

// The CPU backend itself, undecorated (backends/cpu/cpu_backend.cc): what a decorator wraps.
Backend& cpu_backend();

}  // namespace gpuaccel
