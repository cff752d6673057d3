// Maps the library's statuses onto the SubAllocator contract: out of memory is a refusal
// (nullptr, so the pool backs off), anything else is an InternalError carrying the CUDA message.
#include "memory/gpu_sub_allocator.h"

#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/errors.h"

namespace gpuaccel {

GpuSubAllocator::GpuSubAllocator(int physical_device)
    : library_(&require_cuda_library("GpuSubAllocator")), device_(physical_device) {}

void* GpuSubAllocator::alloc(size_t bytes) {
  void* ptr = nullptr;
  std::string err;
  const CudaStatus status = library_->malloc_device(device_, bytes, &ptr, &err);
  if (status == CudaStatus::kOutOfMemory) return nullptr;
  if (status != CudaStatus::kOk) {
    throw_error(ErrorCode::kInternal, "cudaMalloc", std::string("GPU ") + std::to_string(device_) +
                                                        ": " + err);
  }
  return ptr;
}

void GpuSubAllocator::free(void* ptr, size_t /*bytes*/) {
  std::string err;
  if (library_->free_device(device_, ptr, &err) != CudaStatus::kOk) {
    throw_error(ErrorCode::kInternal, "cudaFree", std::string("GPU ") + std::to_string(device_) +
                                                      ": " + err);
  }
}

std::optional<size_t> GpuSubAllocator::free_memory() const {
  size_t free_bytes = 0, total_bytes = 0;
  std::string err;
  if (library_->memory_info(device_, &free_bytes, &total_bytes, &err) != CudaStatus::kOk) {
    return std::nullopt;
  }
  return free_bytes;
}

}  // namespace gpuaccel
