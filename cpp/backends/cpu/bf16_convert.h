// Bulk bfloat16 <-> float32 conversions for the CPU kernels that keep bf16 tensors in bf16
// (element-wise ops, pooling, casts): one call converts a run of elements with the widest
// instructions the CPU has, chosen at run time from cpu_info() (the library is built for plain
// x86-64, so nothing may assume AVX2 or AVX-512 at compile time).
//
// Every path gives the same bits as the scalar conversions of kernels/half_conversions.h
// (round to nearest even, subnormals rounded, not flushed; NaNs quieted), so results never
// depend on the ISA. AVX512-BF16's vcvtne2ps2bf16 rounds the same way except that it flushes
// subnormal inputs to zero; the vectors holding one take the integer path instead.
#pragma once

#include <cstdint>

#include "kernels/half_conversions.h"

namespace gpuaccel::cpu {

enum class Bf16ConvertIsa { kScalar, kAvx2, kAvx512, kAvx512Bf16 };

// The fastest path this CPU supports (cached after the first call).
Bf16ConvertIsa bf16_convert_isa();
const char* bf16_convert_isa_name(Bf16ConvertIsa isa);
// Whether this CPU can run `isa` (tests run every path the machine has).
bool bf16_convert_isa_supported(Bf16ConvertIsa isa);

// dst[i] = src[i] widened (exact). Runs on the calling thread.
void bf16_to_f32(const BFloat16* src, float* dst, int64_t n);
// dst[i] = src[i] rounded to nearest even. Runs on the calling thread.
void f32_to_bf16(const float* src, BFloat16* dst, int64_t n);

// The same with a chosen path (must be supported), for tests and benchmarks.
void bf16_to_f32(const BFloat16* src, float* dst, int64_t n, Bf16ConvertIsa isa);
void f32_to_bf16(const float* src, BFloat16* dst, int64_t n, Bf16ConvertIsa isa);

}  // namespace gpuaccel::cpu
