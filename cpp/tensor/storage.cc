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
  return std::make_shared<Storage>(Key(), std::move(allocator), data, nbytes, device, nullptr);
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t nbytes, const LogicalDevice& device,
                                         std::shared_ptr<void> owner) {
  return std::make_shared<Storage>(Key(), nullptr, data, nbytes, device, std::move(owner));
}

Storage::Storage(Key, std::shared_ptr<Allocator> allocator, void* data, size_t nbytes,
                 const LogicalDevice& device, std::shared_ptr<void> owner)
    : allocator_(std::move(allocator)),
      owner_(std::move(owner)),
      data_(data),
      nbytes_(nbytes),
      device_(device),
      derived_(data, nbytes, [device](size_t bytes) -> std::shared_ptr<void> {
        if (bytes == 0) return nullptr;
        std::shared_ptr<Storage> copy = allocate(device, bytes, "derived copy");
        void* data = copy->data();
        return std::shared_ptr<void>(std::move(copy), data);  // the data, owning its storage
      }) {}

Storage::~Storage() {
  if (allocator_) allocator_->deallocate(data_);
}

}  // namespace gpuaccel
