// Which functor and which storage type a bitwise launch uses, shared by the CPU loop
// (cpu/elementwise.cc) and the CUDA kernel (cuda/bitwise.cu) so both accept the same
// (op, dtype) pairs. Each returns false where it has nothing to call (an unknown op, a dtype
// with no bit-level meaning), and the caller throws its own backend's error.
#pragma once

#include <cstdint>
#include <type_traits>

#include "backends/op_kinds.h"
#include "core/dtype.h"
#include "kernels/bitwise_functors.h"

namespace gpuaccel {

// Calls f(functor) for op.
template <typename F>
bool with_bitwise_functor(BitwiseOp op, F&& f) {
  using namespace kernels;
  switch (op) {
    case BitwiseOp::kAnd: f(BitwiseAndFunctor{}); return true;
    case BitwiseOp::kOr: f(BitwiseOrFunctor{}); return true;
    case BitwiseOp::kXor: f(BitwiseXorFunctor{}); return true;
    case BitwiseOp::kShiftLeft: f(ShiftLeftFunctor{}); return true;
    case BitwiseOp::kShiftRight: f(ShiftRightFunctor{}); return true;
  }
  return false;
}

// Calls f(T{}) with T the storage type of dtype, for the dtypes op is defined on: the integers,
// and bool for and/or/xor (a shift of a bool has no meaning).
template <typename F>
bool with_bitwise_storage(BitwiseOp op, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kInt32: f(int32_t{}); return true;
    case DType::kInt64: f(int64_t{}); return true;
    case DType::kUInt8: f(uint8_t{}); return true;
    case DType::kInt8: f(int8_t{}); return true;
    case DType::kInt16: f(int16_t{}); return true;
    case DType::kBool:
      if (op == BitwiseOp::kShiftLeft || op == BitwiseOp::kShiftRight) return false;
      f(bool{});
      return true;
    default: return false;
  }
}

// Whether functor F is defined on storage T: shifts are integer-only.
template <typename F, typename T>
constexpr bool kBitwiseDefined = !std::is_same_v<T, bool> ||
                                 !(std::is_same_v<F, kernels::ShiftLeftFunctor> ||
                                   std::is_same_v<F, kernels::ShiftRightFunctor>);

}  // namespace gpuaccel
