// Graph-private arenas and the per-thread routing of allocations to them (capture_arena.h).
#include "memory/capture_arena.h"

#include <utility>
#include <vector>

#include "core/errors.h"
#include "memory/pool_allocator.h"
#include "memory/sub_allocator.h"

namespace gpuaccel {

namespace {

// An arena's regions: allocations of the device's pool. A pool that cannot serve one makes
// the arena report out of memory (with its own report) instead of throwing from alloc().
class DevicePoolRegions final : public SubAllocator {
 public:
  explicit DevicePoolRegions(std::shared_ptr<Allocator> pool) : pool_(std::move(pool)) {}
  void* alloc(size_t bytes) override {
    try {
      return pool_->allocate(bytes);
    } catch (const Error& e) {
      if (e.code() == ErrorCode::kResourceExhausted) return nullptr;
      throw;
    }
  }
  void free(void* ptr, size_t) override { pool_->deallocate(ptr); }
  std::string kind() const override { return "graph arena in " + pool_->name(); }

 private:
  std::shared_ptr<Allocator> pool_;
};

struct Route {
  int gpu;
  std::shared_ptr<Allocator> arena;
};
thread_local std::vector<Route> routes;

}  // namespace

std::shared_ptr<Allocator> make_capture_arena(std::shared_ptr<Allocator> device_pool) {
  if (!device_pool) throw_value_error("make_capture_arena", "a device pool is required");
  PoolOptions options;
  options.name = device_pool->name() + "_graph_arena";
  options.device_name = device_pool->device_name();
  options.is_gpu = true;
  // A course step's temporaries are a few MiB to a few hundred; regions double from here.
  options.initial_region_bytes = size_t{4} << 20;
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
  routes.push_back({gpu, std::move(arena)});
}

void end_capture_routing(int gpu) {
  for (auto it = routes.begin(); it != routes.end(); ++it) {
    if (it->gpu == gpu) {
      routes.erase(it);
      return;
    }
  }
}

std::shared_ptr<Allocator> routed_capture_arena(const LogicalDevice& device) {
  if (routes.empty() || device.type != DeviceType::kGPU) return nullptr;
  for (const Route& r : routes) {
    if (r.gpu == device.physical_index) return r.arena;
  }
  return nullptr;
}

}  // namespace gpuaccel
