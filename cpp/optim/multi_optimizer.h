// Keras's MultiOptimizer: each variable is updated by one of several inner optimizers (Keras's
// OptimizerMap or a selector decides which, in Python, by the variable's path; this class is
// told the assignment). A step splits the gradients by assignment and runs each inner
// optimizer's own fused step on its share, so every inner keeps its slots, iterations and rate;
// the wrapper counts its own iterations, as Keras's does.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "optim/optimizer.h"

namespace gpuaccel::optim {

class MultiOptimizer : public Optimizer {
 public:
  // ValueError for an empty list, a null inner optimizer or one listed twice.
  MultiOptimizer(std::vector<std::shared_ptr<Optimizer>> inner, std::string name);

  // `params` are updated by inner optimizer `inner_index` from now on (ValueError for an index
  // out of range).
  void assign(const std::vector<Tensor>& params, int64_t inner_index);
  const std::vector<std::shared_ptr<Optimizer>>& inner() const { return inner_; }

  void apply_scaled_gradients(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                              double multiplier) override;
  void apply_gated_gradients(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                             const Tensor& factor, const Tensor& skip) override;
  void count_replayed_steps(int64_t steps) override;
  void exclude_from_weight_decay(const std::vector<Tensor>& params) override;
  // "<name>/iteration", "<name>/learning_rate" (0, as Keras's), then each inner's variables.
  std::vector<std::pair<std::string, Tensor>> variables() const override;
  Tensor slot(const Tensor& param, const std::string& slot_name) const override;
  std::vector<std::string> slot_kinds() const override;  // every inner's, first seen first
  void set_slot(const Tensor& param, const std::string& slot_name, const Tensor& value) override;
  void finalize_variable_values(const std::vector<Tensor>& params) override;
  void swap_variables_with_averages(const std::vector<Tensor>& params) override;
  void copy_variables_into_averages(const std::vector<Tensor>& params) override;
  Tensor average(const Tensor& param) const override;
  std::string capture_blocker() const override;

 protected:
  std::array<const char*, 3> slot_names() const override { return {nullptr, nullptr, nullptr}; }
  void fill_update(OptimizerUpdate& u, int64_t step, float lr) const override;

 private:
  // The inner optimizer of `param`, or nullptr when it was never assigned.
  Optimizer* owner(const Tensor& param) const;
  // Runs `step(inner, grads, params)` on each inner optimizer's share of the call, then counts
  // the wrapper's step. ValueError for a variable never assigned.
  template <typename Step>
  void dispatch(const std::vector<Tensor>& grads, const std::vector<Tensor>& params, Step step);

  std::vector<std::shared_ptr<Optimizer>> inner_;
  std::unordered_map<const TensorImpl*, std::pair<std::weak_ptr<TensorImpl>, size_t>> owner_;
  mutable std::mutex assign_mutex_;
};

}  // namespace gpuaccel::optim
