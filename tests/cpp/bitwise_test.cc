// The bitwise functors (kernels/bitwise_functors.h: what the CPU loop and the CUDA kernel both
// run) against reference values written out by hand, including the shift-count edges C++ leaves
// undefined; the CPU kernel over broadcast views; the frontend's promotion and refusals.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/cpu/elementwise.h"
#include "kernels/bitwise_functors.h"
#include "ops/bitwise.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

using kernels::ShiftLeftFunctor;
using kernels::ShiftRightFunctor;

TEST(BitwiseFunctors, AndOrXorOnEveryStorageType) {
  EXPECT_EQ(kernels::BitwiseAndFunctor{}(int32_t{12}, int32_t{10}), 8);
  EXPECT_EQ(kernels::BitwiseOrFunctor{}(int64_t{12}, int64_t{-16}), -4);
  EXPECT_EQ(kernels::BitwiseXorFunctor{}(uint8_t{0xF0}, uint8_t{0xFF}), 0x0F);
  EXPECT_EQ(kernels::BitwiseXorFunctor{}(true, true), false);
  EXPECT_EQ(kernels::BitwiseOrFunctor{}(false, true), true);
}

TEST(BitwiseFunctors, ShiftsInRangeAreTwosComplement) {
  EXPECT_EQ(ShiftLeftFunctor{}(int32_t{-5}, int32_t{31}), INT32_MIN);  // the low bit reaches the sign
  EXPECT_EQ(ShiftLeftFunctor{}(int32_t{3}, int32_t{30}), INT32_MIN + (1 << 30));
  EXPECT_EQ(ShiftLeftFunctor{}(int64_t{1}, int64_t{62}), int64_t{1} << 62);
  EXPECT_EQ(ShiftLeftFunctor{}(uint8_t{200}, uint8_t{1}), uint8_t{144});  // 400 keeps its low byte
  EXPECT_EQ(ShiftRightFunctor{}(int32_t{-8}, int32_t{1}), -4);           // arithmetic
  EXPECT_EQ(ShiftRightFunctor{}(int64_t{-1}, int64_t{63}), -1);
  EXPECT_EQ(ShiftRightFunctor{}(uint8_t{200}, uint8_t{7}), 1);
}

// Negative counts and counts of at least the width shift every bit out (PyTorch 2's rule), where
// x86 would have masked the count (1 << 33 == 2) and C++ says nothing.
TEST(BitwiseFunctors, OutOfRangeCountsShiftEverythingOut) {
  EXPECT_EQ(ShiftLeftFunctor{}(int32_t{1}, int32_t{32}), 0);
  EXPECT_EQ(ShiftLeftFunctor{}(int32_t{1}, int32_t{33}), 0);
  EXPECT_EQ(ShiftLeftFunctor{}(int32_t{5}, int32_t{-1}), 0);
  EXPECT_EQ(ShiftLeftFunctor{}(int64_t{1}, int64_t{64}), 0);
  EXPECT_EQ(ShiftLeftFunctor{}(uint8_t{1}, uint8_t{8}), 0);
  EXPECT_EQ(ShiftRightFunctor{}(int32_t{-5}, int32_t{32}), -1);  // the sign fill
  EXPECT_EQ(ShiftRightFunctor{}(int32_t{5}, int32_t{40}), 0);
  EXPECT_EQ(ShiftRightFunctor{}(int64_t{-5}, int64_t{-1}), -1);
  EXPECT_EQ(ShiftRightFunctor{}(uint8_t{255}, uint8_t{8}), 0);
}

template <typename T>
Tensor tensor_of(const std::vector<T>& values, const Shape& shape, DType dtype) {
  return from_host(values.data(), shape, dtype, LogicalDevice{});
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  std::vector<T> out(static_cast<size_t>(t.numel()));
  backend_for(t.device()).copy_to_host(t.view(), out.data());
  return out;
}

// The CPU kernel on a (2, 1) column broadcast against a (3,) row, as the frontend passes them.
TEST(BitwiseCpuKernel, BroadcastViews) {
  const std::vector<int64_t> a = {0b1100, -1};
  const std::vector<int64_t> b = {0b1010, 1, 70};
  std::vector<int64_t> out(6);
  TensorView av = test::contiguous_view(const_cast<int64_t*>(a.data()), {2, 3}, DType::kInt64);
  av.strides[0] = 1;
  av.strides[1] = 0;
  TensorView bv = test::contiguous_view(const_cast<int64_t*>(b.data()), {2, 3}, DType::kInt64);
  bv.strides[0] = 0;
  const TensorView ov = test::contiguous_view(out.data(), {2, 3}, DType::kInt64);
  cpu::bitwise(BitwiseOp::kShiftLeft, av, bv, ov);
  EXPECT_EQ(out, (std::vector<int64_t>{12 << 10, 24, 0, -1024, -2, 0}));
  cpu::bitwise(BitwiseOp::kAnd, av, bv, ov);
  EXPECT_EQ(out, (std::vector<int64_t>{8, 0, 4, 10, 1, 70}));
}

TEST(BitwiseCpuKernel, RefusesShiftsOfBool) {
  bool a[1] = {true}, out[1] = {false};
  const TensorView v = test::contiguous_view(a, {1}, DType::kBool);
  const TensorView o = test::contiguous_view(out, {1}, DType::kBool);
  test::expect_error(ErrorCode::kInvalidArgument, "dtype bool is not supported",
                     [&] { cpu::bitwise(BitwiseOp::kShiftRight, v, v, o); });
}

TEST(BitwiseFrontend, PromotesLikePyTorch) {
  const Tensor i32 = tensor_of<int32_t>({5, 6}, {2}, DType::kInt32);
  const Tensor i64 = tensor_of<int64_t>({3}, {1}, DType::kInt64);
  const Tensor r = bitwise(BitwiseOp::kOr, i32, i64);
  EXPECT_EQ(r.dtype(), DType::kInt64);
  EXPECT_EQ(values_of<int64_t>(r), (std::vector<int64_t>{7, 7}));
  const bool flags[2] = {true, false};
  const Tensor b = from_host(flags, {2}, DType::kBool, LogicalDevice{});
  const Tensor u8 = tensor_of<uint8_t>({3, 3}, {2}, DType::kUInt8);
  const Tensor m = bitwise(BitwiseOp::kAnd, b, u8);  // bool < uint8
  EXPECT_EQ(m.dtype(), DType::kUInt8);
  EXPECT_EQ(values_of<uint8_t>(m), (std::vector<uint8_t>{1, 0}));
}

TEST(BitwiseFrontend, NotFlipsEveryBitOfEachDtype) {
  EXPECT_EQ(values_of<int32_t>(bitwise_not(tensor_of<int32_t>({0, 5, -1}, {3}, DType::kInt32))),
            (std::vector<int32_t>{-1, -6, 0}));
  EXPECT_EQ(values_of<uint8_t>(bitwise_not(tensor_of<uint8_t>({0, 5}, {2}, DType::kUInt8))),
            (std::vector<uint8_t>{255, 250}));
  const bool flags[2] = {true, false};
  const Tensor b = bitwise_not(from_host(flags, {2}, DType::kBool, LogicalDevice{}));
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_EQ(values_of<uint8_t>(b), (std::vector<uint8_t>{0, 1}));
}

TEST(BitwiseFrontend, RefusesFloatsAndBoolShifts) {
  const Tensor f = test::make({1.0f}, {1});
  const Tensor i = tensor_of<int32_t>({1}, {1}, DType::kInt32);
  test::expect_error(ErrorCode::kInvalidArgument, "unsupported dtype float32",
                     [&] { bitwise(BitwiseOp::kXor, f, i); });
  test::expect_error(ErrorCode::kInvalidArgument, "unsupported dtype float32",
                     [&] { bitwise_not(f); });
  const bool flag[1] = {true};
  const Tensor b = from_host(flag, {1}, DType::kBool, LogicalDevice{});
  test::expect_error(ErrorCode::kInvalidArgument, "shifts take int32, int64 or uint8",
                     [&] { bitwise(BitwiseOp::kShiftLeft, b, b); });
}

}  // namespace
}  // namespace gpuaccel
