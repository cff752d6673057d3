// The shared part of every optimizer (optim/optimizer.h): argument validation, gradient
// clipping factors (Keras's clipnorm / global_clipnorm need a norm: computed with op frontends
// and left on the device for the fused update to read), lazy slot creation, and one fused
// backend call per variable.
#include "optim/optimizer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <regex>
#include <unordered_set>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/op_utils.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "optim/number_text.h"

namespace gpuaccel::optim {

namespace {

std::string snake_case(const char* type) {
  // Keras's to_snake_case of the class name: "SGD" -> "sgd", "AdamW" -> "adam_w",
  // "RMSprop" -> "rm_sprop".
  std::string s = std::regex_replace(type, std::regex("(.)([A-Z][a-z]+)"), "$1_$2");
  s = std::regex_replace(s, std::regex("([a-z])([A-Z])"), "$1_$2");
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The float32 sum of squares of a gradient, left on its device.
Tensor squared_norm(const Tensor& g) {
  const Tensor g32 = g.dtype() == DType::kFloat32 ? g : cast(g, DType::kFloat32);
  return reduce_sum(mul(g32, g32), {}, false);
}

}  // namespace

bool same_device(const LogicalDevice& a, const LogicalDevice& b) {
  return a.type == b.type && a.index == b.index;
}

Optimizer::Optimizer(const char* type, double learning_rate, OptimizerOptions options)
    : type_(type), options_(std::move(options)), learning_rate_(learning_rate) {
  name_ = options_.name.empty() ? snake_case(type) : options_.name;
  require_non_negative("learning_rate", learning_rate);
  if (options_.weight_decay) require_non_negative("weight_decay", *options_.weight_decay);
  const int clip_args = int(options_.clipnorm.has_value()) + int(options_.clipvalue.has_value()) +
                        int(options_.global_clipnorm.has_value());
  if (clip_args > 1) {
    auto text = [](const std::optional<double>& v) { return v ? python_float(*v) : "None"; };
    throw_value_error("", "Only one of `clipnorm`, `clipvalue` and `global_clipnorm` can be "
                             "set. Received: clipnorm=" + text(options_.clipnorm) +
                                 ", clipvalue=" + text(options_.clipvalue) +
                                 ", global_clipnorm=" + text(options_.global_clipnorm));
  }
  set_moving_average(options_.use_ema, options_.ema_momentum, options_.ema_overwrite_frequency);
  for (auto [arg, value] : {std::pair{"clipnorm", options_.clipnorm},
                            std::pair{"clipvalue", options_.clipvalue},
                            std::pair{"global_clipnorm", options_.global_clipnorm}}) {
    if (value && !(*value > 0.0 && std::isfinite(*value))) {
      throw_value_error(type_, std::string("`") + arg + "` must be a positive finite float. "
                               "Received: " + arg + "=" + python_float(*value));
    }
  }
}

void Optimizer::require_range(const char* arg, double value, double low, double high,
                              bool high_open) const {
  const bool ok = value >= low && (high_open ? value < high : value <= high);
  if (!ok) {
    throw_value_error(type_, std::string("`") + arg + "` must be a float between [" +
                              python_float(low) + ", " + python_float(high) +
                              (high_open ? ")" : "]") + ". Received: " + arg + "=" +
                              python_float(value));
  }
}

void Optimizer::require_non_negative(const char* arg, double value) const {
  if (!(value >= 0.0 && std::isfinite(value))) {
    throw_value_error(type_, std::string("`") + arg +
                                 "` must be a finite float >= 0. Received: " + arg + "=" +
                              python_float(value));
  }
}

void Optimizer::set_moving_average(bool use_ema, double ema_momentum,
                                   std::optional<int64_t> ema_overwrite_frequency) {
  if (use_ema) {
    // Keras checks these only when use_ema is on, with these texts.
    if (ema_momentum > 1.0 || ema_momentum < 0.0 || !(ema_momentum == ema_momentum)) {
      throw_value_error("", "`ema_momentum` must be in the range [0, 1]. Received: "
                            "ema_momentum=" + python_float(ema_momentum));
    }
    if (ema_overwrite_frequency && *ema_overwrite_frequency < 1) {
      throw_value_error("", "`ema_overwrite_frequency` must be an integer >= 1 or None. "
                            "Received: ema_overwrite_frequency=" +
                                std::to_string(*ema_overwrite_frequency));
    }
  }
  std::lock_guard<std::mutex> lock(mutex_);
  options_.use_ema = use_ema;
  options_.ema_momentum = ema_momentum;
  options_.ema_overwrite_frequency = ema_overwrite_frequency;
}

double Optimizer::learning_rate() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return learning_rate_;
}

void Optimizer::set_learning_rate(double learning_rate) {
  require_non_negative("learning_rate", learning_rate);
  std::lock_guard<std::mutex> lock(mutex_);
  learning_rate_ = learning_rate;
}

int64_t Optimizer::iterations() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return iterations_;
}

void Optimizer::set_iterations(int64_t iterations) {
  if (iterations < 0) {
    throw_value_error(type_, "`iterations` must be an integer >= 0. Received: iterations=" +
                                 std::to_string(iterations));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  iterations_ = iterations;
  reset_device_scalars();
  ema_steps_.clear();
}

void Optimizer::count_replayed_steps(int64_t steps) {
  std::lock_guard<std::mutex> lock(mutex_);
  iterations_ += steps;
}

void Optimizer::exclude_from_weight_decay(const std::vector<Tensor>& params) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Tensor& p : params) {
    if (!p.defined()) throw_value_error(type_, "exclude_from_weight_decay got None in var_list");
    no_weight_decay_[p.impl()] = p.impl_ptr();
  }
}

Optimizer::State& Optimizer::state_for(const Tensor& param) {
  State& s = states_[param.impl()];
  const std::shared_ptr<TensorImpl> owner = s.param.lock();
  if (owner != param.impl_ptr()) {
    // New variable (or a freed one's address reused): fresh slots at their initial values.
    s.param = param.impl_ptr();
    s.order = next_order_++;
    const std::array<const char*, 3> names = slot_names();
    for (int k = 0; k < 3; ++k) {
      if (names[k] == nullptr) {
        s.slots[k] = Tensor();
      } else if (slot_copies_variable(k)) {
        s.slots[k] = clone(param);
      } else {
        s.slots[k] = full(slot_shape(k, param.shape()), slot_initial_value(k), DType::kFloat32,
                          param.device());
      }
    }
    for (Tensor& f : s.factors) {
      f = two_pass() ? zeros({}, DType::kFloat32, param.device()) : Tensor();
    }
    s.average = Tensor();  // use_ema: created on the first step (update_moving_averages)
  }
  return s;
}

void Optimizer::prune_freed_variables() {
  // Slots of variables that no longer exist (a notebook rebuilt its model) are released here,
  // so re-running a cell does not keep every old model's optimizer state alive.
  for (auto it = states_.begin(); it != states_.end();) {
    it = it->second.param.expired() ? states_.erase(it) : std::next(it);
  }
  for (auto it = no_weight_decay_.begin(); it != no_weight_decay_.end();) {
    it = it->second.expired() ? no_weight_decay_.erase(it) : std::next(it);
  }
}

void Optimizer::apply_scaled_gradients(const std::vector<Tensor>& grads,
                                       const std::vector<Tensor>& params, double multiplier) {
  apply_step(grads, params, multiplier, nullptr);
}

void Optimizer::apply_gated_gradients(const std::vector<Tensor>& grads,
                                      const std::vector<Tensor>& params, const Tensor& factor,
                                      const Tensor& skip) {
  const Gate gate{factor, skip};
  apply_step(grads, params, 1.0, &gate);
}

void Optimizer::apply_step(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                           double multiplier, const Gate* gate) {
  const std::string op = type_;
  if (grads.size() != params.size()) {
    throw_value_error(op, "apply_gradients got " + std::to_string(grads.size()) +
                              " gradients for " + std::to_string(params.size()) +
                              " variables; pass one gradient (or None) per variable");
  }
  if (grads.empty()) return;  // Keras: an empty list is a no-op

  // Validate everything before touching any variable.
  std::vector<size_t> active;
  std::unordered_set<const TensorImpl*> seen;
  for (size_t i = 0; i < params.size(); ++i) {
    const Tensor& p = params[i];
    const std::string which = "variable " + std::to_string(i);
    if (!p.defined()) throw_value_error(op, which + " is None; pass the variables to update");
    if (!seen.insert(p.impl()).second) {
      throw_value_error(op, which + " appears more than once in the list; each variable may "
                                    "be updated once per apply_gradients call");
    }
    if (p.dtype() != DType::kFloat32) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  which + " has dtype " + dtype_name(p.dtype()) +
                      "; optimizers update float32 variables (mixed precision keeps float32 "
                      "master weights and casts them for compute)");
    }
    if (!p.is_contiguous()) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  which + " is a non-contiguous view; optimizers update whole contiguous "
                          "variables in place");
    }
    const Tensor& g = grads[i];
    if (!g.defined()) continue;  // Keras skips variables whose gradient is None
    if (!is_floating(g.dtype())) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "gradient " + std::to_string(i) + " has dtype " + dtype_name(g.dtype()) +
                      "; gradients must be float32, float16 or bfloat16");
    }
    if (g.shape() != p.shape()) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "gradient " + std::to_string(i) + " has shape " + shape_to_string(g.shape()) +
                      " but its variable has shape " + shape_to_string(p.shape()) +
                      "; each gradient must have its variable's shape");
    }
    if (!same_device(g.device(), p.device())) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "gradient " + std::to_string(i) + " is on " + g.device().name() +
                      " but its variable is on " + p.device().name() +
                      "; move the gradient to the variable's device first");
    }
    active.push_back(i);
  }
  // Keras's exact text (no "[op]" prefix), as course code may match on it.
  if (active.empty()) throw_value_error("", "No gradients provided for any variable.");

  if (gate != nullptr && !honours_device_skip()) {
    throw_error(ErrorCode::kUnimplemented, op,
                op + " updates some slots with ops that cannot skip a step on the device; a "
                     "LossScaleOptimizer around it needs the host's finite check (train on the "
                     "CPU, or use float32 without loss scaling)");
  }
  GradModeGuard no_grad(false);
  std::lock_guard<std::mutex> lock(mutex_);
  prune_freed_variables();
  const int64_t step = iterations_ + 1;
  const float lr = static_cast<float>(learning_rate_);

  // Gradient transforms shared by every variable of this step. The gradient the update sees is
  // grads[i] * multiplier; norm clipping multiplies it by a factor computed from that
  // gradient's norm on the device (float32, as Keras), so no step waits to read a norm: the
  // fused update reads the product there (OptimizerUpdate::device_grad_scale).
  std::vector<Tensor> device_scales(active.size());
  // The multiplier as a scalar beside `x`: the host's value, or the gate's device scalar.
  auto multiplier_like = [&](const Tensor& x) {
    return gate != nullptr ? gate->factor : scalar_like(multiplier, x);
  };
  if (options_.clipnorm) {
    // tf.clip_by_norm: g * clipnorm / max(||g||, clipnorm), per gradient (an infinite norm
    // gives 0, a NaN norm NaN: maximum propagates NaN).
    for (size_t k = 0; k < active.size(); ++k) {
      const Tensor sum = squared_norm(grads[active[k]]);
      const Tensor norm = mul(unary(UnaryOp::kSqrt, sum), multiplier_like(sum));
      const Tensor c = scalar_like(*options_.clipnorm, norm);
      device_scales[k] = mul(multiplier_like(norm),
                             div(c, binary(BinaryOp::kMaximum, norm, c)));
    }
  } else if (options_.global_clipnorm) {
    // Keras's clip_by_global_norm: one factor min(1, c / ||all||); NaN when the norm is not
    // finite (norm * 0 is NaN then), so a step on inf/NaN gradients poisons the variables as
    // it does in Keras.
    Tensor total;
    for (size_t i : active) {
      const Tensor sum = squared_norm(grads[i]);
      total = total.defined() ? add(total, sum) : sum;
    }
    const Tensor norm = mul(unary(UnaryOp::kSqrt, total), multiplier_like(total));
    const Tensor c = scalar_like(*options_.global_clipnorm, norm);
    const Tensor nan_unless_finite = add(mul(norm, scalar_like(0.0, norm)), scalar_like(1.0, norm));
    const Tensor factor = mul(mul(multiplier_like(norm),
                                  div(c, binary(BinaryOp::kMaximum, norm, c))),
                              nan_unless_finite);
    std::fill(device_scales.begin(), device_scales.end(), factor);
  }

  std::vector<LogicalDevice> devices;
  for (size_t i : active) {
    const LogicalDevice& d = params[i].device();
    if (std::none_of(devices.begin(), devices.end(), [&](const LogicalDevice& e) { return same_device(d, e); })) {
      devices.push_back(d);
      advance_device_scalars(d, iterations_, lr, gate != nullptr ? gate->skip : Tensor());
    }
  }

  for (size_t k = 0; k < active.size(); ++k) {
    const size_t i = active[k];
    const Tensor& p = params[i];
    const Tensor g = grads[i].is_contiguous() ? grads[i] : contiguous(grads[i]);
    State& s = state_for(p);

    OptimizerUpdate u;
    u.learning_rate = lr;
    fill_update(u, step, lr);
    fill_variable_update(u, p);
    attach_device_scalars(u, p.device());
    if (options_.weight_decay && no_weight_decay_.count(p.impl()) == 0) {
      u.weight_decay = static_cast<float>(*options_.weight_decay);
    }
    u.grad_scale = static_cast<float>(multiplier);
    if (device_scales[k].defined()) {
      if (!s.grad_scale.defined()) s.grad_scale = zeros({}, DType::kFloat32, p.device());
      copy_into(device_scales[k], s.grad_scale);
      u.device_grad_scale = static_cast<const float*>(s.grad_scale.data());
    } else if (gate != nullptr) {
      u.device_grad_scale = static_cast<const float*>(gate->factor.data());
    }
    if (gate != nullptr) u.device_skip = static_cast<const float*>(gate->skip.data());
    if (options_.clipvalue) {
      u.flags |= kOptimizerClipValue;
      u.clip_value = static_cast<float>(*options_.clipvalue);
    }
    // Slots not of the variable's shape are never element-wise (slot_shape).
    TensorView slot_views[3];
    for (int j = 0; j < 3; ++j) {
      if (s.slots[j].defined() && s.slots[j].shape() == p.shape()) slot_views[j] = s.slots[j].view();
    }
    if (two_pass()) {
      run_two_passes(u, p, g, s, gate, slot_views);
    } else {
      backend_for_op(op, p.device())
          .optimizer_update(u, p.view(), g.view(), slot_views[0], slot_views[1], slot_views[2]);
    }
    p.bump_version();  // the layout and low-precision copies of the old weights are stale
    for (const Tensor& slot : s.slots) {
      if (slot.defined()) slot.bump_version();
    }
  }
  if (options_.use_ema) update_moving_averages(params, gate);
  iterations_ = step;
}

void Optimizer::run_two_passes(OptimizerUpdate u, const Tensor& param, const Tensor& grad,
                               State& s, const Gate* gate, const TensorView (&slot_views)[3]) {
  Backend& backend = backend_for_op(type_, param.device());
  u.pass = OptimizerPass::kSlots;
  backend.optimizer_update(u, param.view(), grad.view(), slot_views[0], slot_views[1],
                           slot_views[2]);
  // The gradient as the element passes see it (transform_gradient), for the reductions.
  Tensor g = grad.dtype() == DType::kFloat32 ? grad : cast(grad, DType::kFloat32);
  if (u.device_grad_scale != nullptr) {
    g = mul(g, s.grad_scale.defined() ? s.grad_scale : gate->factor);
  } else if (u.grad_scale != 1.0f) {
    g = mul(g, scalar_like(double(u.grad_scale), g));
  }
  if (u.flags & kOptimizerClipValue) {
    // maximum/minimum propagate NaN, as tf.clip_by_value passes it through.
    g = binary(BinaryOp::kMinimum, binary(BinaryOp::kMaximum, g, scalar_like(-u.clip_value, g)),
               scalar_like(u.clip_value, g));
  }
  const Tensor no_skip;
  VariableReduction r{param, g, s.slots, s.factors, gate != nullptr ? gate->skip : no_skip};
  reduce_between_passes(r);
  for (int k = 0; k < kOptimizerVariableFactors; ++k) {
    u.device_variable_factor[k] = static_cast<const float*>(s.factors[k].data());
  }
  u.pass = OptimizerPass::kParameter;
  TensorView fresh_views[3];  // reduce_between_passes may have written a slot: same storage
  for (int j = 0; j < 3; ++j) fresh_views[j] = slot_views[j].data ? s.slots[j].view() : TensorView();
  backend.optimizer_update(u, param.view(), grad.view(), fresh_views[0], fresh_views[1],
                           fresh_views[2]);
}

void Optimizer::update_moving_averages(const std::vector<Tensor>& params, const Gate* gate) {
  // Keras updates the averages of every variable the optimizer steps (gradient or not), with
  // m = (iterations != 0) * ema_momentum, iterations counted before this step. The count is
  // a device scalar here (a step a LossScaleOptimizer skips on the device leaves the averages
  // as they were, as Keras's skipped step never reaches them).
  std::vector<LogicalDevice> devices;
  for (const Tensor& p : params) {
    const LogicalDevice& d = p.device();
    if (std::none_of(devices.begin(), devices.end(),
                     [&](const LogicalDevice& e) { return same_device(d, e); })) {
      devices.push_back(d);
      DeviceStepFactors::Entry& e = ema_steps_.advance(
          d, iterations_, gate != nullptr ? gate->skip : Tensor());
      // t is the count after this step; the count before it is t - 1 (+ skip): 0 only on the
      // first step. m = min(count, 1) * ema_momentum; a skipped step keeps m = 1.
      const Tensor one = scalar_like(1.0, e.t);
      Tensor before = sub(e.t, one);
      if (gate != nullptr) before = add(before, gate->skip);
      Tensor m = mul(binary(BinaryOp::kMinimum, before, one),
                     scalar_like(options_.ema_momentum, e.t));
      if (gate != nullptr) m = add(m, mul(gate->skip, sub(one, m)));
      copy_into(m, e.factors[0]);
    }
  }
  const bool overwrite = options_.ema_overwrite_frequency &&
                         (iterations_ + 1) % *options_.ema_overwrite_frequency == 0;
  for (const Tensor& p : params) {
    State& s = state_for(p);
    // Keras's "average" slot starts at zeros; the first step's momentum is 0.
    if (!s.average.defined()) s.average = zeros(p.shape(), DType::kFloat32, p.device());
    const Tensor& m = ema_steps_.entry(p.device()).factors[0];
    // Keras: momentum * average + (1 - momentum) * variable.
    copy_into(add(mul(m, s.average), mul(sub(scalar_like(1.0, m), m), p)), s.average);
    s.average.bump_version();
    if (overwrite) {
      copy_into(s.average, p);
      p.bump_version();
    }
  }
}

const Tensor* Optimizer::average_of(const Tensor& param) const {
  if (!param.defined()) return nullptr;
  const auto it = states_.find(param.impl());
  if (it == states_.end() || it->second.param.lock() != param.impl_ptr() ||
      !it->second.average.defined()) {
    return nullptr;
  }
  return &it->second.average;
}

void Optimizer::finalize_variable_values(const std::vector<Tensor>& params) {
  if (!options_.use_ema) return;
  GradModeGuard no_grad(false);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Tensor& p : params) {
    if (const Tensor* average = average_of(p)) {
      copy_into(*average, p);
      p.bump_version();
    }
  }
}

void Optimizer::swap_variables_with_averages(const std::vector<Tensor>& params) {
  GradModeGuard no_grad(false);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Tensor& p : params) {
    if (const Tensor* average = average_of(p)) {
      const Tensor value = clone(p);
      copy_into(*average, p);
      copy_into(value, *average);
      p.bump_version();
      average->bump_version();
    }
  }
}

void Optimizer::copy_variables_into_averages(const std::vector<Tensor>& params) {
  GradModeGuard no_grad(false);
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Tensor& p : params) {
    if (const Tensor* average = average_of(p)) {
      copy_into(p, *average);
      average->bump_version();
    }
  }
}

Tensor Optimizer::average(const Tensor& param) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const Tensor* average = average_of(param);
  return average != nullptr ? *average : Tensor();
}

std::string Optimizer::capture_blocker() const {
  if (options_.use_ema && options_.ema_overwrite_frequency) {
    return "use_ema with ema_overwrite_frequency decides on the host's step count when to "
           "overwrite the variables with their averages";
  }
  return {};
}

std::vector<std::pair<std::string, Tensor>> Optimizer::variables() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::pair<std::string, Tensor>> out;
  const LogicalDevice cpu;
  out.emplace_back(name_ + "/iteration", full({}, double(iterations_), DType::kInt64, cpu));
  out.emplace_back(name_ + "/learning_rate", full({}, learning_rate_, DType::kFloat32, cpu));
  std::vector<const State*> live;
  for (const auto& [impl, s] : states_) {
    if (!s.param.expired()) live.push_back(&s);
  }
  std::sort(live.begin(), live.end(), [](const State* a, const State* b) { return a->order < b->order; });
  // Keras's base build adds the EMA averages (one call for every variable) before the
  // optimizer's own slots.
  for (size_t k = 0; k < live.size(); ++k) {
    if (!live[k]->average.defined()) continue;
    out.emplace_back(name_ + "/variable_" + std::to_string(k) + "_average", live[k]->average);
  }
  const std::array<const char*, 3> names = slot_names();
  const std::array<int, 3> groups = slot_groups();
  // Keras lists the slots of one add_optimizer_variables call interleaved per variable, then
  // the next call's.
  for (int group = 0; group < 3; ++group) {
    for (size_t k = 0; k < live.size(); ++k) {
      for (int j = 0; j < 3; ++j) {
        if (!names[j] || groups[j] != group) continue;
        out.emplace_back(name_ + "/variable_" + std::to_string(k) + "_" + names[j],
                         live[k]->slots[j]);
      }
    }
  }
  return out;
}

Tensor Optimizer::slot(const Tensor& param, const std::string& slot_name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = states_.find(param.impl());
  if (it == states_.end() || it->second.param.lock() != param.impl_ptr()) return Tensor();
  const std::array<const char*, 3> names = slot_names();
  for (int j = 0; j < 3; ++j) {
    if (names[j] && slot_name == names[j]) return it->second.slots[j];
  }
  return Tensor();
}

std::vector<std::string> Optimizer::slot_kinds() const {
  std::vector<std::string> out;
  for (const char* name : slot_names()) {
    if (name) out.emplace_back(name);
  }
  return out;
}

void Optimizer::set_slot(const Tensor& param, const std::string& slot_name, const Tensor& value) {
  const std::string op = type_;
  if (!param.defined() || !value.defined()) throw_value_error(op, "set_slot got an undefined tensor");
  const std::array<const char*, 3> names = slot_names();
  int index = -1;
  for (int j = 0; j < 3; ++j) {
    if (names[j] && slot_name == names[j]) index = j;
  }
  if (index < 0) {
    std::string known;
    for (const std::string& k : slot_kinds()) known += (known.empty() ? "'" : ", '") + k + "'";
    throw_value_error(op, "this " + op + " keeps no slot named '" + slot_name + "' (its slots: " +
                              (known.empty() ? std::string("none") : known) + ")");
  }
  const Shape shape = slot_shape(index, param.shape());
  if (value.dtype() != DType::kFloat32 || value.shape() != shape) {
    throw_value_error(op, "slot '" + slot_name + "' must be float32 of shape " +
                              shape_to_string(shape) + ", got " +
                              std::string(dtype_name(value.dtype())) + " " +
                              shape_to_string(value.shape()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  prune_freed_variables();
  State& s = state_for(param);
  const bool same_device = value.device().type == param.device().type &&
                           value.device().index == param.device().index;
  copy_into(same_device ? value : to_device(value, param.device()), s.slots[index]);
}

}  // namespace gpuaccel::optim
