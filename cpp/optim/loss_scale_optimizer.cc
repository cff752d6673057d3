// LossScaleOptimizer (optim/loss_scale_optimizer.h): the finite check and the scale's state
// machine; the unscale itself rides on the inner optimizer's fused update.
#include "optim/loss_scale_optimizer.h"


#include <algorithm>
#include <cmath>
#include <cstdint>

#include "core/errors.h"
#include "kernels/half_conversions.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/host_read.h"
#include "ops/elementwise.h"
#include "ops/finite_check.h"
#include "ops/op_utils.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "optim/number_text.h"

namespace gpuaccel::optim {

bool all_finite(const Tensor& t) {
  if (!t.defined() || t.numel() == 0 || !is_floating(t.dtype())) return true;
  return read_scalars({any_nonfinite({t}, t.device())})[0] == 0.0;
}

LossScaleOptimizer::LossScaleOptimizer(std::shared_ptr<Optimizer> inner, double initial_scale,
                                       int64_t dynamic_growth_steps, std::string name)
    : Optimizer("LossScaleOptimizer", 0.0, [&] {
        OptimizerOptions o;
        o.name = std::move(name);
        return o;
      }()),
      inner_(std::move(inner)),
      initial_scale_(initial_scale),
      dynamic_growth_steps_(dynamic_growth_steps) {
  if (!inner_) {
    throw_value_error("LossScaleOptimizer", "`inner_optimizer` must be an optimizer, got None");
  }
  // Keras keeps the scale in a float32 variable: round the same way.
  const double as_float = static_cast<double>(static_cast<float>(initial_scale));
  if (!(as_float > 0.0 && std::isfinite(as_float))) {
    throw_value_error("LossScaleOptimizer",
                      "`initial_scale` must be a positive finite float32 value. Received: "
                      "initial_scale=" + python_float(initial_scale));
  }
  if (dynamic_growth_steps < 1) {
    throw_value_error("LossScaleOptimizer",
                      "`dynamic_growth_steps` must be an integer >= 1. Received: "
                      "dynamic_growth_steps=" + std::to_string(dynamic_growth_steps));
  }
  scale_ = as_float;
}

double LossScaleOptimizer::scale() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  read_device_state();
  return scale_;
}

int64_t LossScaleOptimizer::step_counter() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  read_device_state();
  return counter_;
}

void LossScaleOptimizer::read_device_state() const {
  if (!device_) return;
  const std::vector<double> v = read_scalars({device_->scale, device_->counter});
  scale_ = v[0];
  counter_ = static_cast<int64_t>(v[1]);
}

LossScaleOptimizer::DeviceState& LossScaleOptimizer::device_state(const LogicalDevice& device) {
  if (device_ && same_device(device_->device, device)) return *device_;
  // A first GPU step, or the variables moved: the state continues from where it is.
  read_device_state();
  const int64_t skipped = device_ ? static_cast<int64_t>(read_scalars({device_->skipped})[0]) : 0;
  auto state = std::make_unique<DeviceState>();
  state->device = device;
  state->scale = full({}, scale_, DType::kFloat32, device);
  state->counter = full({}, double(counter_), DType::kFloat32, device);
  state->factor = zeros({}, DType::kFloat32, device);
  state->skip = zeros({}, DType::kFloat32, device);
  state->skipped = full({}, double(skipped), DType::kFloat32, device);
  device_ = std::move(state);
  return *device_;
}

Tensor LossScaleOptimizer::device_loss_scale(const LogicalDevice& device) {
  if (device.type == DeviceType::kCPU) return Tensor();
  std::lock_guard<std::mutex> lock(state_mutex_);
  return device_state(device).scale;
}

int64_t LossScaleOptimizer::iterations() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  const int64_t skipped = device_ ? static_cast<int64_t>(read_scalars({device_->skipped})[0]) : 0;
  return inner_->steps_taken() - skipped;
}

void LossScaleOptimizer::set_iterations(int64_t iterations) {
  std::lock_guard<std::mutex> lock(state_mutex_);
  inner_->set_iterations(iterations);
  if (device_) copy_into(zeros({}, DType::kFloat32, device_->device), device_->skipped);
}

void LossScaleOptimizer::restore_steps_taken(int64_t steps) {
  // The inner optimizer's device counters restart from Keras's count: the steps taken less
  // those skipped (a failed capture's device work never ran, so the skipped count is current).
  std::lock_guard<std::mutex> lock(state_mutex_);
  const int64_t skipped = device_ ? static_cast<int64_t>(read_scalars({device_->skipped})[0]) : 0;
  inner_->set_iterations(steps - skipped);
  if (device_) copy_into(zeros({}, DType::kFloat32, device_->device), device_->skipped);
}

void LossScaleOptimizer::set_dynamic_state(double scale, int64_t step_counter) {
  const double as_float = static_cast<double>(static_cast<float>(scale));
  if (!(as_float > 0.0 && std::isfinite(as_float))) {
    throw_value_error("LossScaleOptimizer", "the dynamic scale must be a positive finite "
                      "float32 value. Received: scale=" + python_float(scale));
  }
  if (step_counter < 0 || step_counter >= dynamic_growth_steps_) {
    throw_value_error("LossScaleOptimizer", "step_counter must be in [0, dynamic_growth_steps=" +
                      std::to_string(dynamic_growth_steps_) + "). Received: step_counter=" +
                      std::to_string(step_counter));
  }
  std::lock_guard<std::mutex> lock(state_mutex_);
  scale_ = as_float;
  counter_ = step_counter;
  if (device_) {
    copy_into(full({}, scale_, DType::kFloat32, device_->device), device_->scale);
    copy_into(full({}, double(counter_), DType::kFloat32, device_->device), device_->counter);
  }
}

void LossScaleOptimizer::fill_update(OptimizerUpdate&, int64_t, float) const {
  throw_error(ErrorCode::kInternal, "LossScaleOptimizer",
              "the wrapper has no update of its own; its inner optimizer updates");
}

void LossScaleOptimizer::apply_scaled_gradients(const std::vector<Tensor>& grads,
                                                const std::vector<Tensor>& params,
                                                double multiplier) {
  step(grads, params, multiplier, /*unscale=*/true);
}

void LossScaleOptimizer::apply_unscaled_gradients(const std::vector<Tensor>& grads,
                                                  const std::vector<Tensor>& params) {
  step(grads, params, 1.0, /*unscale=*/false);
}

void LossScaleOptimizer::step(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                              double multiplier, bool unscale) {
  // Malformed calls (count mismatch, empty, all None) get the inner optimizer's errors and
  // no-ops without touching the scale.
  bool any = false;
  for (const Tensor& g : grads) any = any || g.defined();
  if (grads.size() != params.size() || !any) {
    inner_->apply_scaled_gradients(grads, params, multiplier);
    return;
  }
  std::lock_guard<std::mutex> lock(state_mutex_);
  const LogicalDevice& device = params[0].device();
  bool one_gpu = device.type != DeviceType::kCPU;
  for (const Tensor& p : params) one_gpu = one_gpu && p.defined() && same_device(p.device(), device);
  if (one_gpu) return device_step(grads, params, multiplier, unscale);
  bool finite = true;
  {
    GradModeGuard no_grad(false);
    // One pass per device the gradients are on (the one-GPU case took device_step above).
    std::vector<std::vector<Tensor>> by_device;
    for (const Tensor& g : grads) {
      if (!g.defined()) continue;
      auto same = [&](const std::vector<Tensor>& group) { return same_device(group[0].device(), g.device()); };
      auto it = std::find_if(by_device.begin(), by_device.end(), same);
      if (it == by_device.end()) it = by_device.insert(by_device.end(), std::vector<Tensor>{});
      it->push_back(g);
    }
    for (size_t i = 0; finite && i < by_device.size(); ++i) {
      finite = read_scalars({any_nonfinite(by_device[i], by_device[i][0].device())})[0] == 0.0;
    }
  }
  if (!finite) {
    counter_ = 0;
    scale_ = static_cast<double>(static_cast<float>(scale_ * 0.5));
    return;
  }
  // Keras divides by the float32 scale; scales are powers of two times the initial scale, so
  // the reciprocal is exact for the default 2**15 and within an ulp otherwise.
  const double factor = unscale ? multiplier / scale_ : multiplier;
  inner_->apply_scaled_gradients(grads, params, factor);
  if (counter_ == dynamic_growth_steps_ - 1) {
    counter_ = 0;
    scale_ = static_cast<double>(static_cast<float>(scale_ * 2.0));
  } else {
    ++counter_;
  }
}

void LossScaleOptimizer::device_step(const std::vector<Tensor>& grads,
                                     const std::vector<Tensor>& params, double multiplier,
                                     bool unscale) {
  DeviceState& d = device_state(params[0].device());
  GradModeGuard no_grad(false);
  // skip = 1 iff a gradient element is inf or NaN: one launch over all gradients, read by the
  // gated update and the scale's arithmetic below on the device.
  any_nonfinite_into(grads, d.skip);
  const Tensor one = scalar_like(1.0, d.skip);
  const Tensor finite = sub(one, d.skip);
  // Keras divides by the float32 scale (see step()).
  copy_into(unscale ? div(scalar_like(multiplier, d.scale), d.scale) : scalar_like(multiplier, d.scale),
            d.factor);
  inner_->apply_gated_gradients(grads, params, d.factor, d.skip);
  // counter + 1 reaching dynamic_growth_steps doubles the scale and resets the counter; a skip
  // halves the scale and resets it.
  const Tensor next = add(d.counter, one);
  const Tensor grow = cast(binary(BinaryOp::kEqual, next, scalar_like(double(dynamic_growth_steps_), next)),
                           DType::kFloat32);
  const Tensor factor = add(mul(finite, add(one, grow)), mul(d.skip, scalar_like(0.5, one)));
  copy_into(mul(finite, mul(next, sub(one, grow))), d.counter);
  copy_into(mul(d.scale, factor), d.scale);
  copy_into(add(d.skipped, d.skip), d.skipped);
}

std::vector<std::pair<std::string, Tensor>> LossScaleOptimizer::variables() const {
  std::vector<std::pair<std::string, Tensor>> out;
  const LogicalDevice cpu;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    read_device_state();
    out.emplace_back(std::string(name()) + "/step_counter",
                     full({}, double(counter_), DType::kInt64, cpu));
    out.emplace_back(std::string(name()) + "/dynamic_scale",
                     full({}, scale_, DType::kFloat32, cpu));
  }
  for (auto& v : inner_->variables()) out.push_back(std::move(v));
  return out;
}

}  // namespace gpuaccel::optim
