// Pool creation policy per device kind (see memory_manager.h) and name resolution for the
// memory calls.
#include "memory/memory_manager.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/device_scope.h"
#include "core/errors.h"
#include "memory/capture_arena.h"
#include "memory/direct_allocator.h"
#include "memory/fake_sub_allocator.h"
#include "memory/gpu_sub_allocator.h"
#include "memory/host_sub_allocator.h"
#include "memory/pinned_host_sub_allocator.h"
#include "memory/pool_allocator.h"

namespace gpuaccel {

namespace {

constexpr const char* kMemoryLimitSource = "memory_limit of the logical device";

MemoryManager::SubAllocatorFactory::result_type default_sub_allocator(const LogicalDevice& d) {
  if (d.type == DeviceType::kCPU) return std::make_shared<HostSubAllocator>();
  DeviceRegistry& registry = DeviceRegistry::instance();
  if (registry.gpu_provider_kind() == "simulated") {
    // Simulated GPUs run nothing; a fake device of the same size makes growth, preallocation
    // and out-of-memory observable. Its addresses are never dereferenced.
    const auto total = static_cast<size_t>(registry.gpu_info(d.physical_index).total_memory);
    const uintptr_t base = (uintptr_t{1} << 44) + (static_cast<uintptr_t>(d.physical_index) << 40);
    return std::make_shared<FakeSubAllocator>(total, base);
  }
  return std::make_shared<GpuSubAllocator>(d.physical_index);
}

}  // namespace

bool caching_disabled_by_env() {
  const char* v = std::getenv("GPUACCEL_NO_CACHING");
  return v != nullptr && (std::strcmp(v, "1") == 0 || std::strcmp(v, "true") == 0 ||
                          std::strcmp(v, "TRUE") == 0 || std::strcmp(v, "True") == 0);
}

std::optional<double> gpu_memory_fraction_from_env() {
  const char* v = std::getenv("GPUACCEL_GPU_MEMORY_FRACTION");
  if (v == nullptr || *v == '\0') return std::nullopt;
  char* end = nullptr;
  const double f = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(f > 0.0 && f <= 1.0)) return std::nullopt;
  return f;
}

LogicalDevice resolve_logical_device(const std::optional<DeviceSpec>& spec,
                                     const std::string& text) {
  DeviceRegistry& registry = DeviceRegistry::instance();
  const std::optional<DeviceSpec> wanted = spec ? spec : current_device_scope();
  if (!wanted) {
    const auto gpus = registry.logical_devices(DeviceType::kGPU);
    if (!gpus.empty()) return gpus.front();
    const auto cpus = registry.logical_devices(DeviceType::kCPU);
    if (!cpus.empty()) return cpus.front();
  } else {
    const auto list = registry.logical_devices(wanted->type);
    const int index = wanted->index_or_zero();
    if (index >= 0 && index < static_cast<int>(list.size())) return list[index];
  }
  std::string names;
  for (const auto& d : registry.logical_devices()) {
    names += (names.empty() ? "" : ", ") + d.name();
  }
  throw_value_error("", "No logical device matches '" + text + "'; the logical devices are: " +
                            (names.empty() ? std::string("(none)") : names));
}

MemoryManager& MemoryManager::instance() {
  static auto* manager = new MemoryManager();  // never destroyed: pools may outlive main()
  return *manager;
}

std::shared_ptr<SubAllocator> MemoryManager::sub_allocator_locked(const LogicalDevice& device) {
  const Key key{static_cast<int>(device.type), device.physical_index};
  auto it = sub_allocators_.find(key);
  if (it != sub_allocators_.end()) return it->second;
  auto sub = factory_ ? factory_(device) : default_sub_allocator(device);
  if (!sub) throw_error(ErrorCode::kInternal, "MemoryManager", "no sub-allocator for " + device.name());
  sub_allocators_[key] = sub;
  return sub;
}

std::shared_ptr<Allocator> MemoryManager::allocator_for(const LogicalDevice& device) {
  if (auto arena = routed_capture_arena(device)) return arena;
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key{static_cast<int>(device.type), device.index};
  auto it = allocators_.find(key);
  if (it != allocators_.end()) return it->second;

  const bool gpu = device.type == DeviceType::kGPU;
  PoolOptions options;
  options.name = std::string(device_type_name(device.type)) + "_" + std::to_string(device.index) +
                 "_pool";
  options.device_name = device.full_name();
  options.is_gpu = gpu;
  options.memory_growth = !gpu || device.memory_growth;
  if (device.memory_limit_bytes) {
    options.limit_bytes = static_cast<size_t>(*device.memory_limit_bytes);
    options.limit_source = kMemoryLimitSource;
  }
  if (!gpu) options.max_region_bytes = kMaxHostRegionBytes;
  if (gpu) {
    options.regions_held = [physical = device.physical_index] { return capture_holds_regions(physical); };
    options.keep_freed_block = [physical = device.physical_index](PoolAllocator& pool, void* ptr) {
      return keep_for_capture(physical, pool, ptr);
    };
  }

  std::shared_ptr<SubAllocator> sub = sub_allocator_locked(device);
  std::shared_ptr<Allocator> allocator;
  if (caching_disabled_by_env()) {
    allocator = std::make_shared<DirectAllocator>(sub, options);
  } else if (gpu && !device.memory_growth) {
    // TF's default: take (most of) the GPU now, so later allocations never call cudaMalloc.
    std::optional<size_t> target = options.limit_bytes;
    if (!target) {
      if (const auto free_bytes = sub->free_memory()) {
        const double fraction = fraction_ ? *fraction_ : gpu_memory_fraction_from_env().value_or(
                                                             kDefaultGpuMemoryFraction);
        target = static_cast<size_t>(static_cast<double>(*free_bytes) * fraction);
        options.limit_bytes = target;
        options.limit_source = "preallocated: " + std::to_string(static_cast<int>(fraction * 100 + 0.5)) +
                               "% of the GPU's free memory; set_memory_growth(gpu, True) or "
                               "GPUACCEL_GPU_MEMORY_FRACTION change this";
      }
    }
    auto pool = std::make_shared<PoolAllocator>(sub, options);
    if (target) pool->preallocate(*target);
    allocator = pool;
  } else {
    allocator = std::make_shared<PoolAllocator>(sub, options);
  }
  allocators_[key] = allocator;
  return allocator;
}

std::shared_ptr<Allocator> MemoryManager::find(const LogicalDevice& device) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = allocators_.find({static_cast<int>(device.type), device.index});
  return it == allocators_.end() ? nullptr : it->second;
}

std::shared_ptr<Allocator> MemoryManager::pinned_host_allocator() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (pinned_) return pinned_;
  PoolOptions options;
  options.name = "pinned_host_pool";
  options.device_name = "pinned host memory";
  options.max_region_bytes = kMaxHostRegionBytes;
  auto sub = std::make_shared<PinnedHostSubAllocator>();
  if (caching_disabled_by_env()) {
    pinned_ = std::make_shared<DirectAllocator>(sub, options);
  } else {
    pinned_ = std::make_shared<PoolAllocator>(sub, options);
  }
  return pinned_;
}

std::vector<std::shared_ptr<Allocator>> MemoryManager::allocators() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::shared_ptr<Allocator>> out;
  for (const auto& [key, allocator] : allocators_) out.push_back(allocator);
  if (pinned_) out.push_back(pinned_);
  return out;
}

void MemoryManager::reset() {
  std::map<Key, std::shared_ptr<Allocator>> allocators;
  std::map<Key, std::shared_ptr<SubAllocator>> subs;
  std::shared_ptr<Allocator> pinned;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    allocators.swap(allocators_);
    subs.swap(sub_allocators_);
    pinned.swap(pinned_);
  }
  // Destroyed here, outside the lock: pools give their regions back.
}

void MemoryManager::set_sub_allocator_factory(SubAllocatorFactory factory) {
  std::lock_guard<std::mutex> lock(mutex_);
  factory_ = std::move(factory);
}

void MemoryManager::set_gpu_memory_fraction(double fraction) {
  if (!(fraction > 0.0 && fraction <= 1.0)) {
    throw_value_error("set_gpu_memory_fraction",
                      "the fraction must be in (0, 1], got " + std::to_string(fraction));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  fraction_ = fraction;
}

double MemoryManager::gpu_memory_fraction() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return fraction_ ? *fraction_ : gpu_memory_fraction_from_env().value_or(kDefaultGpuMemoryFraction);
}

}  // namespace gpuaccel
