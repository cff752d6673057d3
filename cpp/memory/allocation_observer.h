// The profiler's hook into memory: one process-wide callback that hears every allocation, free,
// and region acquired from or returned to a device. Nothing is recorded when no observer is set
// (one relaxed atomic load per call), so the hook costs nothing in normal runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace gpuaccel {

enum class AllocationEventKind {
  kAllocate,       // a caller got `bytes` at `ptr`
  kDeallocate,     // a caller gave `ptr` back
  kReserveRegion,  // the allocator took a region of `bytes` from the device
  kReleaseRegion,  // the allocator gave a region back to the device
};

const char* allocation_event_kind_name(AllocationEventKind kind);

struct AllocationEvent {
  AllocationEventKind kind = AllocationEventKind::kAllocate;
  const std::string* pool = nullptr;    // e.g. "CPU_0_pool"; valid during the call only
  const std::string* device = nullptr;  // full TF device name; valid during the call only
  const void* ptr = nullptr;
  size_t bytes = 0;      // chunk (or region) size
  size_t requested = 0;  // what the caller asked for (allocations only)
  int64_t allocated_after = 0;  // allocated bytes of the pool after the event
  int64_t reserved_after = 0;   // reserved bytes of the pool after the event
};

using AllocationObserver = std::function<void(const AllocationEvent&)>;

// Installs `observer` (an empty function removes it). It is called outside the allocator's
// lock, from whichever thread allocated, so it must be thread-safe; it may allocate.
void set_allocation_observer(AllocationObserver observer);
bool allocation_observer_installed();
// Delivers `event` to the observer, if one is installed.
void notify_allocation_observer(const AllocationEvent& event);

}  // namespace gpuaccel
