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
  void apply_gated_gradients(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
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

 protected:
  Optimizer(const char* type, double learning_rate, OptimizerOptions options);

  // Keras's names of the (up to 3) slots this configuration uses; nullptr = slot unused.
  virtual std::array<const char*, 3> slot_names() const = 0;
  // The value every element of a new slot k starts at (Keras's initializer for it).
  virtual double slot_initial_value(int k) const { (void)k; return 0.0; }
  // Which slots Keras creates with one add_optimizer_variables call: those sharing a group
  // number are listed interleaved per variable in variables() (variable 0's momentum, its
  // velocity, variable 1's momentum, ...), groups in ascending order. Default: a call per slot.
  virtual std::array<int, 3> slot_groups() const { return {0, 1, 2}; }
  // Sets kind, flags and the optimizer's own hyperparameters of step `step` (1-based) with the
  // float32 learning rate `lr` (u.learning_rate is already set).
  virtual void fill_update(OptimizerUpdate& u, int64_t step, float lr) const = 0;

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
