// Page-locked host memory (cudaHostAlloc through the CUDA backend library) for host-to-device
// staging: copies from it can be asynchronous and run at full PCIe speed. It gets its own pool
// because pinning is expensive and pinned memory is scarce.
#pragma once

#include "memory/sub_allocator.h"

namespace gpuaccel {

class CudaLibrary;

class PinnedHostSubAllocator final : public SubAllocator {
 public:
  // Throws FailedPreconditionError (with the loader's reason) when the backend is not loaded.
  PinnedHostSubAllocator();
  void* alloc(size_t bytes) override;
  void free(void* ptr, size_t bytes) override;
  std::string kind() const override { return "pinned_host"; }

 private:
  CudaLibrary* library_;
};

}  // namespace gpuaccel
