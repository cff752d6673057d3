// Uploads training batches to a GPU on the device's copy stream, so the copy of batch i+1 runs
// while step i computes instead of queueing behind it on the compute stream (issue 12, part 2;
// docs/gpu_step.md, "Uploads"). Device-neutral: it speaks only the Backend's streams and
// events (backends/backend.h), so on the CPU they cost nothing and tests run it against a
// backend that simulates a slow copy stream.
//
// Two slots, used in turn. A slot holds, per input, a pinned host buffer (the pinned host
// pool) and a device buffer at a fixed address, plus two events: `uploaded` (recorded on the
// copy stream behind the slot's DMAs) and `consumed` (recorded on the compute stream behind the
// last work that read the slot's device buffers). For batch i in slot s:
//   1. the host waits for s.uploaded (batch i-2's DMA has read the pinned buffers: normally long
//      done), then copies the batch into the pinned buffers;
//   2. the copy stream waits for s.consumed (step i-2 has read the device buffers), copies, and
//      records s.uploaded;
//   3. the compute stream waits for s.uploaded, so the step queued next reads whole data;
//   4. once the work that reads the buffers is queued (the eager step, or the copy into a CUDA
//      graph's input buffers), release() records s.consumed on the compute stream.
// The host never waits for the compute stream, and never for step i-1: batch i+1's upload is
// queued while step i may still be running.
//
// Device buffers are the uploader's for its lifetime, so the pool's rule that its memory is
// reused in compute-stream order holds: a buffer fresh from the pool may still be read by
// compute work queued before its allocation, so a slot whose buffers were just (re)allocated
// records `consumed` on the compute stream at once, and its first DMA waits for that.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "backends/backend.h"
#include "memory/allocator.h"
#include "tensor/tensor.h"

namespace gpuaccel::train {

class BatchUploader {
 public:
  static constexpr size_t kSlots = 2;

  // Uploads to `device` through `backend` (that device's), with pinned host buffers from
  // `pinned`. Both must outlive the uploader.
  BatchUploader(Backend& backend, const LogicalDevice& device, std::shared_ptr<Allocator> pinned);
  // Waits for the slots' DMAs (their pinned buffers go back to the pool) and frees the events.
  ~BatchUploader();
  BatchUploader(const BatchUploader&) = delete;
  BatchUploader& operator=(const BatchUploader&) = delete;

  // Host tensors of one batch -> tensors on the device holding the same values for any work
  // queued on the compute stream after this call. The returned tensors are the slot's own
  // buffers: they are overwritten two uploads later, so call release() once the work that
  // reads them is queued, and keep no reference past that.
  std::vector<Tensor> upload(const std::vector<Tensor>& host);
  // Records that the work reading the last upload's buffers has been queued on the compute
  // stream. Idempotent until the next upload.
  void release();

  const LogicalDevice& device() const { return device_; }
  int64_t uploads() const { return uploads_; }

 private:
  struct Buffer {
    void* pinned = nullptr;
    size_t bytes = 0;
    Tensor device;
  };
  struct Slot {
    std::vector<Buffer> buffers;
    Backend::EventHandle uploaded = nullptr;
    Backend::EventHandle consumed = nullptr;
    bool upload_recorded = false;
    bool consume_recorded = false;
  };
  // Makes the slot's buffers fit `host` (same count, shapes and dtypes); true when it had to
  // allocate device memory.
  bool fit_buffers(Slot& slot, const std::vector<Tensor>& host);
  void free_pinned(Slot& slot);

  Backend& backend_;
  const LogicalDevice device_;
  std::shared_ptr<Allocator> pinned_;
  std::array<Slot, kSlots> slots_{};
  size_t next_ = 0;
  Slot* unreleased_ = nullptr;
  int64_t uploads_ = 0;
};

}  // namespace gpuaccel::train
