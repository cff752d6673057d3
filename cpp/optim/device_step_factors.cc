// DeviceStepFactors (optim/device_step_factors.h): the per-device step counter and factors.
#include "optim/device_step_factors.h"

#include <algorithm>

#include "core/errors.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/shape_ops.h"
#include "optim/optimizer.h"

namespace gpuaccel::optim {

DeviceStepFactors::Entry& DeviceStepFactors::advance(const LogicalDevice& device,
                                                     int64_t iterations, const Tensor& skip,
                                                     double initial_state) {
  auto it = std::find_if(entries_.begin(), entries_.end(),
                         [&](const Entry& e) { return same_device(e.device, device); });
  if (it == entries_.end()) {
    // From the host's count once (a new device, or after clear()); in place afterwards.
    Entry e;
    e.device = device;
    e.t = full({}, double(iterations), DType::kFloat32, device);
    for (Tensor& f : e.factors) f = zeros({}, DType::kFloat32, device);
    e.state = full({}, initial_state, DType::kFloat32, device);
    entries_.push_back(std::move(e));
    it = entries_.end() - 1;
  }
  const Tensor one = scalar_like(1.0, it->t);
  copy_into(add(it->t, skip.defined() ? sub(one, skip) : one), it->t);
  return *it;
}

const DeviceStepFactors::Entry& DeviceStepFactors::entry(const LogicalDevice& device) const {
  for (const Entry& e : entries_) {
    if (same_device(e.device, device)) return e;
  }
  throw_error(ErrorCode::kInternal, "optimizer",
              "no step factors on " + device.name() + " yet (advance them first)");
}

void DeviceStepFactors::attach(OptimizerUpdate& u, const LogicalDevice& device) const {
  for (const Entry& e : entries_) {
    if (!same_device(e.device, device)) continue;
    for (int k = 0; k < kOptimizerStepFactors; ++k) {
      u.device_step_factor[k] = static_cast<const float*>(e.factors[k].data());
    }
    return;
  }
}

}  // namespace gpuaccel::optim
