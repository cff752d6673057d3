// DeferredChecks (deferred_checks.h): running min/max of checked indices kept on their device.
#include "ops/deferred_checks.h"

#include <algorithm>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

namespace {
thread_local DeferredChecks* t_active = nullptr;
}  // namespace

void throw_index_range_error(const std::string& op, const std::string& what, int64_t limit,
                             int64_t min_value, int64_t max_value) {
  throw_error(ErrorCode::kInvalidArgument, op,
              what + " must be in [0, " + std::to_string(limit) + "), got values from " +
                  std::to_string(min_value) + " to " + std::to_string(max_value));
}

DeferredChecks::Scope::Scope(DeferredChecks& checks) : previous_(t_active) { t_active = &checks; }
DeferredChecks::Scope::~Scope() { t_active = previous_; }

DeferredChecks* DeferredChecks::active() { return t_active; }

void DeferredChecks::record_index_range(const std::string& op, const std::string& what,
                                        int64_t limit, const Tensor& min_value,
                                        const Tensor& max_value) {
  GradModeGuard no_grad(false);
  for (IndexRange& c : checks_) {
    if (c.op == op && c.what == what && c.limit == limit &&
        c.min_value.device().type == min_value.device().type &&
        c.min_value.device().index == min_value.device().index) {
      // In place: a captured step keeps folding into the same storage when replayed.
      copy_into(binary(BinaryOp::kMinimum, c.min_value, min_value), c.min_value);
      copy_into(binary(BinaryOp::kMaximum, c.max_value, max_value), c.max_value);
      return;
    }
  }
  checks_.push_back({op, what, limit, min_value, max_value});
}

std::vector<Tensor> DeferredChecks::scalars() const {
  std::vector<Tensor> out;
  out.reserve(scalar_count());
  for (const IndexRange& c : checks_) {
    out.push_back(c.min_value);
    out.push_back(c.max_value);
  }
  return out;
}

void DeferredChecks::settle(const std::vector<double>& values) {
  if (values.size() != scalar_count()) {
    throw_error(ErrorCode::kInternal, "DeferredChecks", "settle() got the wrong number of values");
  }
  GradModeGuard no_grad(false);
  const IndexRange* violated = nullptr;
  int64_t violated_lo = 0, violated_hi = 0;
  for (size_t i = 0; i < checks_.size(); ++i) {
    IndexRange& c = checks_[i];
    const int64_t lo = static_cast<int64_t>(values[2 * i]);
    const int64_t hi = static_cast<int64_t>(values[2 * i + 1]);
    if (!violated && (lo < 0 || hi >= c.limit)) {
      violated = &c;
      violated_lo = lo;
      violated_hi = hi;
    }
    // Restart in place from a valid range ([limit - 1, 0] folds to the next batches' own
    // extremes wherever they matter for the check), keeping the storage.
    copy_into(scalar_like(double(std::max<int64_t>(c.limit - 1, 0)), c.min_value), c.min_value);
    copy_into(scalar_like(0.0, c.max_value), c.max_value);
  }
  if (violated) throw_index_range_error(violated->op, violated->what, violated->limit, violated_lo, violated_hi);
}

}  // namespace gpuaccel
