// Which gradients travel together in one all-reduce call when the all-reduce overlaps the
// backward pass (distribute/overlapped_all_reduce.h), and when each group may start. The
// backward pass finishes gradients roughly in reverse layer order, so buckets are filled from
// the last weight to the first: the first bucket is complete early and is summed while the
// backward pass computes the rest (PyTorch DDP's scheme).
//
// Buckets start strictly in bucket order, whatever order their gradients arrive in: every rank
// must issue the same collective calls in the same order, and a bucket's contents (hence the
// reduction's order) never depend on timing.
#pragma once

#include <cstddef>
#include <vector>

#include "tensor/tensor.h"

namespace gpuaccel::distribute {

// The default bucket size: 256 KiB. Small enough that the course CNN's 370 KB of float32
// gradients split into two buckets (its dense layers and last convolution, then the first two
// convolutions, whose backward pass is most of the step's), large enough that a call's fixed
// cost (a Gloo ring round over TCP, an NCCL launch: tens of microseconds) stays small against
// moving the bucket. PyTorch's 25 MB default would make one bucket of most models of the course.
constexpr size_t kDefaultBucketBytes = size_t(256) << 10;

class GradientBuckets {
 public:
  // Assigns params (by index) to buckets: from the last param backwards, each bucket takes
  // params until it holds at least `bucket_bytes` (a param larger than that gets a bucket of
  // its own or closes the one it joins). `bucket_bytes` must be > 0.
  GradientBuckets(const std::vector<Tensor>& params, size_t bucket_bytes);

  size_t bucket_count() const { return buckets_.size(); }
  // The params of bucket b, in the order their gradients go to the collective.
  const std::vector<size_t>& bucket(size_t b) const { return buckets_.at(b); }
  size_t bucket_of(size_t param) const { return bucket_of_.at(param); }
  // Whether `params` (shapes and dtypes) are the ones this plan was made for.
  bool matches(const std::vector<Tensor>& params) const;

  // Readiness, per step. reset() starts a step with no gradient ready.
  void reset();
  // Param `param`'s gradient is final. Returns the buckets that may start now, in order: the
  // next buckets not yet started whose gradients are all ready. A param reported twice in one
  // step, or out of range, is an InternalError (a bug in the caller, not in the data).
  std::vector<size_t> mark_ready(size_t param);
  // Marks every param not yet ready (gradients that never arrived: unused weights) and returns
  // the buckets that may start now, as mark_ready does.
  std::vector<size_t> mark_rest_ready();
  // Whether param `param` was marked ready this step.
  bool ready(size_t param) const { return ready_.at(param); }
  bool all_started() const { return next_to_start_ == buckets_.size(); }

 private:
  std::vector<size_t> startable();

  std::vector<std::vector<size_t>> buckets_;
  std::vector<size_t> bucket_of_;
  std::vector<Shape> shapes_;
  std::vector<DType> dtypes_;
  std::vector<bool> ready_;
  std::vector<size_t> pending_;  // per bucket: gradients still missing this step
  size_t next_to_start_ = 0;
};

}  // namespace gpuaccel::distribute
