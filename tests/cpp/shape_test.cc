// The validation helpers of cpp/tensor/shape.h: element counts and byte sizes that overflow 64
// bits, negative dimensions, axes (negative, repeated, out of range, rank 0) and permutations.
#include <gtest/gtest.h>

#include <cstdint>

#include "tensor/shape.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using test::expect_error;

TEST(CheckedSize, CountsAndBytesOfValidShapes) {
  EXPECT_EQ(checked_numel({}, "t"), 1);
  EXPECT_EQ(checked_numel({2, 3, 4}, "t"), 24);
  EXPECT_EQ(checked_numel({2, 0, 4}, "t"), 0);
  EXPECT_EQ(checked_nbytes({2, 3}, 4, "t"), 24);
  EXPECT_EQ(checked_nbytes({(int64_t{1} << 61) - 1}, 4, "t"), INT64_MAX - 3);  // 2^63 - 4
  EXPECT_EQ(checked_nbytes({0, int64_t{1} << 40}, 4, "t"), 0);
}

TEST(ShapeNumel, CountsValidShapesAndSaturatesInsteadOfOverflowing) {
  EXPECT_EQ(shape_numel({}), 1);
  EXPECT_EQ(shape_numel({2, 3, 4}), 24);
  const int64_t two40 = int64_t{1} << 40;
  EXPECT_EQ(shape_numel({two40, two40, two40}), INT64_MAX);
  EXPECT_EQ(shape_numel({two40, two40, 0}), 0);  // empty whatever comes before
}

TEST(CheckedSize, OverflowIsAnInvalidArgumentNamingTheShape) {
  const int64_t two31 = int64_t{1} << 31;
  expect_error(ErrorCode::kInvalidArgument, "too large",  // exactly 2^63 bytes
               [] { checked_nbytes({int64_t{1} << 61}, 4, "t"); });
  expect_error(ErrorCode::kInvalidArgument, "[Fill] shape (2147483648, 2147483648) is too large",
               [&] { checked_nbytes({two31, two31}, 4, "Fill"); });
  expect_error(ErrorCode::kInvalidArgument, "element count exceeds 2^63 - 1",
               [] { checked_numel({int64_t{1} << 40, int64_t{1} << 40, int64_t{1} << 40}, "t"); });
  // Empty, but the non-zero dimensions would still overflow its strides (NumPy refuses too).
  expect_error(ErrorCode::kInvalidArgument, "too large",
               [] { checked_numel({0, int64_t{1} << 62, int64_t{1} << 62}, "t"); });
  expect_error(ErrorCode::kInvalidArgument, "negative dimension -1 in shape (2, -1)",
               [] { checked_numel({2, -1}, "t"); });
}

TEST(NormalizeAxis, RangesAndRankZero) {
  EXPECT_EQ(normalize_axis(-1, 3, "op"), 2);
  EXPECT_EQ(normalize_axis(0, 1, "op"), 0);
  expect_error(ErrorCode::kInvalidArgument, "axis 3 is out of bounds for a tensor of rank 3 "
                                            "(valid: -3 to 2)",
               [] { normalize_axis(3, 3, "op"); });
  expect_error(ErrorCode::kInvalidArgument, "a 0-d tensor has no axes",
               [] { normalize_axis(0, 0, "op"); });
  expect_error(ErrorCode::kInvalidArgument, "dim1 -4",
               [] { normalize_axis(-4, 3, "op", "dim1"); });
}

TEST(NormalizeAxes, RepeatedAxesAreRefusedAfterNormalization) {
  EXPECT_EQ(normalize_axes({0, -1}, 3, "Sum"), (std::vector<int>{0, 2}));
  expect_error(ErrorCode::kInvalidArgument, "[Sum] axis -3 is repeated in axis=(0, -3)",
               [] { normalize_axes({0, -3}, 3, "Sum"); });
}

TEST(NormalizePermutation, EachAxisOnce) {
  EXPECT_EQ(normalize_permutation({1, -1, 0}, 3, "Transpose"), (std::vector<int>{1, 2, 0}));
  EXPECT_TRUE(normalize_permutation({}, 0, "Transpose").empty());
  expect_error(ErrorCode::kInvalidArgument, "permutation (0, 0) repeats axis 0",
               [] { normalize_permutation({0, 0}, 2, "Transpose"); });
  expect_error(ErrorCode::kInvalidArgument, "has 1 entries for a tensor of rank 2",
               [] { normalize_permutation({0}, 2, "Transpose"); });
  expect_error(ErrorCode::kInvalidArgument, "permutation entry 2 is out of bounds",
               [] { normalize_permutation({0, 2}, 2, "Transpose"); });
}

}  // namespace
}  // namespace gpuaccel
