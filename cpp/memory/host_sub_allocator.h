// Host memory for the CPU device's pool (and, with GPUACCEL_NO_CACHING=1, for every host
// allocation): the C heap with a 256-byte alignment, so oneDNN and AVX-512 loads get aligned
// data and sanitizers see each block.
#pragma once

#include "memory/sub_allocator.h"

namespace gpuaccel {

class HostSubAllocator final : public SubAllocator {
 public:
  static constexpr size_t kAlignment = 256;  // >= 64 (a cache line / one AVX-512 register)
  void* alloc(size_t bytes) override;
  void free(void* ptr, size_t bytes) override;
  std::string kind() const override { return "host"; }
};

}  // namespace gpuaccel
