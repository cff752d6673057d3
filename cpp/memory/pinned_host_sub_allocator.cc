// Out of pinnable memory is a refusal (nullptr); other failures carry the CUDA message.
#include "memory/pinned_host_sub_allocator.h"

#include "core/cuda_backend_loader.h"
#include "core/errors.h"

namespace gpuaccel {

namespace {
constexpr size_t kErrLen = 512;
}

PinnedHostSubAllocator::PinnedHostSubAllocator()
    : backend_(&require_cuda_backend("PinnedHostSubAllocator")) {}

void* PinnedHostSubAllocator::alloc(size_t bytes) {
  void* ptr = nullptr;
  char err[kErrLen] = {0};
  const int status = backend_->malloc_host_pinned(bytes, &ptr, err, kErrLen);
  if (status == GPUACCEL_CUDA_OUT_OF_MEMORY) return nullptr;
  if (status != GPUACCEL_CUDA_OK) {
    throw_error(ErrorCode::kInternal, "cudaHostAlloc", err);
  }
  return ptr;
}

void PinnedHostSubAllocator::free(void* ptr, size_t /*bytes*/) {
  char err[kErrLen] = {0};
  if (backend_->free_host_pinned(ptr, err, kErrLen) != GPUACCEL_CUDA_OK) {
    throw_error(ErrorCode::kInternal, "cudaFreeHost", err);
  }
}

}  // namespace gpuaccel
