// A sub-allocator that hands out address ranges from a pretend device of a given capacity and
// never touches memory. The tests drive the pool with it (growth, back-off when the device
// refuses, preallocation, out-of-memory) and the manager uses it for simulated GPUs, so the
// memory lesson is observable on a machine without a GPU. Its addresses must never be
// dereferenced.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <vector>

#include "memory/sub_allocator.h"

namespace gpuaccel {

class FakeSubAllocator final : public SubAllocator {
 public:
  // The first block starts at `base` (256-aligned); later blocks follow after a gap of
  // `gap_bytes` (0 places blocks back to back, which tests use to prove that the pool never
  // merges chunks across regions).
  explicit FakeSubAllocator(size_t capacity_bytes, uintptr_t base = uintptr_t{1} << 44,
                            size_t gap_bytes = 4096);

  void* alloc(size_t bytes) override;
  void free(void* ptr, size_t bytes) override;
  std::optional<size_t> free_memory() const override;
  std::string kind() const override { return "fake"; }

  // Refuse every request for which `refuse(bytes)` is true (in addition to the capacity).
  void set_refusal(std::function<bool(size_t)> refuse);

  size_t capacity() const { return capacity_; }
  size_t used() const;
  size_t live_blocks() const;
  // Every size asked for, granted or not, in order.
  std::vector<size_t> requests() const;
  // The live blocks, address -> size.
  std::map<uintptr_t, size_t> blocks() const;
  int64_t alloc_calls() const;
  int64_t free_calls() const;

 private:
  mutable std::mutex mutex_;
  size_t capacity_;
  size_t gap_;
  uintptr_t next_;
  size_t used_ = 0;
  std::map<uintptr_t, size_t> live_;
  std::vector<size_t> requests_;
  std::function<bool(size_t)> refuse_;
  int64_t alloc_calls_ = 0;
  int64_t free_calls_ = 0;
};

}  // namespace gpuaccel
