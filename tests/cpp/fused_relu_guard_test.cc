// Tests of fused_relu_is_exact (backends/cpu/fused_relu_guard.h): ordinary operands pass (so the
// fused relu is what a step runs), and every operand that could make a NaN or infinite output
// (NaN, infinity, a magnitude beyond the bound, in any operand, float32 or bfloat16) sends the
// op to the unfused path, as do layouts the check does not read (strided, float16).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/fused_relu_guard.h"

namespace gpuaccel::cpu {
namespace {

// A contiguous 1-D view of `bits` (float32 values, or bfloat16 as the top 16 bits of each).
struct Operand {
  std::vector<float> f32;
  std::vector<uint16_t> bf16;
  TensorView view(DType dtype) {
    TensorView v;
    v.dtype = dtype;
    v.ndim = 1;
    v.shape[0] = static_cast<int64_t>(f32.size());
    v.strides[0] = 1;
    if (dtype == DType::kFloat32) {
      v.data = f32.data();
    } else {
      bf16.resize(f32.size());
      for (size_t i = 0; i < f32.size(); ++i) {
        uint32_t bits = 0;
        std::memcpy(&bits, &f32[i], sizeof(bits));
        bf16[i] = static_cast<uint16_t>(bits >> 16);  // truncation: enough for these values
      }
      v.data = bf16.data();
    }
    return v;
  }
};

Operand ordinary(size_t n, float scale) {
  Operand o;
  for (size_t i = 0; i < n; ++i) o.f32.push_back(scale * (static_cast<float>(i % 7) - 3.0f));
  return o;
}

TEST(FusedReluGuard, OrdinaryOperandsTakeTheFusedPath) {
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    Operand x = ordinary(100, 1e3f), w = ordinary(37, 0.05f), b = ordinary(5, 10.0f);
    const TensorView bv = b.view(dtype);
    EXPECT_TRUE(fused_relu_is_exact(x.view(dtype), w.view(dtype), &bv, 576));
    EXPECT_TRUE(fused_relu_is_exact(x.view(dtype), w.view(dtype), nullptr, 576));
  }
}

TEST(FusedReluGuard, NonFiniteOrHugeOperandsTakeTheUnfusedPath) {
  const float bound = static_cast<float>(std::sqrt(FLT_MAX / (2.0 * 576)));
  const float bad_values[] = {std::numeric_limits<float>::quiet_NaN(),
                              -std::numeric_limits<float>::quiet_NaN(),
                              std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity(), 4.0f * bound, -4.0f * bound};
  for (DType dtype : {DType::kFloat32, DType::kBFloat16}) {
    for (float bad : bad_values) {
      for (int which = 0; which < 3; ++which) {
        Operand x = ordinary(100, 1.0f), w = ordinary(37, 1.0f), b = ordinary(5, 1.0f);
        Operand& target = which == 0 ? x : which == 1 ? w : b;
        target.f32[3] = which == 2 && std::isfinite(bad) ? FLT_MAX : bad;  // a bias may be large
        const TensorView bv = b.view(dtype);
        EXPECT_FALSE(fused_relu_is_exact(x.view(dtype), w.view(dtype), &bv, 576))
            << "value " << bad << " in operand " << which << " dtype " << static_cast<int>(dtype);
      }
    }
    // Just inside the bound is still exact; a bias of FLT_MAX / 4 too.
    Operand x = ordinary(10, 1.0f), w = ordinary(10, 1.0f), b = ordinary(3, 1.0f);
    x.f32[0] = bound * 0.5f;
    w.f32[0] = -bound * 0.5f;
    b.f32[0] = FLT_MAX / 4;
    const TensorView bv = b.view(dtype);
    EXPECT_TRUE(fused_relu_is_exact(x.view(dtype), w.view(dtype), &bv, 576));
  }
}

TEST(FusedReluGuard, LayoutsItDoesNotReadTakeTheUnfusedPath) {
  Operand x = ordinary(10, 1.0f), w = ordinary(10, 1.0f);
  TensorView strided = x.view(DType::kFloat32);
  strided.shape[0] = 5;
  strided.strides[0] = 2;
  EXPECT_FALSE(fused_relu_is_exact(strided, w.view(DType::kFloat32), nullptr, 4));
  TensorView half = x.view(DType::kFloat32);
  half.dtype = DType::kFloat16;
  half.shape[0] = 10;
  EXPECT_FALSE(fused_relu_is_exact(half, w.view(DType::kFloat32), nullptr, 4));
}

}  // namespace
}  // namespace gpuaccel::cpu
