// Dynamic loss scaling for float16 training (Keras 3's keras.optimizers.LossScaleOptimizer):
// float16 gradients of small losses underflow to zero, so the training loop backpropagates from
// loss * scale and this wrapper unscales before the inner optimizer's update. The unscale costs
// no extra pass: it is the multiplier of the inner optimizer's fused update
// (Optimizer::apply_scaled_gradients -> OptimizerUpdate::grad_scale). The finite check is one
// read of each gradient before the update.
//
// On a GPU the check and the state machine run on the device (no step waits to read a flag):
// the scale, the growth counter, this step's unscale factor and skip flag, and the count of
// skipped steps are float32 scalars there, updated in place by ops; the fused update reads the
// factor and the flag (OptimizerUpdate::device_grad_scale, device_skip), and the training loop
// multiplies the loss by the device scale. Reading scale(), step_counter() or iterations()
// then reads the device. On the CPU the state stays on the host (a read there costs nothing).
//
// State machine, as Keras: on a step whose gradients are all finite, the inner optimizer applies
// grads / scale, then the counter grows by one, or, when it reaches dynamic_growth_steps - 1, is
// reset and the scale doubled. On any inf/NaN the update is skipped (the inner optimizer's
// iterations do not advance; iterations() is the inner optimizer's), the counter is reset and
// the scale halved.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "optim/optimizer.h"

namespace gpuaccel::optim {

// True when no element of `t` (float32, float16 or bfloat16) is inf or NaN: one
// Backend::any_nonfinite pass (ops/finite_check.h) and a read of its flag.
bool all_finite(const Tensor& t);

class LossScaleOptimizer final : public Optimizer {
 public:
  // ValueError when inner is null or initial_scale is not a positive finite number or
  // dynamic_growth_steps < 1. The scale is kept as a float32 value, as Keras's variable.
  explicit LossScaleOptimizer(std::shared_ptr<Optimizer> inner, double initial_scale = 32768.0,
                              int64_t dynamic_growth_steps = 2000, std::string name = "");

  // `grads` are gradients of the scaled loss (times `multiplier`); see the state machine above.
  void apply_scaled_gradients(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                              double multiplier) override;
  // The same state machine for gradients the caller already unscaled (TF2's custom loop with
  // get_unscaled_gradients): finite check, the inner update without a further unscale.
  void apply_unscaled_gradients(const std::vector<Tensor>& grads,
                                const std::vector<Tensor>& params);

  double loss_scale() const override { return scale(); }
  Tensor device_loss_scale(const LogicalDevice& device) override;
  int64_t steps_taken() const override { return inner_->steps_taken(); }
  void restore_steps_taken(int64_t steps) override;
  double scale() const;
  int64_t step_counter() const;
  double initial_scale() const { return initial_scale_; }
  int64_t dynamic_growth_steps() const { return dynamic_growth_steps_; }
  bool dynamic() const { return true; }  // Keras 3 keeps only the dynamic form
  const std::shared_ptr<Optimizer>& inner() const { return inner_; }

  // The rate, iterations, weight-decay exclusions and slots are the inner optimizer's.
  double learning_rate() const override { return inner_->learning_rate(); }
  void set_learning_rate(double learning_rate) override { inner_->set_learning_rate(learning_rate); }
  int64_t iterations() const override;
  void set_iterations(int64_t iterations) override;
  void count_replayed_steps(int64_t steps) override { inner_->count_replayed_steps(steps); }
  void exclude_from_weight_decay(const std::vector<Tensor>& params) override {
    inner_->exclude_from_weight_decay(params);
  }
  Tensor slot(const Tensor& param, const std::string& slot_name) const override {
    return inner_->slot(param, slot_name);
  }
  std::vector<std::string> slot_kinds() const override { return inner_->slot_kinds(); }
  void finalize_variable_values(const std::vector<Tensor>& params) override {
    inner_->finalize_variable_values(params);
  }
  Tensor average(const Tensor& param) const override { return inner_->average(param); }
  void swap_variables_with_averages(const std::vector<Tensor>& params) override {
    inner_->swap_variables_with_averages(params);
  }
  void copy_variables_into_averages(const std::vector<Tensor>& params) override {
    inner_->copy_variables_into_averages(params);
  }
  void set_moving_average(bool use_ema, double ema_momentum,
                          std::optional<int64_t> ema_overwrite_frequency) override {
    inner_->set_moving_average(use_ema, ema_momentum, ema_overwrite_frequency);
  }
  std::string capture_blocker() const override { return inner_->capture_blocker(); }
  void set_slot(const Tensor& param, const std::string& slot_name, const Tensor& value) override {
    inner_->set_slot(param, slot_name, value);
  }
  // Restores the state machine from a training checkpoint. ValueError unless `scale` is a
  // positive finite number and 0 <= step_counter < dynamic_growth_steps.
  void set_dynamic_state(double scale, int64_t step_counter);
  // "<name>/step_counter" (int64), "<name>/dynamic_scale" (float32), then the inner's.
  std::vector<std::pair<std::string, Tensor>> variables() const override;

 protected:
  std::array<const char*, 3> slot_names() const override { return {nullptr, nullptr, nullptr}; }
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  void step(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
            double multiplier, bool unscale);
  // The state machine on the device of `params` (state_mutex_ held).
  void device_step(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                   double multiplier, bool unscale);
  // The device state of `device`, created from the host state on first use (state_mutex_ held).
  struct DeviceState {
    LogicalDevice device;
    Tensor scale, counter, factor, skip, skipped;  // float32 scalars
  };
  DeviceState& device_state(const LogicalDevice& device);
  // Copies the device state back into scale_, counter_ (one read; state_mutex_ held).
  void read_device_state() const;

  std::shared_ptr<Optimizer> inner_;
  double initial_scale_;
  int64_t dynamic_growth_steps_;
  mutable std::mutex state_mutex_;
  mutable double scale_;
  mutable int64_t counter_ = 0;
  std::unique_ptr<DeviceState> device_;  // set once a step ran on a GPU
};

}  // namespace gpuaccel::optim
