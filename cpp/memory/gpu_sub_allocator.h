// GPU memory for a device's pool, through the CUDA backend library (cudaMalloc/cudaFree in
// libgpuaccel_cuda.so). Compiled everywhere, used only when the backend is loaded.
#pragma once

#include "memory/sub_allocator.h"

namespace gpuaccel {

class CudaLibrary;

class GpuSubAllocator final : public SubAllocator {
 public:
  // Throws FailedPreconditionError (with the loader's reason) when the backend is not loaded.
  explicit GpuSubAllocator(int physical_device);
  void* alloc(size_t bytes) override;
  void free(void* ptr, size_t bytes) override;
  std::optional<size_t> free_memory() const override;
  std::string kind() const override { return "gpu"; }

 private:
  CudaLibrary* library_;
  int device_;
};

}  // namespace gpuaccel
