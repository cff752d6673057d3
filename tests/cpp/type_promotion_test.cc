// PyTorch's type promotion (cpp/ops/type_promotion.h): the promote_types table, the three tiers
// of result_type (dimensioned tensors, 0-d tensors, numbers) and the refusal of numbers a dtype
// cannot hold.
#include <gtest/gtest.h>

#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/type_promotion.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::expect_error;

Tensor of(DType dtype, const Shape& shape) { return zeros(shape, dtype, LogicalDevice{}); }

Scalar integer(int64_t v) {
  Scalar s;
  s.kind = Scalar::Kind::kInt;
  s.integer = v;
  s.real = double(v);
  return s;
}

Scalar real(double v) {
  Scalar s;
  s.kind = Scalar::Kind::kFloat;
  s.real = v;
  return s;
}

TEST(PromoteTypes, TorchTable) {
  EXPECT_EQ(promote_types(DType::kInt32, DType::kInt64), DType::kInt64);
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt32), DType::kInt32);
  EXPECT_EQ(promote_types(DType::kBool, DType::kUInt8), DType::kUInt8);
  EXPECT_EQ(promote_types(DType::kInt64, DType::kFloat16), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kBFloat16, DType::kFloat32), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kFloat32, DType::kFloat64), DType::kFloat64);
  EXPECT_EQ(promote_types(DType::kFloat64, DType::kBFloat16), DType::kFloat64);
  EXPECT_EQ(promote_types(DType::kInt64, DType::kFloat64), DType::kFloat64);
  // uint8 and int8 each hold values the other cannot: int16 holds both.
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt8), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kInt8, DType::kUInt8), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kUInt8, DType::kInt16), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kInt8, DType::kInt16), DType::kInt16);
  EXPECT_EQ(promote_types(DType::kInt16, DType::kInt32), DType::kInt32);
  EXPECT_EQ(promote_types(DType::kBool, DType::kInt8), DType::kInt8);
  EXPECT_EQ(promote_types(DType::kInt16, DType::kFloat16), DType::kFloat16);
  for (DType d : {DType::kFloat32, DType::kInt32, DType::kBool}) EXPECT_EQ(promote_types(d, d), d);
}

TEST(ResultType, ZeroDimTensorsDecideOnlyAcrossCategories) {
  EXPECT_EQ(result_type(of(DType::kInt32, {3}), of(DType::kInt64, {})), DType::kInt32);
  EXPECT_EQ(result_type(of(DType::kInt32, {3}), of(DType::kFloat32, {})), DType::kFloat32);
  EXPECT_EQ(result_type(of(DType::kFloat16, {3}), of(DType::kFloat32, {})), DType::kFloat16);
  EXPECT_EQ(result_type(of(DType::kInt32, {}), of(DType::kInt64, {})), DType::kInt64);
  EXPECT_EQ(result_type(of(DType::kBool, {2}), of(DType::kInt32, {})), DType::kInt32);
}

TEST(ResultType, NumbersKeepTheTensorDtypeWithinItsCategory) {
  EXPECT_EQ(result_type(DType::kInt32, Scalar::Kind::kFloat), DType::kFloat32);
  EXPECT_EQ(result_type(DType::kFloat16, Scalar::Kind::kFloat), DType::kFloat16);
  EXPECT_EQ(result_type(DType::kInt32, Scalar::Kind::kInt), DType::kInt32);
  EXPECT_EQ(result_type(DType::kBool, Scalar::Kind::kInt), DType::kInt64);
  EXPECT_EQ(compute_dtype(BinaryOp::kDiv, DType::kInt64), DType::kFloat32);
  EXPECT_EQ(compute_dtype(BinaryOp::kAdd, DType::kInt64), DType::kInt64);
}

TEST(ScalarOperand, RefusesNumbersTheDtypeCannotHold) {
  const Tensor i32 = of(DType::kInt32, {2});
  expect_error(ErrorCode::kInvalidArgument, "[add] the value 1099511627776 does not fit in int32",
               [&] { scalar_operand(integer(int64_t{1} << 40), i32, BinaryOp::kAdd, "add"); });
  expect_error(ErrorCode::kInvalidArgument, "does not fit in uint8",
               [&] { scalar_tensor(integer(-1), DType::kUInt8, LogicalDevice{}, "Assign"); });
  expect_error(ErrorCode::kInvalidArgument, "nan does not fit in int64",
               [&] { scalar_tensor(real(NAN), DType::kInt64, LogicalDevice{}, "Assign"); });
  // Division computes in float32, so -1 is fine next to a uint8 tensor.
  const Tensor q = scalar_operand(integer(-1), of(DType::kUInt8, {2}), BinaryOp::kDiv, "div");
  EXPECT_EQ(q.dtype(), DType::kFloat32);
  EXPECT_EQ(test::read(q), std::vector<float>{-1.0f});
  const Tensor f = scalar_operand(real(0.5), i32, BinaryOp::kMul, "mul");
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(test::read(f), std::vector<float>{0.5f});
}

TEST(Binary, PromotesMixedOperands) {
  const Tensor y = add(of(DType::kInt32, {2}), of(DType::kFloat16, {2}));
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_EQ(div(of(DType::kInt64, {2}), of(DType::kInt64, {2})).dtype(), DType::kFloat32);
}

}  // namespace
}  // namespace gpuaccel
