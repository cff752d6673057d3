// Host-to-device copies from pageable memory staged through a small ring of pinned buffers
// (header-only: compiled into the CUDA backend library and the tests). cudaMemcpyAsync from
// pageable memory may synchronize with the stream before it copies (CUDA's "API
// synchronization behavior"): a training step's batch upload would make the host wait for the
// previous step, so the GPU idles while the host prepares the next one. From pinned memory the
// copy is a DMA queued on the stream and the call returns at once. So a pageable source is
// copied by the host into the next pinned slot, whose DMA is then queued; a slot is reused only
// after the event recorded behind its last DMA has completed (normally long ago: the ring has
// kSlots slots). Copies larger than a slot go through the slots in chunks. The caller may reuse
// its buffer as soon as copy() returns, as with a pageable cudaMemcpyAsync.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstring>
#include <mutex>

namespace gpuaccel {

// What the ring needs from a device: pinned host memory, and an asynchronous copy and events
// on the device's stream. The CUDA backend implements it with the CUDA runtime; tests with a
// stream simulated on the host.
class StagingEngine {
 public:
  virtual ~StagingEngine() = default;
  virtual void* alloc_pinned(size_t bytes) = 0;
  virtual void free_pinned(void* pinned) = 0;
  virtual void* create_event() = 0;
  virtual void destroy_event(void* event) = 0;
  // Queues a copy of `bytes` from pinned memory to device memory on the stream.
  virtual void copy_async(void* dst, const void* pinned, size_t bytes) = 0;
  // Records `event` on the stream, behind everything queued so far.
  virtual void record(void* event) = 0;
  // Blocks the host until the work queued before `event`'s last record has run.
  virtual void host_wait(void* event) = 0;
};

class StagingRing {
 public:
  static constexpr size_t kSlots = 4;
  static constexpr size_t kSlotBytes = size_t{2} << 20;  // a course batch of 256 is 800 KB

  explicit StagingRing(StagingEngine& engine) : engine_(engine) {}
  ~StagingRing() {
    for (Slot& slot : slots_) {
      if (slot.recorded) engine_.host_wait(slot.event);
      if (slot.event != nullptr) engine_.destroy_event(slot.event);
      if (slot.pinned != nullptr) engine_.free_pinned(slot.pinned);
    }
  }
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  // Queues the copy of `bytes` from pageable `host` to device memory `dst`; `host` may be
  // reused when this returns. Thread-safe.
  void copy(void* dst, const void* host, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t done = 0; done < bytes;) {
      const size_t n = std::min(kSlotBytes, bytes - done);
      Slot& slot = slots_[next_];
      next_ = (next_ + 1) % kSlots;
      if (slot.pinned == nullptr) {
        slot.pinned = engine_.alloc_pinned(kSlotBytes);
        slot.event = engine_.create_event();
      } else if (slot.recorded) {
        engine_.host_wait(slot.event);  // its previous DMA has read the slot
      }
      std::memcpy(slot.pinned, static_cast<const char*>(host) + done, n);
      engine_.copy_async(static_cast<char*>(dst) + done, slot.pinned, n);
      engine_.record(slot.event);
      slot.recorded = true;
      done += n;
    }
  }

 private:
  struct Slot {
    void* pinned = nullptr;
    void* event = nullptr;
    bool recorded = false;
  };
  StagingEngine& engine_;
  std::mutex mutex_;
  std::array<Slot, kSlots> slots_{};
  size_t next_ = 0;
};

}  // namespace gpuaccel
