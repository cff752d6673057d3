// Step-dependent scalars an optimizer keeps in device memory (Adam's and Adamax's bias-corrected
// rate, Nadam's momentum-schedule factors): one step counter t per device, advanced there by ops
// each step, and up to kOptimizerStepFactors float32 factors the subclass recomputes from it in
// place. The fused update reads the factors through OptimizerUpdate::device_step_factor, so no
// host value of the step reaches it and a captured training step replays right
// (docs/gpu_step.md).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "kernels/optimizer_functors.h"
#include "tensor/tensor.h"

namespace gpuaccel::optim {

class DeviceStepFactors {
 public:
  struct Entry {
    LogicalDevice device;
    Tensor t;  // float32 step counter: Keras's iterations + 1 after advance()
    std::array<Tensor, kOptimizerStepFactors> factors;  // float32 scalars, written in place
    Tensor state;  // one float32 scalar a subclass carries from step to step (Nadam's u_product)
  };

  // Advances `device`'s t by 1 - skip (by 1 when skip is undefined: a step a LossScaleOptimizer
  // skips on the device does not count, as Keras's iterations). The first time on a device (or
  // after clear()) t starts from `iterations` and state from `initial_state`. Returns the entry,
  // whose factors (and state) the caller then overwrites in place (copy_into).
  Entry& advance(const LogicalDevice& device, int64_t iterations, const Tensor& skip,
                 double initial_state = 0.0);
  // Points u.device_step_factor at `device`'s factors (nothing when the device has none).
  void attach(OptimizerUpdate& u, const LogicalDevice& device) const;
  // `device`'s entry (advance() must have run for it: else InternalError).
  const Entry& entry(const LogicalDevice& device) const;
  void clear() { entries_.clear(); }

 private:
  std::vector<Entry> entries_;
};

}  // namespace gpuaccel::optim
