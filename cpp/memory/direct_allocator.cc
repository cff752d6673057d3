// The no-caching allocator: exact sizes to the device (so sanitizers catch an overrun of even
// one byte), with the pool's accounting and out-of-memory report.
#include "memory/direct_allocator.h"

#include <algorithm>

#include "core/errors.h"
#include "memory/allocation_observer.h"
#include "memory/oom_message.h"

namespace gpuaccel {

DirectAllocator::DirectAllocator(std::shared_ptr<SubAllocator> sub_allocator, PoolOptions options)
    : sub_(std::move(sub_allocator)), options_(std::move(options)) {
  if (!sub_) throw_value_error("DirectAllocator", "a sub-allocator is required");
  stats_.limit_bytes = options_.limit_bytes ? std::optional<int64_t>(*options_.limit_bytes)
                                            : std::nullopt;
}

void* DirectAllocator::allocate(size_t bytes) {
  if (bytes == 0) return nullptr;
  void* ptr = nullptr;
  AllocationEvent event;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    const size_t reserved = static_cast<size_t>(stats_.reserved_bytes.current);
    if (bytes > kMaxAllocationBytes ||
        (options_.limit_bytes && bytes > *options_.limit_bytes - std::min(reserved, *options_.limit_bytes))) {
      throw_oom_locked(bytes, false, lock);
    }
    ptr = sub_->alloc(bytes);
    if (ptr == nullptr) throw_oom_locked(bytes, true, lock);
    live_[ptr] = Block{bytes, bytes};
    for (StatCounter* c : {&stats_.allocated_bytes, &stats_.requested_bytes, &stats_.reserved_bytes}) {
      c->increase(static_cast<int64_t>(bytes));
    }
    stats_.allocations.increase(1);
    stats_.segments.increase(1);
    ++stats_.num_device_alloc;
    event.kind = AllocationEventKind::kAllocate;
    event.pool = &options_.name;
    event.device = &options_.device_name;
    event.ptr = ptr;
    event.bytes = event.requested = bytes;
    event.allocated_after = stats_.allocated_bytes.current;
    event.reserved_after = stats_.reserved_bytes.current;
  }
  notify_allocation_observer(event);
  return ptr;
}

void DirectAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  AllocationEvent event;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = live_.find(ptr);
    if (it == live_.end()) {
      throw_error(ErrorCode::kInvalidArgument, "deallocate",
                  "pointer was not allocated by " + options_.name + " on " + options_.device_name +
                      " (a double free, or memory of another device)");
    }
    const Block block = it->second;
    live_.erase(it);
    sub_->free(ptr, block.size);
    for (StatCounter* c : {&stats_.allocated_bytes, &stats_.requested_bytes, &stats_.reserved_bytes}) {
      c->decrease(static_cast<int64_t>(block.size));
    }
    stats_.allocations.decrease(1);
    stats_.segments.decrease(1);
    ++stats_.num_device_free;
    event.kind = AllocationEventKind::kDeallocate;
    event.pool = &options_.name;
    event.device = &options_.device_name;
    event.ptr = ptr;
    event.bytes = event.requested = block.size;
    event.allocated_after = stats_.allocated_bytes.current;
    event.reserved_after = stats_.reserved_bytes.current;
  }
  notify_allocation_observer(event);
}

MemoryStats DirectAllocator::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;  // no free chunks: nothing is cached
}

void DirectAllocator::reset_peak_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_peak();
}

void DirectAllocator::reset_accumulated_stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.reset_accumulated();
}

void DirectAllocator::throw_oom_locked(size_t bytes, bool refused, std::unique_lock<std::mutex>& lock) {
  ++stats_.num_ooms;
  OomReport r;
  r.device_name = options_.device_name;
  r.pool_name = options_.name + " (no caching: GPUACCEL_NO_CACHING=1)";
  r.is_gpu = options_.is_gpu;
  r.memory_growth = true;  // nothing is preallocated in this mode
  r.requested = r.rounded = bytes;
  r.in_use = stats_.allocated_bytes.current;
  r.allocations = stats_.allocations.current;
  r.reserved = stats_.reserved_bytes.current;
  r.limit = stats_.limit_bytes;
  r.limit_source = options_.limit_source;
  r.device_free = sub_->free_memory();
  r.cause = refused ? OomCause::kDeviceRefused : OomCause::kLimit;
  const std::string message = format_oom_message(r);
  lock.unlock();
  throw_error(ErrorCode::kResourceExhausted, "allocate", message);
}

}  // namespace gpuaccel
