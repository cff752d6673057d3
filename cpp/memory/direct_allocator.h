// GPUACCEL_NO_CACHING=1: every allocation goes straight to the sub-allocator and every free
// straight back, so AddressSanitizer (host) and compute-sanitizer (GPU) see each block with its
// exact size. Stats, the limit and the out-of-memory report behave as in the pool, so the
// Python API reads the same in both modes (reserved always equals allocated here).
#pragma once

#include <memory>
#include <mutex>
#include <unordered_map>

#include "memory/allocator.h"
#include "memory/pool_allocator.h"
#include "memory/sub_allocator.h"

namespace gpuaccel {

class DirectAllocator final : public Allocator {
 public:
  // Uses name, device_name, is_gpu, memory_growth, limit_bytes and limit_source of `options`.
  DirectAllocator(std::shared_ptr<SubAllocator> sub_allocator, PoolOptions options);
  ~DirectAllocator() override = default;

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr) override;
  MemoryStats stats() const override;
  void reset_peak_stats() override;
  void reset_accumulated_stats() override;
  size_t empty_cache() override { return 0; }
  const std::string& name() const override { return options_.name; }
  const std::string& device_name() const override { return options_.device_name; }
  bool caching() const override { return false; }

 private:
  struct Block {
    size_t size;
    size_t requested;
  };
  [[noreturn]] void throw_oom_locked(size_t bytes, bool refused, std::unique_lock<std::mutex>& lock);

  std::shared_ptr<SubAllocator> sub_;
  PoolOptions options_;
  mutable std::mutex mutex_;
  std::unordered_map<const void*, Block> live_;
  MemoryStats stats_;
};

}  // namespace gpuaccel
