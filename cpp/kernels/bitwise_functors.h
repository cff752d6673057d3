// Element functors for every BitwiseOp (backends/op_kinds.h), shared by the CPU loop and the
// CUDA kernel. Templates over the integer storage type (int32, int64, uint8; and/or/xor also
// bool), so the CPU tests check the arithmetic the GPU runs.
//
// Shift counts outside [0, bits) are defined, not left to the hardware (x86 masks the count,
// PTX clamps it): everything is shifted out, as PyTorch 2 defines it (a left shift gives 0, a
// right shift the sign fill: -1 for a negative signed value, else 0). TensorFlow's rule (the
// count clamped to [0, bits - 1]) is composed by its frontend before the kernel runs.
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/host_device.h"

namespace gpuaccel::kernels {

struct BitwiseAndFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return static_cast<T>(a & b); }
};

struct BitwiseOrFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return static_cast<T>(a | b); }
};

struct BitwiseXorFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

// Integers only (not bool). The count is b read in a's type.
template <typename T>
GA_HOST_DEVICE GA_INLINE bool shift_count_in_range(T count) {
  constexpr int kBits = static_cast<int>(sizeof(T) * 8);
  if constexpr (std::is_signed_v<T>) {
    if (count < 0) return false;
  }
  return count < static_cast<T>(kBits);
}

struct ShiftLeftFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const {
    if (!shift_count_in_range(b)) return T{0};
    // Shifted as unsigned (a negative signed value's left shift is undefined in C++17), wide
    // enough that uint8's promotion to int cannot overflow; the cast back keeps the low bits.
    using U = std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>;
    return static_cast<T>(static_cast<U>(static_cast<std::make_unsigned_t<T>>(a)) << b);
  }
};

struct ShiftRightFunctor {
  template <typename T>
  GA_HOST_DEVICE GA_INLINE T operator()(T a, T b) const {
    if (!shift_count_in_range(b)) {
      if constexpr (std::is_signed_v<T>) return a < 0 ? T{-1} : T{0};
      return T{0};
    }
    return static_cast<T>(a >> b);  // arithmetic for signed types (C++20's rule, every compiler's)
  }
};

}  // namespace gpuaccel::kernels
