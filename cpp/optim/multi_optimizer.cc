// MultiOptimizer (optim/multi_optimizer.h): dispatch of a step, and of everything per variable
// (slots, averages), to the inner optimizer each variable was assigned to.
#include "optim/multi_optimizer.h"

#include <algorithm>

#include "core/errors.h"

namespace gpuaccel::optim {

MultiOptimizer::MultiOptimizer(std::vector<std::shared_ptr<Optimizer>> inner, std::string name)
    : Optimizer("MultiOptimizer", 0.0, [&] {
        OptimizerOptions o;
        o.name = std::move(name);
        return o;
      }()),
      inner_(std::move(inner)) {
  if (inner_.empty()) throw_value_error("MultiOptimizer", "needs at least one inner optimizer");
  for (size_t i = 0; i < inner_.size(); ++i) {
    if (!inner_[i]) throw_value_error("MultiOptimizer", "inner optimizer " + std::to_string(i) + " is None");
    for (size_t j = 0; j < i; ++j) {
      if (inner_[j] == inner_[i]) {
        throw_value_error("MultiOptimizer", "inner optimizer " + std::to_string(i) +
                                                " is listed twice; list each optimizer once");
      }
    }
  }
}

void MultiOptimizer::assign(const std::vector<Tensor>& params, int64_t inner_index) {
  if (inner_index < 0 || inner_index >= static_cast<int64_t>(inner_.size())) {
    throw_value_error("MultiOptimizer", "inner optimizer index " + std::to_string(inner_index) +
                                            " is out of range [0, " +
                                            std::to_string(inner_.size()) + ")");
  }
  std::lock_guard<std::mutex> lock(assign_mutex_);
  for (const Tensor& p : params) {
    if (!p.defined()) throw_value_error("MultiOptimizer", "assign got None in its variables");
    owner_[p.impl()] = {p.impl_ptr(), static_cast<size_t>(inner_index)};
  }
}

Optimizer* MultiOptimizer::owner(const Tensor& param) const {
  std::lock_guard<std::mutex> lock(assign_mutex_);
  if (!param.defined()) return nullptr;
  const auto it = owner_.find(param.impl());
  if (it == owner_.end() || it->second.first.lock() != param.impl_ptr()) return nullptr;
  return inner_[it->second.second].get();
}

template <typename Step>
void MultiOptimizer::dispatch(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                              Step step) {
  if (grads.size() != params.size()) {
    throw_value_error("MultiOptimizer", "apply_gradients got " + std::to_string(grads.size()) +
                                            " gradients for " + std::to_string(params.size()) +
                                            " variables; pass one gradient (or None) per variable");
  }
  if (grads.empty()) return;
  std::vector<std::vector<Tensor>> inner_grads(inner_.size()), inner_params(inner_.size());
  for (size_t i = 0; i < params.size(); ++i) {
    Optimizer* o = owner(params[i]);
    if (o == nullptr) {
      throw_value_error("MultiOptimizer",
                        "variable " + std::to_string(i) + " was not assigned to an inner "
                        "optimizer; build the MultiOptimizer on every variable it updates");
    }
    const size_t k = static_cast<size_t>(
        std::find_if(inner_.begin(), inner_.end(), [&](const auto& p) { return p.get() == o; }) -
        inner_.begin());
    inner_grads[k].push_back(grads[i]);
    inner_params[k].push_back(params[i]);
  }
  for (size_t k = 0; k < inner_.size(); ++k) {
    if (!inner_params[k].empty()) step(*inner_[k], inner_grads[k], inner_params[k]);
  }
  set_iterations(Optimizer::iterations() + 1);
}

void MultiOptimizer::apply_scaled_gradients(const std::vector<Tensor>& grads,
                                            const std::vector<Tensor>& params,
                                            double multiplier) {
  dispatch(grads, params, [&](Optimizer& o, const auto& g, const auto& p) {
    o.apply_scaled_gradients(g, p, multiplier);
  });
}

void MultiOptimizer::apply_gated_gradients(const std::vector<Tensor>& grads,
                                           const std::vector<Tensor>& params,
                                           const Tensor& factor, const Tensor& skip) {
  dispatch(grads, params, [&](Optimizer& o, const auto& g, const auto& p) {
    o.apply_gated_gradients(g, p, factor, skip);
  });
}

void MultiOptimizer::count_replayed_steps(int64_t steps) {
  Optimizer::count_replayed_steps(steps);
  for (const auto& o : inner_) o->count_replayed_steps(steps);
}

void MultiOptimizer::exclude_from_weight_decay(const std::vector<Tensor>& params) {
  for (const auto& o : inner_) o->exclude_from_weight_decay(params);
}

std::vector<std::pair<std::string, Tensor>> MultiOptimizer::variables() const {
  std::vector<std::pair<std::string, Tensor>> out = Optimizer::variables();
  for (const auto& o : inner_) {
    for (auto& v : o->variables()) out.push_back(std::move(v));
  }
  return out;
}

Tensor MultiOptimizer::slot(const Tensor& param, const std::string& slot_name) const {
  const Optimizer* o = owner(param);
  if (o == nullptr) return Tensor();
  const std::vector<std::string> kinds = o->slot_kinds();
  if (std::find(kinds.begin(), kinds.end(), slot_name) == kinds.end()) return Tensor();
  return o->slot(param, slot_name);
}

std::vector<std::string> MultiOptimizer::slot_kinds() const {
  std::vector<std::string> out;
  for (const auto& o : inner_) {
    for (const std::string& k : o->slot_kinds()) {
      if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
    }
  }
  return out;
}

void MultiOptimizer::set_slot(const Tensor& param, const std::string& slot_name,
                              const Tensor& value) {
  Optimizer* o = owner(param);
  if (o == nullptr) {
    throw_value_error("MultiOptimizer", "set_slot: the variable was not assigned to an inner "
                                        "optimizer");
  }
  o->set_slot(param, slot_name, value);
}

void MultiOptimizer::finalize_variable_values(const std::vector<Tensor>& params) {
  for (const auto& o : inner_) o->finalize_variable_values(params);  // each: its averages only
}

void MultiOptimizer::swap_variables_with_averages(const std::vector<Tensor>& params) {
  for (const auto& o : inner_) o->swap_variables_with_averages(params);
}

void MultiOptimizer::copy_variables_into_averages(const std::vector<Tensor>& params) {
  for (const auto& o : inner_) o->copy_variables_into_averages(params);
}

Tensor MultiOptimizer::average(const Tensor& param) const {
  const Optimizer* o = owner(param);
  return o == nullptr ? Tensor() : o->average(param);
}

std::string MultiOptimizer::capture_blocker() const {
  // A captured step's signature holds one learning rate; the inner optimizers each have one.
  return "MultiOptimizer's inner optimizers each have a learning rate a captured step would "
         "freeze";
}

void MultiOptimizer::fill_update(OptimizerUpdate& u, int64_t, float) const {
  (void)u;
  throw_error(ErrorCode::kInternal, "MultiOptimizer", "the inner optimizers update the variables");
}

}  // namespace gpuaccel::optim
