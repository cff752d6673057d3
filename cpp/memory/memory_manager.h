// One allocator per logical device, created on first use, with TF's semantics: the host pool
// grows; a GPU pool preallocates a fraction of the free GPU memory unless memory growth is on;
// a logical device's memory_limit is a hard cap either way. Tensor storage, the backends and the
// Python stats calls all get their allocator here, so a device's numbers are in one place.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/device_name.h"
#include "core/device_registry.h"
#include "memory/allocator.h"
#include "memory/sub_allocator.h"

namespace gpuaccel {

// Default share of a GPU's free memory that a preallocating pool takes (TF takes nearly all).
constexpr double kDefaultGpuMemoryFraction = 0.9;
// The host pool's growth stops doubling at this region size.
constexpr size_t kMaxHostRegionBytes = size_t{1} << 30;

// GPUACCEL_NO_CACHING=1 (or "true"): allocators pass every request to the device.
bool caching_disabled_by_env();
// GPUACCEL_GPU_MEMORY_FRACTION in (0, 1], if set and valid.
std::optional<double> gpu_memory_fraction_from_env();

// The logical device a memory call means: `spec` if given, else the innermost device scope,
// else the default device (GPU:0 if there is one, else CPU:0). Starts the runtime (as TF's
// first allocation does). ValueError naming `text` when no such logical device exists.
LogicalDevice resolve_logical_device(const std::optional<DeviceSpec>& spec,
                                     const std::string& text);

class MemoryManager {
 public:
  // Makes the sub-allocator for a logical device (tests install fakes). Devices on the same
  // physical device share one sub-allocator, so the factory is called once per physical device.
  using SubAllocatorFactory = std::function<std::shared_ptr<SubAllocator>(const LogicalDevice&)>;

  static MemoryManager& instance();

  // The allocator of `device`, created (and, for a preallocating GPU, filled) on first use.
  // While this thread captures a graph on the device's GPU, the graph's arena instead
  // (memory/capture_arena.h). The shared_ptr keeps the allocator alive after reset(), so hold it as long as memory from
  // it is live (tensor storage should keep it next to its pointer).
  std::shared_ptr<Allocator> allocator_for(const LogicalDevice& device);
  // The allocator of `device` if it was created, else nullptr (stats calls must not create a
  // GPU pool: that would preallocate).
  std::shared_ptr<Allocator> find(const LogicalDevice& device) const;
  // Pinned host memory for host-to-device staging; FailedPreconditionError without the CUDA
  // backend.
  std::shared_ptr<Allocator> pinned_host_allocator();
  // The allocators created so far, CPUs first.
  std::vector<std::shared_ptr<Allocator>> allocators() const;

  // Test hook (with DeviceRegistry::reset_instance): forgets every allocator. Allocators still
  // referenced elsewhere live on until released; the rest give their memory back now.
  void reset();

  void set_sub_allocator_factory(SubAllocatorFactory factory);  // empty: the real devices
  // Share of free GPU memory to preallocate; overrides GPUACCEL_GPU_MEMORY_FRACTION. Applies to
  // pools created afterwards. ValueError outside (0, 1].
  void set_gpu_memory_fraction(double fraction);
  double gpu_memory_fraction() const;

 private:
  using Key = std::pair<int, int>;  // (device type, index)
  std::shared_ptr<SubAllocator> sub_allocator_locked(const LogicalDevice& device);

  mutable std::mutex mutex_;
  std::map<Key, std::shared_ptr<Allocator>> allocators_;
  std::map<Key, std::shared_ptr<SubAllocator>> sub_allocators_;  // keyed by physical device
  std::shared_ptr<Allocator> pinned_;
  SubAllocatorFactory factory_;
  std::optional<double> fraction_;
};

}  // namespace gpuaccel
