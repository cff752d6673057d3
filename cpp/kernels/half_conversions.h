// Exact float16 / bfloat16 <-> float32 conversions on raw bits, written once for host and device
// so the CPU backend (tested here) and the CUDA kernels (not runnable here) round identically
// (the CUDA kernels use the hardware's conversions, which round the same way: see the
// float-typed entry points below).
// Only integer arithmetic is used, so the results do not depend on the FPU's rounding mode or on
// flush-to-zero / denormals-are-zero settings.
//
// Rules (IEEE 754-2008, roundTiesToEven):
//   * narrowing rounds to nearest, ties to even; a finite value whose rounded magnitude would
//     exceed the largest finite number becomes infinity (f16: |x| >= 65520; bf16: |x| >=
//     0x1.ffp127 + half an ulp, i.e. bits >= 0x7f7f8000);
//   * subnormals are produced and consumed (f16 both ways; f32 subnormals become bf16
//     subnormals, correctly rounded);
//   * zeros keep their sign; infinities stay infinities;
//   * NaNs stay NaNs with their sign and the high bits of their payload, and are quieted (the
//     quiet bit is set) in both directions, so rounding a NaN payload can never produce inf.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/host_device.h"

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#endif

namespace gpuaccel {

// ---- bit casts usable from host and device code ----
GA_HOST_DEVICE GA_INLINE uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

GA_HOST_DEVICE GA_INLINE uint64_t double_to_bits(double f) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(f));
#else
  uint64_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

GA_HOST_DEVICE GA_INLINE float bits_to_float(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
#endif
}

// float64 -> float32 rounded to odd: the float next to `v` toward zero, its last mantissa bit
// set when the conversion was inexact. Rounding that float to float16 or bfloat16 (11 or 8
// significant bits, far fewer than float's 24) gives the nearest-even rounding of `v` itself;
// going through the nearest float instead can round twice the wrong way (1 + 2^-11 + 2^-40
// would become 1, not 1 + 2^-10). Overflow gives FLT_MAX, which the narrower types then round
// to infinity as `v` would.
GA_HOST_DEVICE GA_INLINE float double_to_float_round_to_odd(double v) {
  const float nearest = static_cast<float>(v);
  if (static_cast<double>(nearest) == v || v != v) return nearest;  // exact, or NaN
  uint32_t bits = float_to_bits(nearest);
  const bool away_from_zero = v > 0 ? static_cast<double>(nearest) > v : static_cast<double>(nearest) < v;
  if (away_from_zero) bits -= 1;  // one step toward zero (sign-magnitude: the magnitude drops)
  return bits_to_float(bits | 1u);
}

// ---- float16 (1 sign, 5 exponent bits with bias 15, 10 mantissa bits) ----
constexpr uint16_t kHalfSignMask = 0x8000;
constexpr uint16_t kHalfExpMask = 0x7c00;
constexpr uint16_t kHalfMantMask = 0x03ff;
constexpr uint16_t kHalfQuietBit = 0x0200;

// ---- float32 (1 sign, 8 exponent bits with bias 127, 23 mantissa bits) ----
constexpr uint32_t kFloatSignMask = 0x80000000u;
constexpr uint32_t kFloatAbsMask = 0x7fffffffu;
constexpr uint32_t kFloatExpMask = 0x7f800000u;
constexpr uint32_t kFloatMantMask = 0x007fffffu;
constexpr uint32_t kFloatQuietBit = 0x00400000u;

// ---- bfloat16 (the top 16 bits of a float32) ----
constexpr uint16_t kBFloat16QuietBit = 0x0040;

// f16 bits -> f32 bits. Exact for every non-NaN input (f32 holds every f16 value).
GA_HOST_DEVICE GA_INLINE constexpr uint32_t half_bits_to_float_bits(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & kHalfSignMask) << 16;
  const uint32_t exp = (h & kHalfExpMask) >> 10;
  uint32_t mant = h & kHalfMantMask;
  if (exp == 0x1f) {
    // Inf keeps a zero mantissa; NaN keeps its payload (shifted to the top) and is quieted.
    if (mant == 0) return sign | kFloatExpMask;
    return sign | kFloatExpMask | kFloatQuietBit | (mant << 13);
  }
  if (exp != 0) {
    // Normal: rebias the exponent from 15 to 127.
    return sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  }
  if (mant == 0) return sign;  // signed zero
  // Subnormal: value = mant * 2^-24. Normalize so the leading 1 sits at bit 10; each shift
  // lowers the exponent by one, starting from that of 2^-14 (the smallest normal).
  int32_t e = 127 - 14;
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return sign | (static_cast<uint32_t>(e) << 23) | ((mant & kHalfMantMask) << 13);
}

// f32 bits -> f16 bits, round to nearest even.
GA_HOST_DEVICE GA_INLINE constexpr uint16_t float_bits_to_half_bits(uint32_t f) {
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & kHalfSignMask);
  const uint32_t abs = f & kFloatAbsMask;
  if (abs > kFloatExpMask) {
    // NaN: keep the 10 high payload bits and set the quiet bit, so the result is never inf.
    return static_cast<uint16_t>(sign | kHalfExpMask | kHalfQuietBit |
                                 ((abs & kFloatMantMask) >> 13));
  }
  // 65520 = 65504 (largest f16, odd mantissa) + half an ulp (16): the tie rounds to even, which
  // is the next binade, i.e. overflow. Everything at or above it (inf included) becomes inf.
  constexpr uint32_t kOverflowThreshold = 0x477ff000u;  // 65520.0f
  if (abs >= kOverflowThreshold) return static_cast<uint16_t>(sign | kHalfExpMask);
  constexpr uint32_t kMinNormal = 0x38800000u;  // 2^-14, the smallest normal f16
  if (abs >= kMinNormal) {
    // Normal result: drop 13 mantissa bits and rebias the exponent (127 -> 15). A carry out of
    // the mantissa correctly bumps the exponent; it cannot reach 31 below the threshold above.
    uint32_t h = (abs >> 13) - ((127u - 15u) << 10);
    const uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }
  // Subnormal (or zero) result: f16 value = m * 2^-24 with m in [0, 1024]. The f32 value is
  // M * 2^(e - 150) with M the 24-bit significand, so m = M / 2^(126 - e).
  const uint32_t e = abs >> 23;
  const uint32_t shift = 126u - e;  // >= 14 here
  // Below 2^-25 (shift > 24, since M < 2^24) the value is under half the smallest subnormal:
  // it rounds to zero. f32 subnormals (e == 0) land here too.
  if (shift > 24u) return sign;
  const uint32_t significand = (abs & kFloatMantMask) | 0x00800000u;
  uint32_t m = significand >> shift;
  const uint32_t rest = significand & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1u);
  if (rest > half || (rest == half && (m & 1u))) ++m;  // m == 1024 encodes 2^-14: still right
  return static_cast<uint16_t>(sign | m);
}

// bf16 bits -> f32 bits: the bf16 bits are the top half of the f32. NaNs are quieted.
GA_HOST_DEVICE GA_INLINE constexpr uint32_t bfloat16_bits_to_float_bits(uint16_t b) {
  uint32_t f = static_cast<uint32_t>(b) << 16;
  if ((f & kFloatAbsMask) > kFloatExpMask) f |= kFloatQuietBit;
  return f;
}

// f32 bits -> bf16 bits, round to nearest even on the low 16 bits. Because the f32 encoding is
// monotonic in magnitude across subnormals, normals and infinity, adding "half an ulp minus one,
// plus the lowest kept bit" and truncating rounds every finite value (subnormals included)
// correctly, and carries into the exponent (up to inf) exactly when IEEE says.
GA_HOST_DEVICE GA_INLINE constexpr uint16_t float_bits_to_bfloat16_bits(uint32_t f) {
  if ((f & kFloatAbsMask) > kFloatExpMask) {
    // NaN: truncate the payload and set the quiet bit, so rounding cannot turn it into inf.
    return static_cast<uint16_t>((f >> 16) | kBFloat16QuietBit);
  }
  const uint32_t lowest_kept_bit = (f >> 16) & 1u;
  return static_cast<uint16_t>((f + 0x7fffu + lowest_kept_bit) >> 16);
}

// ---- the float-typed entry points ----
// On the device these are CUDA's conversions (one cvt instruction each on sm_80+; cuda_bf16.h's
// own integer code for float -> bfloat16 on sm_75), which round exactly as the bit functions
// above: to nearest even, overflow to inf, subnormals kept (no -ftz in our builds). They differ
// only for NaN: CUDA returns its canonical NaN (0x7fff / 0x7fffffff) where the host keeps the
// sign and high payload bits; a NaN stays a NaN either way. The host keeps the bit functions,
// which tests/cpp/dtype_test.cc checks on every pattern.
GA_HOST_DEVICE GA_INLINE float half_bits_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
  return __half2float(__ushort_as_half(h));
#else
  return bits_to_float(half_bits_to_float_bits(h));
#endif
}
GA_HOST_DEVICE GA_INLINE uint16_t float_to_half_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __half_as_ushort(__float2half_rn(f));
#else
  return float_bits_to_half_bits(float_to_bits(f));
#endif
}
GA_HOST_DEVICE GA_INLINE float bfloat16_bits_to_float(uint16_t b) {
#if defined(__CUDA_ARCH__)
  return __bfloat162float(__ushort_as_bfloat16(b));
#else
  return bits_to_float(bfloat16_bits_to_float_bits(b));
#endif
}
GA_HOST_DEVICE GA_INLINE uint16_t float_to_bfloat16_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __bfloat16_as_ushort(__float2bfloat16_rn(f));
#else
  return float_bits_to_bfloat16_bits(float_to_bits(f));
#endif
}

// ---- 16-bit storage types: plain bits, no arithmetic (compute happens in f32) ----
struct Half {
  uint16_t bits;
  GA_HOST_DEVICE GA_INLINE static Half from_float(float f) { return Half{float_to_half_bits(f)}; }
  GA_HOST_DEVICE GA_INLINE float to_float() const { return half_bits_to_float(bits); }
};

struct BFloat16 {
  uint16_t bits;
  GA_HOST_DEVICE GA_INLINE static BFloat16 from_float(float f) {
    return BFloat16{float_to_bfloat16_bits(f)};
  }
  GA_HOST_DEVICE GA_INLINE float to_float() const { return bfloat16_bits_to_float(bits); }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2, "16-bit storage types");

// Element functors for casts, usable by the CPU loops and CUDA kernels alike.
struct FloatToHalf {
  GA_HOST_DEVICE GA_INLINE uint16_t operator()(float f) const { return float_to_half_bits(f); }
};
struct HalfToFloat {
  GA_HOST_DEVICE GA_INLINE float operator()(uint16_t h) const { return half_bits_to_float(h); }
};
struct FloatToBFloat16 {
  GA_HOST_DEVICE GA_INLINE uint16_t operator()(float f) const {
    return float_to_bfloat16_bits(f);
  }
};
struct BFloat16ToFloat {
  GA_HOST_DEVICE GA_INLINE float operator()(uint16_t b) const {
    return bfloat16_bits_to_float(b);
  }
};

}  // namespace gpuaccel
