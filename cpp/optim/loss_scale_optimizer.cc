// LossScaleOptimizer (optim/loss_scale_optimizer.h): the finite check and the scale's state
// machine; the unscale itself rides on the inner optimizer's fused update.
#include "optim/loss_scale_optimizer.h"


#include <cmath>
#include <cstdint>

#include "core/errors.h"
#include "kernels/half_conversions.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/op_utils.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "optim/number_text.h"

namespace gpuaccel::optim {

namespace {

// Below this many elements the check runs on the calling thread.
constexpr int64_t kSerialThreshold = 64 * 1024;

// Counts elements whose exponent bits are all ones (inf or NaN) in an array of raw bit patterns.
template <typename Bits>
bool bits_finite(const Bits* bits, int64_t n, Bits exponent_mask) {
  int64_t bad = 0;
#pragma omp parallel for reduction(+ : bad) schedule(static) if (n >= kSerialThreshold)
  for (int64_t i = 0; i < n; ++i) bad += (bits[i] & exponent_mask) == exponent_mask ? 1 : 0;
  return bad == 0;
}

}  // namespace

bool all_finite(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return true;
  if (!is_floating(t.dtype())) return true;  // integers are always finite
  if (t.device().type != DeviceType::kCPU) {
    // x * 0 is 0 for finite x and NaN for inf/NaN, so the sum is NaN iff one is not finite.
    GradModeGuard no_grad(false);
    const Tensor f = t.dtype() == DType::kFloat32 ? t : cast(t, DType::kFloat32);
    const Tensor s = reduce_sum(mul(f, scalar_like(0.0, f)), {}, false);
    float host = 0.0f;
    backend_for(s.device()).copy_to_host(s.view(), &host);
    return host == 0.0f;
  }
  const Tensor c = t.is_contiguous() ? t : contiguous(t);
  const TensorView v = c.view();
  const int64_t n = v.numel();
  switch (v.dtype) {
    case DType::kFloat32:
      return bits_finite(static_cast<const uint32_t*>(v.data), n, uint32_t{0x7f800000u});
    case DType::kFloat16:
      return bits_finite(static_cast<const uint16_t*>(v.data), n, uint16_t{0x7c00});
    case DType::kBFloat16:
      return bits_finite(static_cast<const uint16_t*>(v.data), n, uint16_t{0x7f80});
    default: {
      GradModeGuard no_grad(false);
      const Tensor f = cast(c, DType::kFloat32);
      return all_finite(f);
    }
  }
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
  return scale_;
}

int64_t LossScaleOptimizer::step_counter() const {
  std::lock_guard<std::mutex> lock(state_mutex_);
  return counter_;
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
  bool finite = true;
  {
    GradModeGuard no_grad(false);
    for (const Tensor& g : grads) {
      if (g.defined() && !all_finite(g)) {
        finite = false;
        break;
      }
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

std::vector<std::pair<std::string, Tensor>> LossScaleOptimizer::variables() const {
  std::vector<std::pair<std::string, Tensor>> out;
  const LogicalDevice cpu;
  {
    std::lock_guard<std::mutex> lock(state_mutex_);
    out.emplace_back(std::string(name()) + "/step_counter",
                     full({}, double(counter_), DType::kInt64, cpu));
    out.emplace_back(std::string(name()) + "/dynamic_scale",
                     full({}, scale_, DType::kFloat32, cpu));
  }
  for (auto& v : inner_->variables()) out.push_back(std::move(v));
  return out;
}

}  // namespace gpuaccel::optim
