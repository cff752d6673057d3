// Reduction frontends and gradients (see reduce.h).
#include "ops/reduce.h"

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

namespace {

Shape drop_reduced(const Shape& kept, uint32_t mask) {
  Shape out;
  for (size_t d = 0; d < kept.size(); ++d) {
    if (!(mask & (1u << d))) out.push_back(kept[d]);
  }
  return out;
}

}  // namespace

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "Sum";
    case ReduceOp::kMean: return "Mean";
    case ReduceOp::kMax: return "Max";
    case ReduceOp::kMin: return "Min";
    case ReduceOp::kArgMax: return "ArgMax";
    case ReduceOp::kArgMin: return "ArgMin";
  }
  return "Reduce";
}

Tensor reduce(ReduceOp op, const Tensor& x, const std::vector<int64_t>& axes, bool keepdims) {
  const char* name = reduce_op_name(op);
  check_defined(name, x, "input");
  if (op == ReduceOp::kArgMax || op == ReduceOp::kArgMin) {
    throw_error(ErrorCode::kInternal, name, "use arg_reduce for argmax/argmin");
  }
  // Sums of integers and bools count in int64, as NumPy and torch do (a bool sum would
  // saturate at true, a uint8 sum wrap at 256 and an int32 sum at 2^31).
  if (op == ReduceOp::kSum && !is_floating(x.dtype()) && x.dtype() != DType::kInt64) {
    return reduce(op, cast(x, DType::kInt64), axes, keepdims);
  }
  // The mean of integers or bools is a float32 (NumPy's float64, in our widest float): the sum
  // is exact in int64, divided once. An integer mean would truncate silently (TF's choice).
  if (op == ReduceOp::kMean && !is_floating(x.dtype())) {
    const Tensor sum = reduce(ReduceOp::kSum, cast(x, DType::kInt64), axes, keepdims);
    const int64_t count = x.numel() / std::max<int64_t>(1, sum.numel());
    return div(cast(sum, DType::kFloat32), scalar_like(double(count), cast(sum, DType::kFloat32)));
  }
  uint32_t mask = 0;
  if (axes.empty()) {
    for (int d = 0; d < x.ndim(); ++d) mask |= 1u << d;
  }
  for (int d : normalize_axes(axes, x.ndim(), name)) mask |= 1u << d;
  Shape kept = x.shape();
  for (int d = 0; d < x.ndim(); ++d) {
    if (mask & (1u << d)) {
      if (x.shape()[d] == 0 && (op == ReduceOp::kMax || op == ReduceOp::kMin)) {
        throw_error(ErrorCode::kInvalidArgument, name,
                    "cannot take the max/min over axis " + std::to_string(d) + " of size 0 (shape " +
                        shape_to_string(x.shape()) + "): the reduction has no identity");
      }
      kept[d] = 1;
    }
  }
  Tensor out = Tensor::empty(kept, x.dtype(), x.device(), name);
  if (out.numel() > 0) backend_for_op(name, x.device()).reduce(op, x.view(), mask, out.view());
  if (is_floating(x.dtype())) {
    const Tensor input = x;
    const Shape kept_shape = kept;
    std::vector<int64_t> reduced_axes;
    for (int d = 0; d < x.ndim(); ++d) {
      if (mask & (1u << d)) reduced_axes.push_back(d);
    }
    const int64_t count = x.numel() / std::max<int64_t>(1, out.numel());
    // The output is held weakly (a strong capture would be a reference cycle through grad_fn).
    const std::weak_ptr<TensorImpl> out_weak = out.impl_ptr();
    record(name, {x}, {out}, [op, input, kept_shape, reduced_axes, count,
                              out_weak](const std::vector<Tensor>& g) {
      const Tensor dy = reshape(g[0], kept_shape);
      if (op == ReduceOp::kSum) return std::vector<Tensor>{broadcast_to(dy, input.shape())};
      if (op == ReduceOp::kMean) {
        return std::vector<Tensor>{
            broadcast_to(div(dy, scalar_like(double(count), dy)), input.shape())};
      }
      // max/min: the gradient is shared equally among the tied extreme elements.
      const std::shared_ptr<TensorImpl> kept_out = out_weak.lock();
      const Tensor extreme = kept_out ? Tensor(kept_out) : reduce(op, input, reduced_axes, true);
      const Tensor hit = cast(binary(BinaryOp::kEqual, input, extreme), input.dtype());
      const Tensor per_slot = reduce(ReduceOp::kSum, hit, reduced_axes, true);
      return std::vector<Tensor>{mul(hit, div(dy, per_slot))};
    });
  }
  // After record(): the reshape must see `out` as part of the graph.
  return keepdims ? out : reshape(out, drop_reduced(kept, mask));
}

Tensor arg_reduce(ReduceOp op, const Tensor& x, int64_t axis, bool keepdims) {
  const char* name = reduce_op_name(op);
  check_defined(name, x, "input");
  const int d = normalize_axis(axis, x.ndim(), name);
  if (x.shape()[d] == 0) {
    throw_error(ErrorCode::kInvalidArgument, name,
                "cannot take the " + std::string(op == ReduceOp::kArgMax ? "argmax" : "argmin") +
                    " over axis " + std::to_string(d) + " of size 0 (shape " +
                    shape_to_string(x.shape()) + ")");
  }
  Shape kept = x.shape();
  kept[d] = 1;
  Tensor out = Tensor::empty(kept, DType::kInt64, x.device(), name);
  if (out.numel() > 0) backend_for_op(name, x.device()).reduce(op, x.view(), 1u << d, out.view());
  return keepdims ? out : reshape(out, drop_reduced(kept, 1u << d));
}

}  // namespace gpuaccel
