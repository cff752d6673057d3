// Batch uploads on the copy stream (see batch_uploader.h).
#include "train/batch_uploader.h"

#include <cstring>

#include "core/device_registry.h"
#include "core/errors.h"
#include "ops/shape_ops.h"

namespace gpuaccel::train {

namespace {

size_t bytes_of(const Tensor& t) { return size_t(t.numel()) * dtype_size(t.dtype()); }

}  // namespace

BatchUploader::BatchUploader(Backend& backend, const LogicalDevice& device,
                             std::shared_ptr<Allocator> pinned)
    : backend_(backend), device_(device), pinned_(std::move(pinned)) {
  if (!pinned_) throw_error(ErrorCode::kInternal, "BatchUploader", "no pinned host allocator");
}

BatchUploader::~BatchUploader() {
  for (Slot& slot : slots_) {
    try {
      if (unreleased_ == &slot) release();
      free_pinned(slot);
      backend_.destroy_event(slot.uploaded);
      backend_.destroy_event(slot.consumed);
    } catch (...) {
      // A failing device at teardown: the process is going down with it.
    }
  }
}

void BatchUploader::free_pinned(Slot& slot) {
  if (slot.upload_recorded) backend_.host_wait_event(slot.uploaded);  // the DMA has read them
  slot.upload_recorded = false;
  for (Buffer& b : slot.buffers) {
    if (b.pinned != nullptr) pinned_->deallocate(b.pinned);
    b.pinned = nullptr;
  }
}

bool BatchUploader::fit_buffers(Slot& slot, const std::vector<Tensor>& host) {
  bool same = slot.buffers.size() == host.size();
  for (size_t i = 0; same && i < host.size(); ++i) {
    const Tensor& d = slot.buffers[i].device;
    same = d.dtype() == host[i].dtype() && d.shape() == host[i].shape();
  }
  if (same) return false;
  free_pinned(slot);
  slot.buffers.assign(host.size(), Buffer{});
  for (size_t i = 0; i < host.size(); ++i) {
    Buffer& b = slot.buffers[i];
    b.bytes = bytes_of(host[i]);
    b.pinned = b.bytes > 0 ? pinned_->allocate(b.bytes) : nullptr;
    b.device = Tensor::empty(host[i].shape(), host[i].dtype(), device_, "BatchUpload");
  }
  return true;
}

std::vector<Tensor> BatchUploader::upload(const std::vector<Tensor>& host) {
  release();  // a caller that skipped it: the previous upload's reader is queued by now
  Slot& slot = slots_[next_];
  next_ = (next_ + 1) % kSlots;
  if (slot.uploaded == nullptr) slot.uploaded = backend_.create_event();
  if (slot.consumed == nullptr) slot.consumed = backend_.create_event();

  // 1. The host refills the pinned buffers once their previous DMA has read them.
  if (fit_buffers(slot, host)) {
    // Fresh pool memory may still be read by compute work queued before it was allocated.
    backend_.record_event(slot.consumed, Backend::Stream::kCompute);
    slot.consume_recorded = true;
  } else if (slot.upload_recorded) {
    backend_.host_wait_event(slot.uploaded);
  }
  std::vector<Tensor> out;
  out.reserve(host.size());
  for (size_t i = 0; i < host.size(); ++i) {
    const Tensor src = host[i].is_contiguous() ? host[i] : contiguous(host[i]);
    if (slot.buffers[i].bytes > 0) std::memcpy(slot.buffers[i].pinned, src.data(), slot.buffers[i].bytes);
    out.push_back(slot.buffers[i].device);
  }
  // 2. The copy stream overwrites the device buffers once the step that read them is done.
  if (slot.consume_recorded) backend_.stream_wait_event(Backend::Stream::kCopy, slot.consumed);
  for (Buffer& b : slot.buffers) {
    if (b.bytes == 0) continue;
    DeviceRegistry::instance().log_execution("Copy", device_);
    backend_.copy_from_host_on(Backend::Stream::kCopy, b.pinned, b.device.view());
    b.device.bump_version();  // the slot's device tensor is rewritten every other batch
  }
  backend_.record_event(slot.uploaded, Backend::Stream::kCopy);
  slot.upload_recorded = true;
  // 3. Whatever the compute stream runs next sees the whole batch.
  backend_.stream_wait_event(Backend::Stream::kCompute, slot.uploaded);
  unreleased_ = &slot;
  ++uploads_;
  return out;
}

void BatchUploader::release() {
  if (unreleased_ == nullptr) return;
  Slot& slot = *unreleased_;
  unreleased_ = nullptr;
  backend_.record_event(slot.consumed, Backend::Stream::kCompute);
  slot.consume_recorded = true;
}

}  // namespace gpuaccel::train
