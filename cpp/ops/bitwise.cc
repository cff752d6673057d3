// Bitwise op frontends (see bitwise.h).
#include "ops/bitwise.h"

#include <string>

#include "backends/op_names.h"
#include "core/errors.h"
#include "ops/elementwise.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"
#include "ops/type_promotion.h"

namespace gpuaccel {

namespace {

bool is_shift(BitwiseOp op) { return op == BitwiseOp::kShiftLeft || op == BitwiseOp::kShiftRight; }

void check_bitwise_dtype(const char* name, BitwiseOp op, DType dtype) {
  const bool integer = dtype == DType::kInt32 || dtype == DType::kInt64 || dtype == DType::kUInt8 ||
                       dtype == DType::kInt8 || dtype == DType::kInt16;
  if (integer || (dtype == DType::kBool && !is_shift(op))) return;
  throw_error(ErrorCode::kInvalidArgument, name,
              std::string("unsupported dtype ") + dtype_name(dtype) +
                  (is_shift(op) ? " (shifts take int32, int64 or uint8)"
                                : " (bitwise ops take int32, int64, uint8 or bool)") +
                  "; convert the operands first, e.g. t.to(gpuaccel.int32)");
}

}  // namespace

Tensor bitwise(BitwiseOp op, const Tensor& a_in, const Tensor& b_in) {
  const char* name = op_name(op);
  check_defined(name, a_in, "x");
  check_defined(name, b_in, "y");
  common_device(name, a_in, b_in);
  const DType dtype = result_type(a_in, b_in);
  check_bitwise_dtype(name, op, dtype);
  const Tensor a = cast(a_in, dtype);
  const Tensor b = cast(b_in, dtype);
  const Shape shape =
      a.shape() == b.shape() ? a.shape() : broadcast_shapes(a.shape(), b.shape(), name);
  Tensor out = Tensor::empty(shape, dtype, a.device(), name);
  if (out.numel() > 0) {
    backend_for_op(name, a.device()).bitwise(op, broadcast_view(a, shape), broadcast_view(b, shape),
                                             out.view());
  }
  return out;
}

Tensor bitwise_not(const Tensor& x) {
  check_defined("bitwise_not", x, "x");
  check_bitwise_dtype("bitwise_not", BitwiseOp::kXor, x.dtype());
  // All ones: true for bool, 255 for uint8, -1 (two's complement) for the signed types.
  const double all_ones = x.dtype() == DType::kBool ? 1.0 : x.dtype() == DType::kUInt8 ? 255.0 : -1.0;
  return bitwise(BitwiseOp::kXor, x, scalar_like(all_ones, x));
}

}  // namespace gpuaccel
