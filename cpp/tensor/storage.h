// The bytes behind a tensor: one allocation from its logical device's pool, returned to that
// pool when the last owner lets go. Every piece of tensor memory in gpuaccel is a Storage, so
// the allocator's stats (memory_allocated, get_memory_info) count exactly what tensors use.
// A storage also carries its version counter and the copies derived from it (derived_copies.h):
// whoever writes into an existing storage calls bump_version() after the write.
#pragma once

#include <cstddef>
#include <atomic>
#include <cstdint>
#include <memory>

#include "core/device_registry.h"
#include "memory/allocator.h"
#include "tensor/derived_copies.h"

namespace gpuaccel {

class Storage {
 public:
  // `nbytes` from the pool of `device`; ResourceExhaustedError (op `op`) when it does not fit.
  static std::shared_ptr<Storage> allocate(const LogicalDevice& device, size_t nbytes,
                                           const char* op = "allocate");
  // Borrows memory owned by someone else (a NumPy array for zero-copy from_numpy): `owner`
  // is kept alive as long as the storage, and the memory is not counted in any pool.
  static std::shared_ptr<Storage> borrow(void* data, size_t nbytes, const LogicalDevice& device,
                                         std::shared_ptr<void> owner);
  // Only allocate/borrow can make the key; public so make_shared (one allocation) can call it.
  class Key {
    friend class Storage;
    explicit Key() = default;
  };
  Storage(Key, std::shared_ptr<Allocator> allocator, void* data, size_t nbytes,
          const LogicalDevice& device, std::shared_ptr<void> owner);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  const LogicalDevice& device() const { return device_; }
  // Host code may read and write data() only when this is true (CPU storage).
  bool host_accessible() const { return device_.type == DeviceType::kCPU; }

  // Bumped after every in-place write (see derived_copies.h); copies of an older version are
  // rebuilt when next asked for.
  uint64_t version() const { return derived_.version(); }
  void bump_version() { derived_.bump_version(); }
  DerivedCopies& derived_copies() { return derived_; }
  // Derived copies are only safe when every write goes through code that bumps the version:
  // not for memory NumPy owns (from_numpy without a copy), nor once the buffer protocol has
  // handed out a writable pointer (mark_aliased_by_host).
  bool caches_derived_copies() const { return owner_ == nullptr && !aliased_by_host_.load(); }
  void mark_aliased_by_host() {
    aliased_by_host_.store(true);
    derived_.clear();
  }

 private:
  // Held so the pool outlives its memory, even across a test's runtime reset (null: borrowed).
  std::shared_ptr<Allocator> allocator_;
  std::shared_ptr<void> owner_;  // borrowed memory's owner
  void* data_;
  size_t nbytes_;
  LogicalDevice device_;
  std::atomic<bool> aliased_by_host_{false};
  DerivedCopies derived_;
};

}  // namespace gpuaccel
