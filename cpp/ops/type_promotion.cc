// PyTorch's type promotion over gpuaccel's dtypes (see type_promotion.h).
#include "ops/type_promotion.h"

#include <cmath>
#include <cstdio>
#include <optional>

#include "core/errors.h"
#include "ops/creation.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

namespace {

enum class Category { kBool, kInteger, kFloating };

Category category(DType d) {
  if (d == DType::kBool) return Category::kBool;
  return is_floating(d) ? Category::kFloating : Category::kInteger;
}

// Width order inside a category (bool < uint8, int8 < int16 < int32 < int64; 16-bit floats <
// float32 < float64). Two dtypes of one rank hold different ranges and promote past both.
int rank_in_category(DType d) {
  switch (d) {
    case DType::kBool: return 0;
    case DType::kUInt8:
    case DType::kInt8: return 1;
    case DType::kInt16: return 2;
    case DType::kInt32: return 3;
    case DType::kInt64: return 4;
    case DType::kFloat16:
    case DType::kBFloat16: return 1;
    case DType::kFloat32: return 2;
    case DType::kFloat64: return 3;
  }
  return 0;
}

// torch's combine_categories: `lower` (0-d tensors, numbers) decides only when it is of a
// higher category than `higher` (dimensioned tensors).
DType combine(std::optional<DType> higher, DType lower) {
  if (!higher) return lower;
  if (category(*higher) >= category(lower)) return *higher;
  return promote_types(*higher, lower);
}

struct IntRange {
  double lo, hi;  // as doubles: exact for every bound but int64's top (2^63, exclusive below)
};
std::optional<IntRange> integer_range(DType d) {
  switch (d) {
    case DType::kUInt8: return IntRange{0.0, 255.0};
    case DType::kInt8: return IntRange{-128.0, 127.0};
    case DType::kInt16: return IntRange{-32768.0, 32767.0};
    case DType::kInt32: return IntRange{-2147483648.0, 2147483647.0};
    case DType::kInt64: return IntRange{-9223372036854775808.0, 9223372036854775807.0};
    default: return std::nullopt;
  }
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  const Category ca = category(a), cb = category(b);
  if (ca != cb) return ca > cb ? a : b;
  // Same category, different dtypes.
  if (rank_in_category(a) == rank_in_category(b)) {
    // float16 with bfloat16, uint8 with int8: neither holds the other
    return ca == Category::kFloating ? DType::kFloat32 : DType::kInt16;
  }
  return rank_in_category(a) > rank_in_category(b) ? a : b;
}

DType result_type(const Tensor& a, const Tensor& b) {
  if (a.dtype() == b.dtype()) return a.dtype();
  std::optional<DType> dimensioned, zero_dim;
  for (const Tensor* t : {&a, &b}) {
    std::optional<DType>& tier = t->ndim() > 0 ? dimensioned : zero_dim;
    tier = tier ? promote_types(*tier, t->dtype()) : t->dtype();
  }
  if (!zero_dim) return *dimensioned;
  return combine(dimensioned, *zero_dim);
}

DType result_type(DType tensor_dtype, Scalar::Kind kind) {
  const DType number = kind == Scalar::Kind::kBool  ? DType::kBool
                       : kind == Scalar::Kind::kInt ? DType::kInt64
                                                    : DType::kFloat32;
  return combine(tensor_dtype, number);
}

std::string Scalar::describe() const {
  if (kind == Kind::kBool) return integer ? "True" : "False";
  if (kind == Kind::kInt && fits_int64) return std::to_string(integer);
  char text[64];
  std::snprintf(text, sizeof text, kind == Kind::kInt ? "%.0f" : "%.17g", real);
  return text;
}

Tensor scalar_tensor(const Scalar& value, DType dtype, const LogicalDevice& device,
                     std::string_view op) {
  if (const std::optional<IntRange> range = integer_range(dtype)) {
    const bool integral_value = value.kind != Scalar::Kind::kFloat && value.fits_int64;
    const bool fits = integral_value
                          ? (value.integer >= range->lo && double(value.integer) <= range->hi)
                          : (std::isfinite(value.real) && value.real >= range->lo &&
                             value.real < range->hi + 1.0);
    if (!fits) {
      throw_error(ErrorCode::kInvalidArgument, std::string(op),
                  "the value " + value.describe() + " does not fit in " + dtype_name(dtype) +
                      " (it would wrap or saturate); convert the tensor first, e.g. " +
                      "t.to(gpuaccel.float32) or t.to(gpuaccel.int64)");
    }
  }
  const LogicalDevice host = DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0);
  // Integers go through int64 so values beyond 2^53 stay exact until the one cast to `dtype`;
  // floats are rounded once, from the double.
  const Tensor on_host = value.kind != Scalar::Kind::kFloat && value.fits_int64
                             ? cast(from_host(&value.integer, {}, DType::kInt64, host), dtype)
                             : full({}, value.real, dtype, host);
  return to_device(on_host, device);
}

DType compute_dtype(BinaryOp op, DType result) {
  const bool float_only = op == BinaryOp::kDiv || op == BinaryOp::kAtan2;
  return float_only && !is_floating(result) ? DType::kFloat32 : result;
}

Tensor scalar_operand(const Scalar& value, const Tensor& like, BinaryOp kind, std::string_view op) {
  return scalar_tensor(value, compute_dtype(kind, result_type(like.dtype(), value.kind)),
                       like.device(), op);
}

}  // namespace gpuaccel
