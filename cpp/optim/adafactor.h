// Keras's Adafactor: the second moment of a rank >= 2 variable is factored into running means
// of g^2 over its last axis (r) and its second-to-last axis (c), and steps are relative to the
// variable's RMS and clipped by the update's RMS. Those means and RMS values are reductions one
// element pass cannot compute, so Adafactor is a two-pass optimizer (optim/optimizer.h).
#pragma once

#include "optim/optimizer.h"

namespace gpuaccel::optim {

struct AdafactorSettings {
  double beta_2_decay = -0.8;
  double epsilon_1 = 1e-30;   // added to g^2
  double epsilon_2 = 1e-3;    // floor of the variable's RMS in the relative step
  double clip_threshold = 1.0;
  bool relative_step = true;  // kept for get_config: Keras's rate is min(lr, 1/sqrt(t)) anyway
};

class Adafactor : public Optimizer {
 public:
  explicit Adafactor(double learning_rate = 0.001, AdafactorSettings settings = {},
                     OptimizerOptions options = {});

  const AdafactorSettings& settings() const { return settings_; }

 protected:
  // "r", "c" (scalar zeros, as Keras's placeholders, for rank < 2) and "velocity", listed
  // per variable together as Keras creates them.
  std::array<const char*, 3> slot_names() const override;
  std::array<int, 3> slot_groups() const override { return {0, 0, 0}; }
  Shape slot_shape(int k, const Shape& param) const override;
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;
  void fill_variable_update(OptimizerUpdate& u, const Tensor& param) const override;
  void advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                              const Tensor& skip) override;
  bool two_pass() const override { return true; }
  void reduce_between_passes(VariableReduction& r) const override;
  bool honours_device_skip() const override { return false; }

 private:
  AdafactorSettings settings_;
};

}  // namespace gpuaccel::optim
