// The core's side of a backend library (see library_backend.h), and the CUDA backends of the
// process: one LibraryBackend per physical GPU, made on first use.
#include "backends/library/library_backend.h"

#include <exception>
#include <new>
#include <string>

#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/errors.h"
#include "memory/capture_arena.h"
#include "memory/memory_manager.h"
#include "profiler/profiler.h"

namespace gpuaccel {

namespace {
LogicalDevice pool_device_of(int ordinal);
}  // namespace

CoreBackendServices::CoreBackendServices(CudaLibrary& library, int ordinal, LogicalDevice pool_device)
    : ordinal_(ordinal), pool_device_(std::move(pool_device)), timeline_(library, ordinal) {}

CoreBackendServices::~CoreBackendServices() {
  // A backend gives its workspaces back before it goes; anything left is returned here.
  for (auto& [ptr, pool] : live_) pool->deallocate(ptr);
}

void CoreBackendServices::raise(ErrorCode code, const std::string& op, const std::string& message) {
  throw_error(code, op, message);
}

void CoreBackendServices::rethrow_current(const std::string& op) {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw_error(ErrorCode::kResourceExhausted, op, "out of host memory");
  } catch (const std::exception& e) {
    throw_error(ErrorCode::kInternal, op, e.what());
  } catch (...) {
    throw_error(ErrorCode::kInternal, op, "unknown error in the backend library");
  }
}

Allocator& CoreBackendServices::pool() {
  if (!pool_) {
    if (pool_device_stale_) {
      pool_device_ = pool_device_of(ordinal_);
      pool_device_stale_ = false;
    }
    pool_ = MemoryManager::instance().allocator_for(pool_device_);
  }
  return *pool_;
}

void* CoreBackendServices::allocate(size_t bytes, const char* op) {
  if (bytes == 0) return nullptr;
  std::lock_guard<std::mutex> lock(mutex_);
  pool();
  // While this thread captures a graph, its workspaces are the graph's (capture_arena.h).
  std::shared_ptr<Allocator> allocator = routed_capture_arena(pool_device_);
  if (!allocator) allocator = pool_;
  void* ptr = nullptr;
  try {
    ptr = allocator->allocate(bytes);
  } catch (const Error& e) {
    throw Error(e.code(), op, "workspace of " + std::to_string(bytes) + " bytes: " + e.message());
  }
  live_[ptr] = std::move(allocator);
  return ptr;
}

void CoreBackendServices::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(ptr);
  if (it == live_.end()) return;
  it->second->deallocate(ptr);
  live_.erase(it);
}

void CoreBackendServices::forget_pool() {
  std::lock_guard<std::mutex> lock(mutex_);
  pool_.reset();
  pool_device_stale_ = true;
}

void* CoreBackendServices::begin_capture_memory() {
  std::shared_ptr<Allocator> arena;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pool_device_stale_) pool();  // looks the device up again after a runtime reset
    arena = make_capture_arena(MemoryManager::instance().allocator_for(pool_device_));
  }
  begin_capture_routing(pool_device_.physical_index, arena);
  return new std::shared_ptr<Allocator>(std::move(arena));
}

void CoreBackendServices::end_capture_memory() { end_capture_routing(pool_device_.physical_index); }

void CoreBackendServices::release_capture_memory(void* memory) {
  delete static_cast<std::shared_ptr<Allocator>*>(memory);
}

void* CoreBackendServices::launch_begin() {
  return profiler::enabled() ? timeline_.begin() : nullptr;
}

void CoreBackendServices::launch_end(void* token, LaunchKind kind, const char* op, int64_t bytes) {
  timeline_.end(token, kind, op, bytes);
}

void CoreBackendServices::launch_cancel(void* token) { timeline_.cancel(token); }

LibraryBackend::LibraryBackend(CudaLibrary& library, int ordinal, const LogicalDevice& pool_device)
    : services_(std::make_unique<CoreBackendServices>(library, ordinal, pool_device)),
      backend_(library.create_backend(ordinal, *services_)) {
  if (!backend_) {
    throw_error(ErrorCode::kInternal, "backend_for",
                "the CUDA backend library made no backend for GPU " + std::to_string(ordinal));
  }
}

namespace {

// The logical device whose pool serves the workspaces of physical GPU `ordinal`: the first
// logical device on it (a GPU split into logical devices lends its first one's pool).
LogicalDevice pool_device_of(int ordinal) {
  for (const LogicalDevice& d : DeviceRegistry::instance().logical_devices(DeviceType::kGPU)) {
    if (d.physical_index == ordinal) return d;
  }
  throw_error(ErrorCode::kFailedPrecondition, "backend_for",
              "GPU " + std::to_string(ordinal) + " has no logical device (is it hidden?)");
}

std::mutex backends_mutex;
// Never destroyed: at exit the pools and the driver may already be gone.
std::map<int, std::unique_ptr<LibraryBackend>>& library_backends() {
  static auto* backends = new std::map<int, std::unique_ptr<LibraryBackend>>();
  return *backends;
}

}  // namespace

Backend* cuda_backend_ops(int ordinal) {
  CudaLibrary* library = cuda_library();
  if (library == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(backends_mutex);
  auto& slot = library_backends()[ordinal];
  if (!slot) slot = std::make_unique<LibraryBackend>(*library, ordinal, pool_device_of(ordinal));
  return &slot->backend();
}

void release_cuda_backend_memory() {
  std::lock_guard<std::mutex> lock(backends_mutex);
  for (auto& [ordinal, device] : library_backends()) {
    device->backend().release_cached_memory();
    device->services().forget_pool();
  }
}

}  // namespace gpuaccel
