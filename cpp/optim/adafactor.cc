// Adafactor's hyperparameters, step factors and reductions (the element arithmetic is
// AdafactorUpdateFunctor in kernels/optimizer_functors.h). Per step, in float32 as Keras:
// b = 1 - t^beta_2_decay and rho = min(lr, 1 / sqrt(t)) live on the device (step factors 0-2);
// between the passes, ops compute alpha = max(epsilon_2, rms(w)) * rho, the factored moments
// r, c and v = (r / mean(r)) x c of a rank >= 2 variable, and the clip divisor
// max(1, rms(g / sqrt(v)) / clip_threshold).
#include "optim/adafactor.h"

#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"

namespace gpuaccel::optim {

Adafactor::Adafactor(double learning_rate, AdafactorSettings settings, OptimizerOptions options)
    : Optimizer("Adafactor", learning_rate, std::move(options)), settings_(settings) {}

std::array<const char*, 3> Adafactor::slot_names() const { return {"r", "c", "velocity"}; }

Shape Adafactor::slot_shape(int k, const Shape& param) const {
  if (k == 2) return param;
  if (param.size() < 2) return {};  // Keras's scalar placeholders of an unfactored variable
  Shape s = param;
  s.erase(s.end() - (k == 0 ? 1 : 2));  // r drops the last axis, c the second to last
  return s;
}

void Adafactor::fill_update(OptimizerUpdate& u, int64_t /*step*/, float /*lr*/) const {
  u.kind = OptimizerKind::kAdafactor;
  u.epsilon_1 = static_cast<float>(settings_.epsilon_1);
}

void Adafactor::fill_variable_update(OptimizerUpdate& u, const Tensor& param) const {
  if (param.shape().size() >= 2) u.flags |= kOptimizerFactored;  // v from r and c (ops)
}

void Adafactor::advance_device_scalars(const LogicalDevice& device, int64_t iterations, float lr,
                                       const Tensor& skip) {
  DeviceStepFactors::Entry& e = step_factors_.advance(device, iterations, skip);
  const Tensor& t = e.t;
  const Tensor one = scalar_like(1.0, t);
  const Tensor beta_2_t = sub(one, binary(BinaryOp::kPow, t, scalar_like(settings_.beta_2_decay, t)));
  copy_into(beta_2_t, e.factors[0]);
  copy_into(sub(one, beta_2_t), e.factors[1]);
  copy_into(binary(BinaryOp::kMinimum, scalar_like(double(lr), t),
                   div(one, unary(UnaryOp::kSqrt, t))),
            e.factors[2]);
}

void Adafactor::reduce_between_passes(VariableReduction& r) const {
  const DeviceStepFactors::Entry& e = step_factors_on(r.param.device());
  auto rms = [](const Tensor& x) {
    return unary(UnaryOp::kSqrt, reduce(ReduceOp::kMean, mul(x, x), {}, false));
  };
  const Tensor& p = r.param;
  const Tensor alpha = mul(binary(BinaryOp::kMaximum, scalar_like(settings_.epsilon_2, p), rms(p)),
                           e.factors[2]);
  const Tensor& g = r.gradient;
  Tensor& v = r.slots[2];
  const int64_t rank = static_cast<int64_t>(p.shape().size());
  if (rank >= 2) {
    const Tensor regulated = add(mul(g, g), scalar_like(settings_.epsilon_1, g));
    auto moment = [&](const Tensor& old, int64_t axis) {
      return add(mul(e.factors[0], old),
                 mul(e.factors[1], reduce(ReduceOp::kMean, regulated, {axis}, false)));
    };
    Tensor& row = r.slots[0];
    Tensor& column = r.slots[1];
    copy_into(moment(row, rank - 1), row);
    copy_into(moment(column, rank - 2), column);
    const Tensor row_share = div(row, reduce(ReduceOp::kMean, row, {rank - 2}, true));
    copy_into(mul(expand_dims(row_share, rank - 1), expand_dims(column, rank - 2)), v);
    row.bump_version();
    column.bump_version();
  }
  const Tensor unit = div(g, unary(UnaryOp::kSqrt, v));
  const Tensor divisor = binary(BinaryOp::kMaximum, scalar_like(1.0, unit),
                                div(rms(unit), scalar_like(settings_.clip_threshold, unit)));
  copy_into(alpha, r.factors[0]);
  copy_into(divisor, r.factors[1]);
}

}  // namespace gpuaccel::optim
