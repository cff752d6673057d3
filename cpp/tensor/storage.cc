// Storage allocation through the per-device pools (see storage.h).
#include "tensor/storage.h"

#include "core/errors.h"
#include "memory/memory_manager.h"

namespace gpuaccel {

std::shared_ptr<Storage> Storage::allocate(const LogicalDevice& device, size_t nbytes,
                                           const char* op) {
  std::shared_ptr<Allocator> allocator = MemoryManager::instance().allocator_for(device);
  void* data = nullptr;
  try {
    data = allocator->allocate(nbytes);
  } catch (const Error& e) {
    // Re-labelled so the student sees which op ran out of memory.
    throw Error(e.code(), op, e.message());
  }
  return std::shared_ptr<Storage>(new Storage(std::move(allocator), data, nbytes, device));
}

Storage::Storage(std::shared_ptr<Allocator> allocator, void* data, size_t nbytes,
                 LogicalDevice device)
    : allocator_(std::move(allocator)), data_(data), nbytes_(nbytes), device_(std::move(device)) {}

Storage::~Storage() { allocator_->deallocate(data_); }

}  // namespace gpuaccel
