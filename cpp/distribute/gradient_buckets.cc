// See gradient_buckets.h.
#include "distribute/gradient_buckets.h"

#include <string>

#include "core/errors.h"

namespace gpuaccel::distribute {

GradientBuckets::GradientBuckets(const std::vector<Tensor>& params, size_t bucket_bytes) {
  if (bucket_bytes == 0) throw_value_error("gradient_buckets", "bucket_bytes must be > 0, got 0");
  bucket_of_.resize(params.size());
  size_t filled = 0;
  for (size_t i = params.size(); i-- > 0;) {
    if (buckets_.empty() || filled >= bucket_bytes) {
      buckets_.emplace_back();
      filled = 0;
    }
    buckets_.back().push_back(i);
    bucket_of_[i] = buckets_.size() - 1;
    filled += size_t(params[i].numel()) * dtype_size(params[i].dtype());
  }
  for (const Tensor& p : params) {
    shapes_.push_back(p.shape());
    dtypes_.push_back(p.dtype());
  }
  reset();
}

bool GradientBuckets::matches(const std::vector<Tensor>& params) const {
  if (params.size() != shapes_.size()) return false;
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i].shape() != shapes_[i] || params[i].dtype() != dtypes_[i]) return false;
  }
  return true;
}

void GradientBuckets::reset() {
  ready_.assign(bucket_of_.size(), false);
  pending_.clear();
  for (const auto& b : buckets_) pending_.push_back(b.size());
  next_to_start_ = 0;
}

std::vector<size_t> GradientBuckets::mark_ready(size_t param) {
  if (param >= ready_.size()) {
    throw_error(ErrorCode::kInternal, "gradient_buckets",
                "gradient " + std::to_string(param) + " reported; there are " +
                    std::to_string(ready_.size()) + " weights");
  }
  if (ready_[param]) {
    throw_error(ErrorCode::kInternal, "gradient_buckets",
                "gradient " + std::to_string(param) + " reported twice in one step");
  }
  ready_[param] = true;
  --pending_[bucket_of_[param]];
  return startable();
}

std::vector<size_t> GradientBuckets::mark_rest_ready() {
  for (size_t i = 0; i < ready_.size(); ++i) {
    if (!ready_[i]) {
      ready_[i] = true;
      --pending_[bucket_of_[i]];
    }
  }
  return startable();
}

std::vector<size_t> GradientBuckets::startable() {
  std::vector<size_t> out;
  while (next_to_start_ < buckets_.size() && pending_[next_to_start_] == 0) out.push_back(next_to_start_++);
  return out;
}

}  // namespace gpuaccel::distribute
