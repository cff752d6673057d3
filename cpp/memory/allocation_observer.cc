// The observer lives behind a shared_ptr so a call in flight keeps the old callback alive
// while another thread replaces it.
#include "memory/allocation_observer.h"

#include <atomic>
#include <memory>
#include <mutex>

namespace gpuaccel {

namespace {
std::atomic<bool> g_installed{false};
std::mutex g_mutex;
std::shared_ptr<const AllocationObserver>& observer_slot() {
  static auto* slot = new std::shared_ptr<const AllocationObserver>();  // never destroyed
  return *slot;
}
}  // namespace

const char* allocation_event_kind_name(AllocationEventKind kind) {
  switch (kind) {
    case AllocationEventKind::kAllocate: return "allocate";
    case AllocationEventKind::kDeallocate: return "deallocate";
    case AllocationEventKind::kReserveRegion: return "reserve_region";
    case AllocationEventKind::kReleaseRegion: return "release_region";
  }
  return "unknown";
}

void set_allocation_observer(AllocationObserver observer) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (observer) {
    observer_slot() = std::make_shared<const AllocationObserver>(std::move(observer));
    g_installed.store(true, std::memory_order_release);
  } else {
    observer_slot().reset();
    g_installed.store(false, std::memory_order_release);
  }
}

bool allocation_observer_installed() { return g_installed.load(std::memory_order_relaxed); }

void notify_allocation_observer(const AllocationEvent& event) {
  if (!allocation_observer_installed()) return;
  std::shared_ptr<const AllocationObserver> observer;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    observer = observer_slot();
  }
  if (observer) (*observer)(event);
}

}  // namespace gpuaccel
