// The interface every consumer of device memory talks to (tensor storage, backends, staging
// buffers). One interface serves host, pinned host and each GPU, whether the memory comes from
// the pooling allocator or, with GPUACCEL_NO_CACHING=1, straight from the device.
#pragma once

#include <cstddef>
#include <string>

#include "memory/memory_stats.h"

namespace gpuaccel {

class Allocator {
 public:
  virtual ~Allocator() = default;

  // Returns memory aligned to at least kAllocatorAlignment bytes, or nullptr for 0 bytes.
  // Throws ResourceExhaustedError (ErrorCode::kResourceExhausted) with a full report when the
  // memory cannot be had; the allocator stays usable afterwards. Thread-safe.
  virtual void* allocate(size_t bytes) = 0;
  // Returns memory from allocate(); nullptr is ignored. Freeing anything else is an
  // InvalidArgumentError. Thread-safe.
  virtual void deallocate(void* ptr) = 0;

  virtual MemoryStats stats() const = 0;
  // Peaks become the current values (TF's reset_memory_stats, PyTorch's reset_peak_memory_stats).
  virtual void reset_peak_stats() = 0;
  // Cumulative counters (allocated/freed totals, OOMs, retries) return to zero.
  virtual void reset_accumulated_stats() = 0;
  // Gives regions that hold no live allocation back to the device; returns the bytes released.
  virtual size_t empty_cache() = 0;

  // The pool's name, e.g. "GPU_0_pool" (TF calls its allocators "GPU_0_bfc").
  virtual const std::string& name() const = 0;
  // The device it serves, as TF writes it: "/job:localhost/replica:0/task:0/device:GPU:0".
  virtual const std::string& device_name() const = 0;
  // False for the pass-through allocator of GPUACCEL_NO_CACHING=1.
  virtual bool caching() const = 0;
};

// Every allocation is aligned to this (cache lines, AVX-512 loads, and CUDA's 256-byte rule).
constexpr size_t kAllocatorAlignment = 256;

}  // namespace gpuaccel
