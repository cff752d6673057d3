// Graph-private arenas and the per-thread routing of allocations to them (capture_arena.h).
#include "memory/capture_arena.h"

#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "core/errors.h"
#include "memory/pool_allocator.h"
#include "memory/sub_allocator.h"

namespace gpuaccel {

namespace {

// An arena's regions: allocations of the device's pool. A pool that cannot serve one makes
// the arena report out of memory (with its own report) instead of throwing from alloc().
// Also keeps the device pool's blocks that the capturing thread freed during the capture
// (capture_arena.h), and gives them back after the arena's regions, when the graph is gone.
class DevicePoolRegions final : public SubAllocator {
 public:
  explicit DevicePoolRegions(std::shared_ptr<Allocator> pool) : pool_(std::move(pool)) {}
  ~DevicePoolRegions() override {
    for (void* block : kept_) pool_->deallocate(block);
  }
  DevicePoolRegions(const DevicePoolRegions&) = delete;
  DevicePoolRegions& operator=(const DevicePoolRegions&) = delete;

  // False for a block of another pool (a second logical device's pool on a split GPU): that
  // one is freed as usual.
  bool keep(const Allocator& from, void* block) {
    if (&from != pool_.get()) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    kept_.push_back(block);
    return true;
  }

  void* alloc(size_t bytes) override {
    try {
      return pool_->allocate(bytes);
    } catch (const Error& e) {
      if (e.code() != ErrorCode::kResourceExhausted) throw;
      std::lock_guard<std::mutex> lock(mutex_);
      last_refusal_ = e.message();  // e.g. that a capture holds the device pool's empty regions
      return nullptr;
    }
  }
  void free(void* ptr, size_t) override { pool_->deallocate(ptr); }
  std::string kind() const override { return "graph arena in " + pool_->name(); }
  std::string last_refusal() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return last_refusal_;
  }

 private:
  std::shared_ptr<Allocator> pool_;
  mutable std::mutex mutex_;
  std::string last_refusal_;
  std::vector<void*> kept_;
};

struct Route {
  int gpu;
  std::shared_ptr<Allocator> arena;
  std::shared_ptr<DevicePoolRegions> regions;  // null when `arena` is not make_capture_arena's
};
thread_local std::vector<Route> routes;

// Captures under way per physical GPU, over every thread.
std::mutex captures_mutex;
std::map<int, int>& captures_by_gpu() {
  static auto* counts = new std::map<int, int>();  // never destroyed: pools may outlive main()
  return *counts;
}

}  // namespace

std::shared_ptr<Allocator> make_capture_arena(std::shared_ptr<Allocator> device_pool) {
  if (!device_pool) throw_value_error("make_capture_arena", "a device pool is required");
  PoolOptions options;
  options.name = device_pool->name() + "_graph_arena";
  options.device_name = device_pool->device_name();
  options.is_gpu = true;
  // A course step's temporaries are a few MiB to a few hundred; regions double from here.
  options.initial_region_bytes = size_t{4} << 20;
  options.regions_held = [] {
    return std::string("a graph's arena keeps every region until the graph is destroyed");
  };
  return std::make_shared<PoolAllocator>(std::make_shared<DevicePoolRegions>(std::move(device_pool)),
                                         std::move(options));
}

void begin_capture_routing(int gpu, std::shared_ptr<Allocator> arena) {
  for (const Route& r : routes) {
    if (r.gpu == gpu) {
      throw_error(ErrorCode::kInternal, "begin_capture",
                  "GPU " + std::to_string(gpu) + " is already being captured on this thread");
    }
  }
  std::shared_ptr<DevicePoolRegions> regions;
  if (auto pool = std::dynamic_pointer_cast<PoolAllocator>(arena)) {
    regions = std::dynamic_pointer_cast<DevicePoolRegions>(pool->sub_allocator());
  }
  routes.push_back({gpu, std::move(arena), std::move(regions)});
  std::lock_guard<std::mutex> lock(captures_mutex);
  ++captures_by_gpu()[gpu];
}

void end_capture_routing(int gpu) {
  for (auto it = routes.begin(); it != routes.end(); ++it) {
    if (it->gpu == gpu) {
      routes.erase(it);
      std::lock_guard<std::mutex> lock(captures_mutex);
      if (--captures_by_gpu()[gpu] == 0) captures_by_gpu().erase(gpu);
      return;
    }
  }
}

bool capture_under_way(int gpu) {
  std::lock_guard<std::mutex> lock(captures_mutex);
  return captures_by_gpu().count(gpu) > 0;
}

std::string capture_holds_regions(int gpu) {
  if (!capture_under_way(gpu)) return "";
  return "a training step is being captured into a CUDA graph on GPU " + std::to_string(gpu) +
         " (a cudaFree now would invalidate the capture; the step falls back to eager)";
}

bool keep_for_capture(int gpu, PoolAllocator& pool, void* block) {
  for (const Route& r : routes) {  // empty on every thread that is not capturing: no lock taken
    // A pointer the pool never made goes on to the pool's own double-free error.
    if (r.gpu == gpu && r.regions && pool.allocation_size(block) != 0) {
      return r.regions->keep(pool, block);
    }
  }
  return false;
}

std::shared_ptr<Allocator> routed_capture_arena(const LogicalDevice& device) {
  if (routes.empty() || device.type != DeviceType::kGPU) return nullptr;
  for (const Route& r : routes) {
    if (r.gpu == device.physical_index) return r.arena;
  }
  return nullptr;
}

}  // namespace gpuaccel
