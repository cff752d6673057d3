// The element test of dynamic loss scaling's finite check (Backend::any_nonfinite): is this
// float32 / float16 / bfloat16 / float64 value inf or NaN? It reads raw bits (a value is non-finite iff its
// exponent bits are all ones), so no float compare, no conversion to float32 and no FPU mode
// (flush-to-zero, fast math) can change the answer. The CPU loop and the CUDA kernel run this
// same functor; the kernel also tests 32-bit words holding two 16-bit values at once.
#pragma once

#include <cstdint>

#include "kernels/half_conversions.h"
#include "kernels/host_device.h"

namespace gpuaccel::kernels {

constexpr uint16_t kBFloat16ExpMask = 0x7f80;

struct NonFiniteFunctor {
  uint32_t exponent_mask;  // of one element, in the low bits (float64: of its high word)
  int element_bytes;       // 4 or 2 (float64 has 8: its high 32-bit word holds the exponent)

  GA_HOST_DEVICE GA_INLINE static NonFiniteFunctor float32() { return {kFloatExpMask, 4}; }
  GA_HOST_DEVICE GA_INLINE static NonFiniteFunctor float16() { return {kHalfExpMask, 2}; }
  GA_HOST_DEVICE GA_INLINE static NonFiniteFunctor bfloat16() { return {kBFloat16ExpMask, 2}; }
  GA_HOST_DEVICE GA_INLINE static NonFiniteFunctor float64() { return {0x7ff00000u, 8}; }

  // One element's bits (zero-extended to 32 bits; float64: its high word).
  GA_HOST_DEVICE GA_INLINE bool operator()(uint32_t bits) const {
    return (bits & exponent_mask) == exponent_mask;
  }
  // A float64 element's 64 bits.
  GA_HOST_DEVICE GA_INLINE bool float64_element(uint64_t bits) const {
    return (*this)(static_cast<uint32_t>(bits >> 32));
  }
  // A 32-bit word of the array: one float32, or two 16-bit values (little-endian halves).
  GA_HOST_DEVICE GA_INLINE bool any_in_word(uint32_t word) const {
    if (element_bytes == 4) return (*this)(word);
    return (*this)(word & 0xffffu) || (*this)(word >> 16);
  }
};

}  // namespace gpuaccel::kernels
