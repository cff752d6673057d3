// See batch_placement.h.
#include "train/batch_placement.h"

#include <utility>

#include "memory/memory_manager.h"
#include "ops/shape_ops.h"

namespace gpuaccel::train {
namespace {

bool same_device(const LogicalDevice& a, const LogicalDevice& b) {
  return a.type == b.type && a.index == b.index;
}

}  // namespace

std::vector<Tensor> BatchPlacement::place(std::vector<Tensor> batch, const std::vector<Tensor>& params) {
  if (params.empty()) {
    uploader_.reset();
    return batch;
  }
  return place_on(std::move(batch), params[0].device());
}

std::vector<Tensor> BatchPlacement::place_on(std::vector<Tensor> batch, const LogicalDevice& device) {
  bool from_host = device.type != DeviceType::kCPU && upload_on_copy_stream_;
  for (const Tensor& t : batch) from_host = from_host && t.defined() && t.is_cpu();
  if (!from_host) {
    uploader_.reset();
    for (Tensor& t : batch) {
      if (t.defined() && !same_device(t.device(), device)) t = to_device(t, device);
    }
    return batch;
  }
  if (uploader_ && !same_device(uploader_->device(), device)) uploader_.reset();
  if (!uploader_) {
    uploader_ = std::make_unique<BatchUploader>(backend_for(device), device,
                                                MemoryManager::instance().pinned_host_allocator());
  }
  return uploader_->upload(batch);
}

void BatchPlacement::release() {
  if (uploader_) uploader_->release();
}

void BatchPlacement::set_upload_on_copy_stream(bool on) {
  upload_on_copy_stream_ = on;
  if (!on) uploader_.reset();
}

ReleasePlacedBatch::~ReleasePlacedBatch() {
  try {
    now();
  } catch (...) {
    // The step's own error (or the device's) is the one to report.
  }
}

void ReleasePlacedBatch::now() {
  if (placement_ != nullptr) placement_->release();
  placement_ = nullptr;
}

}  // namespace gpuaccel::train
