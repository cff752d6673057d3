// The conversion loops of bf16_convert.h. Each vector path is compiled for its ISA with a target
// attribute and only called when cpu_info() reports that ISA usable; tails and the scalar path
// use the bit formulas of kernels/half_conversions.h, which define the expected results.
#include "backends/cpu/bf16_convert.h"

#if defined(__x86_64__) || defined(__i386__)
#define GPUACCEL_BF16_X86 1
#include <immintrin.h>
// GCC 12's AVX-512 headers build "undefined" vectors that -Wmaybe-uninitialized reports at
// every inlined use (a known false positive of the headers, not of this file).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#else
#define GPUACCEL_BF16_X86 0
#endif

#include "core/cpu_info.h"
#include "core/errors.h"

namespace gpuaccel::cpu {
namespace {

void bf16_to_f32_scalar(const BFloat16* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = src[i].to_float();
}

void f32_to_bf16_scalar(const float* src, BFloat16* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16::from_float(src[i]);
}

#if GPUACCEL_BF16_X86
// ---- AVX2: 8 lanes of the integer formulas ----

__attribute__((target("avx2"))) inline __m256i widen_bits_avx2(__m128i b) {
  __m256i f = _mm256_slli_epi32(_mm256_cvtepu16_epi32(b), 16);
  const __m256i abs = _mm256_and_si256(f, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
  return _mm256_or_si256(f, _mm256_and_si256(nan, _mm256_set1_epi32(0x00400000)));
}

// f32 bits -> bf16 bits in the low half of each 32-bit lane.
__attribute__((target("avx2"))) inline __m256i narrow_bits_avx2(__m256i f) {
  const __m256i abs = _mm256_and_si256(f, _mm256_set1_epi32(0x7fffffff));
  const __m256i nan = _mm256_cmpgt_epi32(abs, _mm256_set1_epi32(0x7f800000));
  const __m256i high = _mm256_srli_epi32(f, 16);
  const __m256i lowest_kept = _mm256_and_si256(high, _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_srli_epi32(
      _mm256_add_epi32(_mm256_add_epi32(f, _mm256_set1_epi32(0x7fff)), lowest_kept), 16);
  const __m256i quiet = _mm256_or_si256(high, _mm256_set1_epi32(0x0040));
  return _mm256_blendv_epi8(rounded, quiet, nan);
}

__attribute__((target("avx2"))) void bf16_to_f32_avx2(const BFloat16* src, float* dst,
                                                      int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), widen_bits_avx2(b));
  }
  bf16_to_f32_scalar(src + i, dst + i, n - i);
}

__attribute__((target("avx2"))) void f32_to_bf16_avx2(const float* src, BFloat16* dst,
                                                      int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i lo = narrow_bits_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    const __m256i hi =
        narrow_bits_avx2(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 8)));
    // packus interleaves 128-bit halves: [lo0-3 hi0-3 lo4-7 hi4-7]; the permute restores order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(lo, hi), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), packed);
  }
  f32_to_bf16_scalar(src + i, dst + i, n - i);
}

// ---- AVX-512F: 16 lanes of the integer formulas ----

__attribute__((target("avx512f"))) inline __m512i widen_bits_avx512(__m256i b) {
  const __m512i f = _mm512_slli_epi32(_mm512_cvtepu16_epi32(b), 16);
  const __m512i abs = _mm512_and_si512(f, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_or_epi32(f, nan, f, _mm512_set1_epi32(0x00400000));
}

__attribute__((target("avx512f"))) inline __m256i narrow_bits_avx512(__m512i f) {
  const __m512i abs = _mm512_and_si512(f, _mm512_set1_epi32(0x7fffffff));
  const __mmask16 nan = _mm512_cmpgt_epu32_mask(abs, _mm512_set1_epi32(0x7f800000));
  const __m512i high = _mm512_srli_epi32(f, 16);
  const __m512i lowest_kept = _mm512_and_si512(high, _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_srli_epi32(
      _mm512_add_epi32(_mm512_add_epi32(f, _mm512_set1_epi32(0x7fff)), lowest_kept), 16);
  const __m512i quiet = _mm512_or_si512(high, _mm512_set1_epi32(0x0040));
  return _mm512_cvtepi32_epi16(_mm512_mask_blend_epi32(nan, rounded, quiet));
}

__attribute__((target("avx512f"))) void bf16_to_f32_avx512(const BFloat16* src, float* dst,
                                                           int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i));
    _mm512_storeu_si512(dst + i, widen_bits_avx512(b));
  }
  bf16_to_f32_scalar(src + i, dst + i, n - i);
}

__attribute__((target("avx512f"))) void f32_to_bf16_avx512(const float* src, BFloat16* dst,
                                                           int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i b = narrow_bits_avx512(_mm512_loadu_si512(src + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), b);
  }
  f32_to_bf16_scalar(src + i, dst + i, n - i);
}

// ---- AVX512-BF16: vcvtne2ps2bf16, 32 lanes per instruction ----

// Lanes holding an f32 subnormal (exponent 0, mantissa non-zero), which the instruction
// flushes to zero instead of rounding.
__attribute__((target("avx512f"))) inline __mmask16 subnormal_lanes(__m512i f) {
  const __m512i exponent = _mm512_and_si512(f, _mm512_set1_epi32(0x7f800000));
  const __m512i mantissa = _mm512_and_si512(f, _mm512_set1_epi32(0x007fffff));
  return _mm512_mask_cmpneq_epi32_mask(_mm512_cmpeq_epi32_mask(exponent, _mm512_setzero_si512()),
                                       mantissa, _mm512_setzero_si512());
}

__attribute__((target("avx512f,avx512bf16"))) void f32_to_bf16_avx512bf16(const float* src,
                                                                          BFloat16* dst,
                                                                          int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    const __m512 lo = _mm512_loadu_ps(src + i);
    const __m512 hi = _mm512_loadu_ps(src + i + 16);
    const __m512i lo_bits = _mm512_castps_si512(lo), hi_bits = _mm512_castps_si512(hi);
    if ((subnormal_lanes(lo_bits) | subnormal_lanes(hi_bits)) != 0) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i), narrow_bits_avx512(lo_bits));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + i + 16), narrow_bits_avx512(hi_bits));
      continue;
    }
    // The second operand fills the low half of the result.
    const __m512bh packed = _mm512_cvtne2ps_pbh(hi, lo);
    _mm512_storeu_si512(dst + i, reinterpret_cast<const __m512i&>(packed));
  }
  f32_to_bf16_avx512(src + i, dst + i, n - i);
}

#else
// Off x86 only the scalar path exists (supported() refuses the others), so these never run.
void bf16_to_f32_avx2(const BFloat16* s, float* d, int64_t n) { bf16_to_f32_scalar(s, d, n); }
void bf16_to_f32_avx512(const BFloat16* s, float* d, int64_t n) { bf16_to_f32_scalar(s, d, n); }
void f32_to_bf16_avx2(const float* s, BFloat16* d, int64_t n) { f32_to_bf16_scalar(s, d, n); }
void f32_to_bf16_avx512(const float* s, BFloat16* d, int64_t n) { f32_to_bf16_scalar(s, d, n); }
void f32_to_bf16_avx512bf16(const float* s, BFloat16* d, int64_t n) { f32_to_bf16_scalar(s, d, n); }
#endif

bool supported(Bf16ConvertIsa isa) {
  static const CpuInfo info = cpu_info();
  switch (isa) {
    case Bf16ConvertIsa::kScalar: return true;
    case Bf16ConvertIsa::kAvx2: return info.avx2;
    case Bf16ConvertIsa::kAvx512: return info.avx512f;
    case Bf16ConvertIsa::kAvx512Bf16: return info.avx512f && info.avx512_bf16;
  }
  return false;
}

void require(Bf16ConvertIsa isa) {
  if (!supported(isa)) {
    throw_error(ErrorCode::kInvalidArgument, "bf16_convert",
                std::string("this CPU cannot run the ") + bf16_convert_isa_name(isa) + " path");
  }
}

void widen(const BFloat16* src, float* dst, int64_t n, Bf16ConvertIsa isa) {
  switch (isa) {
    case Bf16ConvertIsa::kScalar: return bf16_to_f32_scalar(src, dst, n);
    case Bf16ConvertIsa::kAvx2: return bf16_to_f32_avx2(src, dst, n);
    // Widening is a shift: AVX512-BF16 has nothing faster than AVX-512F for it.
    case Bf16ConvertIsa::kAvx512:
    case Bf16ConvertIsa::kAvx512Bf16: return bf16_to_f32_avx512(src, dst, n);
  }
}

void narrow(const float* src, BFloat16* dst, int64_t n, Bf16ConvertIsa isa) {
  switch (isa) {
    case Bf16ConvertIsa::kScalar: return f32_to_bf16_scalar(src, dst, n);
    case Bf16ConvertIsa::kAvx2: return f32_to_bf16_avx2(src, dst, n);
    case Bf16ConvertIsa::kAvx512: return f32_to_bf16_avx512(src, dst, n);
    case Bf16ConvertIsa::kAvx512Bf16: return f32_to_bf16_avx512bf16(src, dst, n);
  }
}

}  // namespace

Bf16ConvertIsa bf16_convert_isa() {
  static const Bf16ConvertIsa best = [] {
    for (Bf16ConvertIsa isa : {Bf16ConvertIsa::kAvx512Bf16, Bf16ConvertIsa::kAvx512,
                               Bf16ConvertIsa::kAvx2}) {
      if (supported(isa)) return isa;
    }
    return Bf16ConvertIsa::kScalar;
  }();
  return best;
}

const char* bf16_convert_isa_name(Bf16ConvertIsa isa) {
  switch (isa) {
    case Bf16ConvertIsa::kScalar: return "scalar";
    case Bf16ConvertIsa::kAvx2: return "avx2";
    case Bf16ConvertIsa::kAvx512: return "avx512f";
    case Bf16ConvertIsa::kAvx512Bf16: return "avx512_bf16";
  }
  return "unknown";
}

bool bf16_convert_isa_supported(Bf16ConvertIsa isa) { return supported(isa); }

void bf16_to_f32(const BFloat16* src, float* dst, int64_t n, Bf16ConvertIsa isa) {
  require(isa);
  widen(src, dst, n, isa);
}

void f32_to_bf16(const float* src, BFloat16* dst, int64_t n, Bf16ConvertIsa isa) {
  require(isa);
  narrow(src, dst, n, isa);
}

void bf16_to_f32(const BFloat16* src, float* dst, int64_t n) {
  widen(src, dst, n, bf16_convert_isa());
}

void f32_to_bf16(const float* src, BFloat16* dst, int64_t n) {
  narrow(src, dst, n, bf16_convert_isa());
}

}  // namespace gpuaccel::cpu
