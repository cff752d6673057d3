// The operand bound check of fused_relu_guard.h, on the bits: a float's magnitude orders like
// its bits without the sign, and NaN and infinity have the largest exponent, so one integer
// compare per element rejects them and every value beyond the bound. bfloat16 is the top half
// of a float32, so the same compare works on its 16 bits.
#include "backends/cpu/fused_relu_guard.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

namespace gpuaccel::cpu {

namespace {

uint32_t float_bits(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof(bits));
  return bits;
}

// Whether every element of the contiguous view has magnitude <= limit (false for NaN). The
// largest magnitude's bits by an unsigned max, which vectorizes (a flag or-reduction did not).
bool within(const TensorView& v, float limit) {
  const int64_t n = v.numel();
  const uint32_t limit_bits = float_bits(limit);
  if (v.dtype == DType::kFloat32) {
    const uint32_t* p = static_cast<const uint32_t*>(v.data);
    uint32_t largest = 0;
    for (int64_t i = 0; i < n; ++i) largest = std::max(largest, p[i] & 0x7fffffffu);
    return largest <= limit_bits;
  }
  const uint16_t* p = static_cast<const uint16_t*>(v.data);
  uint16_t largest = 0;
  for (int64_t i = 0; i < n; ++i) largest = std::max<uint16_t>(largest, p[i] & 0x7fffu);
  return largest <= static_cast<uint16_t>(limit_bits >> 16);  // truncated: <= limit
}

bool checkable(const TensorView& v) {
  return (v.dtype == DType::kFloat32 || v.dtype == DType::kBFloat16) && v.is_contiguous();
}

}  // namespace

bool fused_relu_is_exact(const TensorView& a, const TensorView& b, const TensorView* bias,
                         int64_t reduction) {
  if (!checkable(a) || !checkable(b) || (bias != nullptr && !checkable(*bias))) return false;
  // Each product is at most FLT_MAX / (2 * reduction), their sum at most FLT_MAX / 2, plus a
  // bias of at most FLT_MAX / 2: finite in float32, where oneDNN accumulates.
  const float operand_limit =
      static_cast<float>(std::sqrt(static_cast<double>(FLT_MAX) / (2.0 * static_cast<double>(reduction > 0 ? reduction : 1))));
  return within(a, operand_limit) && within(b, operand_limit) &&
         (bias == nullptr || within(*bias, FLT_MAX / 2));
}

}  // namespace gpuaccel::cpu
