// Maps the backend's status codes onto the SubAllocator contract: out of memory is a refusal
// (nullptr, so the pool backs off), anything else is an InternalError carrying the CUDA message.
#include "memory/gpu_sub_allocator.h"

#include "core/cuda_backend_loader.h"
#include "core/errors.h"

namespace gpuaccel {

namespace {
constexpr size_t kErrLen = 512;
}

GpuSubAllocator::GpuSubAllocator(int physical_device)
    : backend_(&require_cuda_backend("GpuSubAllocator")), device_(physical_device) {}

void* GpuSubAllocator::alloc(size_t bytes) {
  void* ptr = nullptr;
  char err[kErrLen] = {0};
  const int status = backend_->malloc_device(device_, bytes, &ptr, err, kErrLen);
  if (status == GPUACCEL_CUDA_OUT_OF_MEMORY) return nullptr;
  if (status != GPUACCEL_CUDA_OK) {
    throw_error(ErrorCode::kInternal, "cudaMalloc", std::string("GPU ") + std::to_string(device_) +
                                                        ": " + err);
  }
  return ptr;
}

void GpuSubAllocator::free(void* ptr, size_t /*bytes*/) {
  char err[kErrLen] = {0};
  if (backend_->free_device(device_, ptr, err, kErrLen) != GPUACCEL_CUDA_OK) {
    throw_error(ErrorCode::kInternal, "cudaFree", std::string("GPU ") + std::to_string(device_) +
                                                      ": " + err);
  }
}

std::optional<size_t> GpuSubAllocator::free_memory() const {
  size_t free_bytes = 0, total_bytes = 0;
  char err[kErrLen] = {0};
  if (backend_->memory_info(device_, &free_bytes, &total_bytes, err, kErrLen) != GPUACCEL_CUDA_OK) {
    return std::nullopt;
  }
  return free_bytes;
}

}  // namespace gpuaccel
