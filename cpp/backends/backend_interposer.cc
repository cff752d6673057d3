// The CPU backend's interposer slot (see backend_interposer.h).
#include "backends/backend_interposer.h"

#include <atomic>

namespace gpuaccel {

namespace {
std::atomic<Backend*> g_cpu_interposer{nullptr};
}  // namespace

Backend* cpu_backend_interposer() { return g_cpu_interposer.load(std::memory_order_acquire); }

ScopedCpuBackendInterposer::ScopedCpuBackendInterposer(Backend& decorator)
    : previous_(g_cpu_interposer.exchange(&decorator, std::memory_order_acq_rel)) {}

ScopedCpuBackendInterposer::~ScopedCpuBackendInterposer() {
  g_cpu_interposer.store(previous_, std::memory_order_release);
}

}  // namespace gpuaccel
