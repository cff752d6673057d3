// Out of pinnable memory is a refusal (nullptr); other failures carry the CUDA message.
#include "memory/pinned_host_sub_allocator.h"

#include "core/cuda_loader/cuda_backend_loader.h"
#include "core/errors.h"

namespace gpuaccel {

PinnedHostSubAllocator::PinnedHostSubAllocator()
    : library_(&require_cuda_library("PinnedHostSubAllocator")) {}

void* PinnedHostSubAllocator::alloc(size_t bytes) {
  void* ptr = nullptr;
  std::string err;
  const CudaStatus status = library_->malloc_host_pinned(bytes, &ptr, &err);
  if (status == CudaStatus::kOutOfMemory) return nullptr;
  if (status != CudaStatus::kOk) {
    throw_error(ErrorCode::kInternal, "cudaHostAlloc", err);
  }
  return ptr;
}

void PinnedHostSubAllocator::free(void* ptr, size_t /*bytes*/) {
  std::string err;
  if (library_->free_host_pinned(ptr, &err) != CudaStatus::kOk) {
    throw_error(ErrorCode::kInternal, "cudaFreeHost", err);
  }
}

}  // namespace gpuaccel
