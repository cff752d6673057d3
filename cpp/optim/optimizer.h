// The optimizer base class with Keras 3's semantics: apply_gradients updates float32 master
// variables in place with one fused kernel per variable (kernels/optimizer_functors.h through
// Backend::optimizer_update), keeps the slots (momentum, velocity, ...) per variable, created
// lazily on the variable's device and zero-initialized, and counts iterations. The subclasses
// (sgd.h, adam.h, rmsprop.h) only validate their hyperparameters and fill the per-step update
// parameters; gradient clipping and decoupled weight decay are shared here, as in Keras's base
// optimizer. Thread-safe: the training loop may step while Python reads or sets the rate.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kernels/optimizer_functors.h"
#include "optim/device_step_factors.h"
#include "profiler/profiler.h"
#include "tensor/tensor.h"

namespace gpuaccel::optim {

// Whether two logical devices are the same one (a variable's and its gradient's, say).
bool same_device(const LogicalDevice& a, const LogicalDevice& b);

// Keras's keyword arguments common to every optimizer. At most one of clipnorm, clipvalue and
// global_clipnorm may be set.
struct OptimizerOptions {
  std::optional<double> weight_decay;     // decoupled: var -= var * weight_decay * lr, >= 0
  std::optional<double> clipnorm;         // each gradient's L2 norm clipped to this, > 0
  std::optional<double> clipvalue;        // each gradient element clipped to [-v, v], > 0
  std::optional<double> global_clipnorm;  // all gradients scaled so their joint norm <= this
  // Keras's use_ema: after each step, average = m * average + (1 - m) * variable for every
  // variable of the call, m = 0 on the optimizer's first step and ema_momentum after; with
  // ema_overwrite_frequency N, the variables are overwritten by their averages after every
  // step whose count is a multiple of N (finalize_variable_values does it on demand).
  bool use_ema = false;
  double ema_momentum = 0.99;                     // in [0, 1]
  std::optional<int64_t> ema_overwrite_frequency;  // >= 1
  std::string name;                       // empty: the snake_case class name ("adam")
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One optimizer step: params[i] is updated in place with grads[i] (no autograd recording).
  // An undefined gradient skips its variable (Keras's None); every gradient undefined is a
  // ValueError, as in Keras; an empty list is a no-op. Otherwise `iterations` grows by one.
  // Validation (before anything is modified): equal counts, float32 params, floating grads of
  // the param's shape on the param's device, no variable twice.
  void apply_gradients(const std::vector<Tensor>& grads, const std::vector<Tensor>& params) {
    profiler::TraceScope scope(profiler::EventKind::kOptimizer, "optimizer_update");
    apply_scaled_gradients(grads, params, 1.0);
  }
  // The same step with every gradient multiplied by `multiplier` as the fused update reads it
  // (before clipping, which then sees the multiplied gradient): how a LossScaleOptimizer unscales
  // without a separate pass. apply_gradients is this with multiplier 1.
  virtual void apply_scaled_gradients(const std::vector<Tensor>& grads,
                                      const std::vector<Tensor>& params, double multiplier);

  // The step of a LossScaleOptimizer whose state lives on the variables' device
  // (loss_scale_optimizer.h): every gradient is multiplied by the float32 scalar `factor`, and
  // nothing changes where the float32 scalar `skip` is nonzero; both live on the variables'
  // device and the fused update reads them there, so the step waits for nothing. The host's
  // iterations count the step either way; device-resident counters (Adam's t) advance by
  // 1 - skip.
  virtual void apply_gated_gradients(const std::vector<Tensor>& grads,
                                     const std::vector<Tensor>& params,
                                     const Tensor& factor, const Tensor& skip);
  // The factor the training loop multiplies the loss by before backpropagating: 1 for plain
  // optimizers, the current dynamic scale for a LossScaleOptimizer (loss_scale_optimizer.h).
  virtual double loss_scale() const { return 1.0; }
  // The same factor as a float32 scalar on `device` when it lives there (a LossScaleOptimizer
  // on a GPU), so the training loop scales the loss without reading it; else undefined.
  virtual Tensor device_loss_scale(const LogicalDevice& device) { (void)device; return Tensor(); }
  // The step count the training loop keeps in step with a replayed graph (train/trainer.cc):
  // every step taken, read without touching the device. iterations() is Keras's count, which
  // leaves out the steps a LossScaleOptimizer skipped on the device (a device read).
  virtual int64_t steps_taken() const { return iterations(); }
  // Restores steps_taken() after a failed capture attempt (its device work never ran).
  virtual void restore_steps_taken(int64_t steps) { set_iterations(steps); }

  virtual double learning_rate() const;
  virtual void set_learning_rate(double learning_rate);  // ValueError unless finite and >= 0
  virtual int64_t iterations() const;
  virtual void set_iterations(int64_t iterations);       // ValueError when negative
  // Adds `steps` to the host's iteration count only: a training step replayed from a captured
  // graph advanced the device-resident counters itself (train/trainer.cc).
  virtual void count_replayed_steps(int64_t steps);
  const char* name() const { return name_.c_str(); }
  // Keras's class name: "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", ...
  const char* type() const { return type_; }
  const OptimizerOptions& options() const { return options_; }

  // Variables excluded from weight decay (Keras's exclude_from_weight_decay(var_list=...)).
  virtual void exclude_from_weight_decay(const std::vector<Tensor>& params);

  // Keras's optimizer.variables, for inspection: "<name>/iteration" (int64 scalar, a copy),
  // "<name>/learning_rate" (float32 scalar, a copy), then each variable's slots in the order
  // the variables were first seen ("<name>/variable_<k>_<slot>", the live slot tensors).
  virtual std::vector<std::pair<std::string, Tensor>> variables() const;
  // The slots of one variable by Keras's slot name ("momentum", "velocity", ...), or an
  // undefined tensor when the variable has not been updated yet or the slot is unused.
  virtual Tensor slot(const Tensor& param, const std::string& slot_name) const;
  // Keras's names of the slots this configuration keeps per variable, in slot order: what a
  // training checkpoint saves with slot() and restores with set_slot().
  virtual std::vector<std::string> slot_kinds() const;
  // Restores a saved slot: creates the variable's zero slots if it has none yet (as its first
  // update would), then copies `value` (float32, the variable's shape) into slot `slot_name`.
  // ValueError for a slot this configuration does not use, a wrong dtype or shape.
  virtual void set_slot(const Tensor& param, const std::string& slot_name, const Tensor& value);

  // Sets use_ema, ema_momentum and ema_overwrite_frequency (OptimizerOptions), with Keras's
  // ValueErrors when use_ema is on and the others are out of range.
  virtual void set_moving_average(bool use_ema, double ema_momentum,
                                  std::optional<int64_t> ema_overwrite_frequency);
  // Keras's finalize_variable_values: with use_ema, copies each variable's moving average into
  // it (variables never updated keep their values); without, nothing.
  virtual void finalize_variable_values(const std::vector<Tensor>& params);
  // keras.callbacks.SwapEMAWeights: exchanges each variable's value with its moving average
  // (variables without one are left alone); copy_variables_into_averages sets the averages to
  // the variables' values (the callback's last-epoch finalization).
  virtual void swap_variables_with_averages(const std::vector<Tensor>& params);
  virtual void copy_variables_into_averages(const std::vector<Tensor>& params);
  // The moving average of a variable (use_ema), or undefined before its first update.
  virtual Tensor average(const Tensor& param) const;
  // Why a training step with this optimizer must not be captured into a device graph (a
  // decision made on the host each step), or empty (train/step_capture_blockers.h).
  virtual std::string capture_blocker() const;

 protected:
  Optimizer(const char* type, double learning_rate, OptimizerOptions options);

  // Keras's names of the (up to 3) slots this configuration uses; nullptr = slot unused.
  virtual std::array<const char*, 3> slot_names() const = 0;
  // The value every element of a new slot k starts at (Keras's initializer for it).
  virtual double slot_initial_value(int k) const { (void)k; return 0.0; }
  // Whether slot k starts as a copy of the variable instead (ScheduleFreeAdamW's momentum).
  virtual bool slot_copies_variable(int k) const { (void)k; return false; }
  // The shape of slot k for a variable of shape `param` (default: the variable's). Only slots
  // of the variable's shape reach the element pass; others (Adafactor's row and column
  // moments) are the optimizer's to update in reduce_between_passes.
  virtual Shape slot_shape(int k, const Shape& param) const { (void)k; return param; }

  // Two-pass optimizers (Lamb, Adafactor) need per-variable reductions (a norm, row/column
  // means) that one element pass cannot compute. Their step per variable is: the element pass
  // with OptimizerPass::kSlots (weight decay, element-wise slot updates), then
  // reduce_between_passes (ops on the device, no host read: reductions into the variable's
  // `factors`, and any slot the element pass cannot update), then the element pass with
  // OptimizerPass::kParameter, which reads the factors through
  // OptimizerUpdate::device_variable_factor.
  virtual bool two_pass() const { return false; }
  struct VariableReduction {
    const Tensor& param;     // after the kSlots pass (weight decay applied)
    const Tensor& gradient;  // as the update sees it: scaled and clipped, float32
    std::array<Tensor, 3>& slots;
    std::array<Tensor, kOptimizerVariableFactors>& factors;  // float32 scalars, write in place
    const Tensor& skip;  // apply_gated_gradients's skip flag, or undefined
  };
  virtual void reduce_between_passes(VariableReduction& r) const { (void)r; }
  // False when reduce_between_passes writes a slot it cannot leave unchanged on a step a
  // LossScaleOptimizer skips on the device (Adafactor's factored moments): such a step is
  // refused with a typed error rather than corrupting the slots.
  virtual bool honours_device_skip() const { return true; }
  // The step factors of `device` after this step's advance_device_scalars (two-pass
  // optimizers read them in reduce_between_passes).
  const DeviceStepFactors::Entry& step_factors_on(const LogicalDevice& device) const {
    return step_factors_.entry(device);
  }
  // Which slots Keras creates with one add_optimizer_variables call: those sharing a group
  // number are listed interleaved per variable in variables() (variable 0's momentum, its
  // velocity, variable 1's momentum, ...), groups in ascending order. Default: a call per slot.
  virtual std::array<int, 3> slot_groups() const { return {0, 1, 2}; }
  // Sets kind, flags and the optimizer's own hyperparameters of step `step` (1-based) with the
  // float32 learning rate `lr` (u.learning_rate is already set).
  virtual void fill_update(OptimizerUpdate& u, int64_t step, float lr) const = 0;
  // What of the update depends on the variable itself (Adafactor factors rank >= 2 ones).
  virtual void fill_variable_update(OptimizerUpdate& u, const Tensor& param) const {
    (void)u, (void)param;
  }

  // Per-step values a subclass keeps in device memory (Adam's step counter and alpha), so the
  // fused update reads them there and a captured step replays right. advance_device_scalars is
  // called once per step for each device holding an updated variable, before the updates, with
  // the optimizer's lock held and `iterations` the count before this step; it must use ops that
  // update its tensors in place. attach_device_scalars points an update at them.
  // reset_device_scalars drops them (set_iterations: they are rebuilt from the new count).
  // `skip`, when defined, is apply_gated_gradients's: the counters advance by 1 - skip.
  // The defaults keep the factors in step_factors_ (optim/device_step_factors.h): a subclass
  // advances it and writes its factors in advance_device_scalars.
  virtual void advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                                      const Tensor& skip) {
    (void)device, (void)iterations, (void)lr, (void)skip;
  }
  virtual void attach_device_scalars(OptimizerUpdate& u, const LogicalDevice& device) const {
    step_factors_.attach(u, device);
  }
  virtual void reset_device_scalars() { step_factors_.clear(); }
  DeviceStepFactors step_factors_;

  // ValueError "`<arg>` must be ... Received: <arg>=<value>" helpers for the constructors.
  void require_range(const char* arg, double value, double low, double high,
                     bool high_open = false) const;
  void require_non_negative(const char* arg, double value) const;

 private:
  struct State {
    std::weak_ptr<TensorImpl> param;  // to notice a freed variable whose address was reused
    std::array<Tensor, 3> slots;
    std::array<Tensor, kOptimizerVariableFactors> factors;  // two-pass optimizers' reductions
    Tensor average;     // use_ema: the moving average of the variable
    Tensor grad_scale;  // clipnorm / global_clipnorm: this step's gradient multiplier, on the
                        // variable's device (created once, written in place each step)
    int64_t order = 0;
  };
  // apply_gated_gradients's device-resident multiplier and skip flag.
  struct Gate {
    Tensor factor;
    Tensor skip;
  };
  void apply_step(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                  double multiplier, const Gate* gate);
  State& state_for(const Tensor& param);
  // The two passes and the reduction of a two-pass optimizer on one variable.
  void run_two_passes(OptimizerUpdate u, const Tensor& param, const Tensor& grad, State& s,
                      const Gate* gate, const TensorView (&slot_views)[3]);
  // use_ema: the moving averages after a step, and the overwrite every N steps.
  void update_moving_averages(const std::vector<Tensor>& params, const Gate* gate);
  // The average of `param` (mutex_ held), or nullptr when it has none.
  const Tensor* average_of(const Tensor& param) const;
  DeviceStepFactors ema_steps_;  // use_ema: the device's step count, for m = 0 on step 1
  void prune_freed_variables();  // with mutex_ held

  const char* type_;
  std::string name_;
  OptimizerOptions options_;
  double learning_rate_;
  int64_t iterations_ = 0;
  int64_t next_order_ = 0;
  std::unordered_map<const TensorImpl*, State> states_;
  std::unordered_map<const TensorImpl*, std::weak_ptr<TensorImpl>> no_weight_decay_;
  mutable std::mutex mutex_;
};

}  // namespace gpuaccel::optim
