// posix_memalign-backed host blocks; a refusal (ENOMEM) is reported as nullptr so the pool can
// back off and, if that fails too, raise its out-of-memory report.
#include "memory/host_sub_allocator.h"

#include <cstdlib>

namespace gpuaccel {

void* HostSubAllocator::alloc(size_t bytes) {
  void* ptr = nullptr;
  if (bytes == 0) bytes = 1;
  if (posix_memalign(&ptr, kAlignment, bytes) != 0) return nullptr;
  return ptr;
}

void HostSubAllocator::free(void* ptr, size_t /*bytes*/) { std::free(ptr); }

}  // namespace gpuaccel
