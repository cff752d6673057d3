// Element-wise op frontends and gradients (see elementwise.h).
#include "ops/elementwise.h"

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"
#include "ops/type_promotion.h"

namespace gpuaccel {

namespace {

// uint8, int8, int16: the element-wise kernels compute these in int32 (widen, compute, narrow:
// two's-complement wrap-around, as NumPy and PyTorch give, with no kernels of their own).
bool is_narrow_integer(DType dtype) {
  return dtype == DType::kUInt8 || dtype == DType::kInt8 || dtype == DType::kInt16;
}

}  // namespace

const char* unary_op_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "Neg";
    case UnaryOp::kExp: return "Exp";
    case UnaryOp::kLog: return "Log";
    case UnaryOp::kSqrt: return "Sqrt";
    case UnaryOp::kRsqrt: return "Rsqrt";
    case UnaryOp::kAbs: return "Abs";
    case UnaryOp::kSquare: return "Square";
    case UnaryOp::kReciprocal: return "Reciprocal";
    case UnaryOp::kRelu: return "Relu";
    case UnaryOp::kSigmoid: return "Sigmoid";
    case UnaryOp::kTanh: return "Tanh";
    case UnaryOp::kGelu: return "Gelu";
    case UnaryOp::kSin: return "Sin";
    case UnaryOp::kCos: return "Cos";
    case UnaryOp::kTan: return "Tan";
    case UnaryOp::kAsin: return "Asin";
    case UnaryOp::kAcos: return "Acos";
    case UnaryOp::kAtan: return "Atan";
    case UnaryOp::kSinh: return "Sinh";
    case UnaryOp::kCosh: return "Cosh";
    case UnaryOp::kAsinh: return "Asinh";
    case UnaryOp::kAcosh: return "Acosh";
    case UnaryOp::kAtanh: return "Atanh";
    case UnaryOp::kErf: return "Erf";
  }
  return "Unary";
}

const char* binary_op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "AddV2";
    case BinaryOp::kSub: return "Sub";
    case BinaryOp::kMul: return "Mul";
    case BinaryOp::kDiv: return "RealDiv";
    case BinaryOp::kPow: return "Pow";
    case BinaryOp::kMaximum: return "Maximum";
    case BinaryOp::kMinimum: return "Minimum";
    case BinaryOp::kEqual: return "Equal";
    case BinaryOp::kGreater: return "Greater";
    case BinaryOp::kLess: return "Less";
    case BinaryOp::kAtan2: return "Atan2";
  }
  return "Binary";
}

Tensor scalar_like(double value, const Tensor& like) {
  return full({}, value, like.dtype(), like.device());
}

Tensor unary(UnaryOp op, const Tensor& x) {
  const char* name = unary_op_name(op);
  check_defined(name, x, "x");
  const bool integer_ok = op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kSquare;
  if (!integer_ok || is_floating(x.dtype())) check_floating(name, x, "x");
  if (is_narrow_integer(x.dtype())) return cast(unary(op, cast(x, DType::kInt32)), x.dtype());
  if (!is_floating(x.dtype()) && x.dtype() != DType::kInt32 && x.dtype() != DType::kInt64) {
    throw_error(ErrorCode::kInvalidArgument, name,
                std::string("unsupported dtype ") + dtype_name(x.dtype()));
  }
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device(), name);
  if (y.numel() > 0) backend_for_op(name, x.device()).unary(op, x.view(), y.view());
  if (is_floating(x.dtype()) && grad_mode_enabled() && needs_grad(x)) {
    const Tensor input = x;
    const std::weak_ptr<TensorImpl> output = y.impl_ptr();
    record(name, {x}, {y}, [op, input, output](const std::vector<Tensor>& g) {
      // y is recomputed if the caller dropped it (cheap; most ops need only x).
      std::shared_ptr<TensorImpl> y_impl = output.lock();
      const Tensor y_saved = y_impl ? Tensor(y_impl) : unary(op, input);
      const Tensor dy = contiguous(g[0]);
      Tensor dx = Tensor::empty(input.shape(), input.dtype(), input.device(), "UnaryGrad");
      if (dx.numel() > 0) {
        backend_for(input.device()).unary_backward(op, input.view(), y_saved.view(), dy.view(), dx.view());
      }
      return std::vector<Tensor>{dx};
    });
  }
  return y;
}

Tensor binary(BinaryOp op, const Tensor& a_in, const Tensor& b_in) {
  const char* name = binary_op_name(op);
  check_defined(name, a_in, "x");
  check_defined(name, b_in, "y");
  common_device(name, a_in, b_in);
  const bool comparison = op == BinaryOp::kEqual || op == BinaryOp::kGreater || op == BinaryOp::kLess;
  const DType dtype = compute_dtype(op, result_type(a_in, b_in));
  const bool integer_ok = comparison || op == BinaryOp::kAdd || op == BinaryOp::kSub ||
                          op == BinaryOp::kMul || op == BinaryOp::kMaximum || op == BinaryOp::kMinimum;
  if (integer_ok && is_narrow_integer(dtype)) {
    // Exact in int32 (a product of two int16 is below 2^31); narrowing wraps as PyTorch does.
    const Tensor wide = binary(op, cast(a_in, DType::kInt32), cast(b_in, DType::kInt32));
    return comparison ? wide : cast(wide, dtype);
  }
  if (!is_floating(dtype) && !(integer_ok && (dtype == DType::kInt32 || dtype == DType::kInt64))) {
    throw_error(ErrorCode::kInvalidArgument, name,
                std::string("unsupported dtype ") + dtype_name(dtype) +
                    (integer_ok ? " (supported: the floating and integer dtypes)"
                                : " (this op needs a floating dtype)") +
                    "; convert the operands first, e.g. t.to(gpuaccel.float32)");
  }
  // Promotion casts are recorded like any cast, so gradients reach each operand in its dtype.
  const Tensor a = cast(a_in, dtype);
  const Tensor b = cast(b_in, dtype);
  const Shape shape =
      a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = Tensor::empty(shape, comparison ? DType::kBool : dtype, a.device(), name);
  if (out.numel() > 0) {
    backend_for_op(name, a.device()).binary(op, broadcast_view(a, shape), broadcast_view(b, shape), out.view());
  }
  if (comparison || !is_floating(dtype)) return out;
  // record() would return at once; checking first skips building its closure and vectors.
  if (!grad_mode_enabled() || !(needs_grad(a) || needs_grad(b))) return out;

  const Tensor x = a, y = b;
  record(name, {a, b}, {out}, [op, x, y](const std::vector<Tensor>& g) {
    const Tensor& dz = g[0];
    Tensor dx, dy;
    switch (op) {
      case BinaryOp::kAdd: dx = dz; dy = dz; break;
      case BinaryOp::kSub: dx = dz; dy = neg(dz); break;
      case BinaryOp::kMul: dx = mul(dz, y); dy = mul(dz, x); break;
      case BinaryOp::kDiv:
        dx = div(dz, y);
        dy = neg(div(mul(dz, x), mul(y, y)));
        break;
      case BinaryOp::kPow: {
        // d/dx x^y = y x^(y-1); d/dy x^y = x^y log x (NaN-free only where x > 0, as in TF).
        const Tensor one = scalar_like(1.0, y);
        dx = mul(dz, mul(y, binary(BinaryOp::kPow, x, sub(y, one))));
        dy = mul(dz, mul(binary(BinaryOp::kPow, x, y), unary(UnaryOp::kLog, x)));
        break;
      }
      case BinaryOp::kMaximum:
      case BinaryOp::kMinimum: {
        // The gradient goes to the winner; ties go to x (TF's choice).
        const BinaryOp pick = op == BinaryOp::kMaximum ? BinaryOp::kLess : BinaryOp::kGreater;
        const Tensor y_wins = cast(binary(pick, x, y), x.dtype());  // 1 where y strictly wins
        const Tensor one = scalar_like(1.0, y_wins);
        dy = mul(dz, y_wins);
        dx = mul(dz, sub(one, y_wins));
        break;
      }
      case BinaryOp::kAtan2: {
        // atan2(x, y) is the angle of (y, x): d/dx = y / (x^2 + y^2), d/dy = -x / (x^2 + y^2)
        // (NaN at the origin, as TF and PyTorch).
        const Tensor scale = div(dz, add(mul(x, x), mul(y, y)));
        dx = mul(scale, y);
        dy = neg(mul(scale, x));
        break;
      }
      default:
        break;
    }
    return std::vector<Tensor>{sum_to_shape(dx, x.shape()), sum_to_shape(dy, y.shape())};
  });
  return out;
}

Tensor where(const Tensor& condition, const Tensor& a_in, const Tensor& b_in) {
  const char* name = "SelectV2";
  check_defined(name, condition, "condition");
  check_defined(name, a_in, "x");
  check_defined(name, b_in, "y");
  common_device(name, {condition, a_in, b_in});
  const DType dtype = result_type(a_in, b_in);
  const Tensor cond = condition.dtype() == DType::kBool ? condition : cast(detach(condition), DType::kBool);
  const Tensor a = cast(a_in, dtype);
  const Tensor b = cast(b_in, dtype);
  const Shape shape =
      broadcast_shapes(broadcast_shapes(cond.shape(), a.shape(), name), b.shape(), name);
  Tensor out = Tensor::empty(shape, dtype, a.device(), name);
  if (out.numel() > 0) {
    backend_for_op(name, a.device())
        .where(broadcast_view(cond, shape), broadcast_view(a, shape), broadcast_view(b, shape),
               out.view());
  }
  if (!is_floating(dtype) || !grad_mode_enabled() || !(needs_grad(a) || needs_grad(b))) return out;
  record(name, {a, b}, {out}, [cond, a_shape = a.shape(), b_shape = b.shape()](
                                  const std::vector<Tensor>& g) {
    const Tensor zero = scalar_like(0.0, g[0]);
    return std::vector<Tensor>{sum_to_shape(where(cond, g[0], zero), a_shape),
                               sum_to_shape(where(cond, zero, g[0]), b_shape)};
  });
  return out;
}

}  // namespace gpuaccel
