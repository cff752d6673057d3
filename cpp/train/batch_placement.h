// Where a step's input batch goes before the step reads it: host batches of a model whose
// weights live on a GPU go through a BatchUploader (train/batch_uploader.h: the copy stream,
// pinned double-buffered slots, event-ordered), anything else is moved (or left) as the ops
// would. One object per stepping loop, shared by the Trainer (fit, evaluate), the Predictor
// (predict) and a GPU-scoped prefetched Dataset iterated outside fit (bindings/data.cc), so
// each overlaps batch i+1's copy with step i the same way.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "train/batch_uploader.h"

namespace gpuaccel::train {

class BatchPlacement {
 public:
  // The batch's tensors on the device of `params` (the model's trainable weights; with none,
  // the batch stays put). Host batches bound for a GPU are uploaded on its copy stream when
  // upload_on_copy_stream() is on: the returned tensors are then the uploader's buffers, valid
  // for work queued on the compute stream before release(), and overwritten two uploads later.
  std::vector<Tensor> place(std::vector<Tensor> batch, const std::vector<Tensor>& params);
  // The same onto `device` (a prefetched Dataset iterated under a GPU's scope).
  std::vector<Tensor> place_on(std::vector<Tensor> batch, const LogicalDevice& device);
  // The work reading the last placed batch has been queued (a no-op when it was not uploaded).
  void release();

  // On by default; off uploads on the compute stream, as before the copy stream existed (to
  // compare the two).
  void set_upload_on_copy_stream(bool on);
  bool upload_on_copy_stream() const { return upload_on_copy_stream_; }
  int64_t copy_stream_uploads() const { return uploader_ ? uploader_->uploads() : 0; }

 private:
  bool upload_on_copy_stream_ = true;
  std::unique_ptr<BatchUploader> uploader_;
};

// Calls release() when a step returns or throws, or earlier through now().
class ReleasePlacedBatch {
 public:
  explicit ReleasePlacedBatch(BatchPlacement& placement) : placement_(&placement) {}
  ~ReleasePlacedBatch();
  ReleasePlacedBatch(const ReleasePlacedBatch&) = delete;
  ReleasePlacedBatch& operator=(const ReleasePlacedBatch&) = delete;
  void now();

 private:
  BatchPlacement* placement_;
};

}  // namespace gpuaccel::train
