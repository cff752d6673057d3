// A device backend made by a backend library (the CUDA library, or the tests' fake), together
// with the services the core lends it (backend_services.h): workspaces from the device's pool,
// the core's typed errors, and the profiler's device timeline over the library's events. One
// per physical device; the services outlive the backend they were lent to.
#pragma once

#include <map>
#include <memory>
#include <mutex>

#include "backends/backend.h"
#include "backends/library/backend_services.h"
#include "backends/library/device_timeline.h"
#include "core/cuda_loader/cuda_library.h"
#include "core/device_registry.h"
#include "memory/allocator.h"

namespace gpuaccel {

class CoreBackendServices final : public BackendServices {
 public:
  // Workspaces come from the pool of `pool_device`; launches are timed on `library`'s events
  // for device `ordinal` while the profiler records.
  CoreBackendServices(CudaLibrary& library, int ordinal, LogicalDevice pool_device);
  ~CoreBackendServices() override;

  [[noreturn]] void raise(ErrorCode code, const std::string& op, const std::string& message) override;
  [[noreturn]] void rethrow_current(const std::string& op) override;
  void* allocate(size_t bytes, const char* op) override;
  void deallocate(void* ptr) override;
  void* begin_capture_memory() override;
  void end_capture_memory() override;
  void release_capture_memory(void* memory) override;
  void* launch_begin() override;
  void launch_end(void* token, LaunchKind kind, const char* op, int64_t bytes) override;
  void launch_cancel(void* token) override;
  // Drops the cached pool, so that the next workspace comes from the pool of that time (a
  // runtime reset replaced it, and maybe the logical devices: the pool's device is looked up
  // again); workspaces still out keep the pool they came from.
  void forget_pool();

 private:
  Allocator& pool();

  const int ordinal_;
  LogicalDevice pool_device_;
  bool pool_device_stale_ = false;  // forget_pool: look pool_device_ up again
  std::mutex mutex_;
  std::shared_ptr<Allocator> pool_;
  std::map<void*, std::shared_ptr<Allocator>> live_;  // workspace -> the pool that served it
  DeviceTimeline timeline_;
};

class LibraryBackend {
 public:
  LibraryBackend(CudaLibrary& library, int ordinal, const LogicalDevice& pool_device);
  Backend& backend() { return *backend_; }
  CoreBackendServices& services() { return *services_; }

 private:
  std::unique_ptr<CoreBackendServices> services_;  // declared first: destroyed last
  std::unique_ptr<Backend> backend_;
};

// For a runtime reset (before MemoryManager::reset): every GPU backend made so far gives back the
// workspaces it keeps and forgets its pool, so nothing of theirs holds the old pools' regions
// and the next pools preallocate from all of the GPU's free memory again. No op may be in flight.
void release_cuda_backend_memory();

}  // namespace gpuaccel
