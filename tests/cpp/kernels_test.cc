// Unit tests of the element functors in cpp/kernels on the CPU. These bodies also run on the GPU
// (which no machine here has), so this is where their arithmetic is checked: forward values
// against std:: math in double, gradients against central finite differences, Philox against the
// published known-answer vectors, and the statistics of the generated numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "kernels/binary_functors.h"
#include "kernels/dropout_functor.h"
#include "kernels/nonfinite_functor.h"
#include "kernels/philox.h"
#include "kernels/reduce_functors.h"
#include "kernels/unary_functors.h"

namespace gpuaccel::kernels {
namespace {

// Reference forward values in double, written independently of the functors.
double ref_neg(double x) { return -x; }
double ref_exp(double x) { return std::exp(x); }
double ref_log(double x) { return std::log(x); }
double ref_sqrt(double x) { return std::sqrt(x); }
double ref_rsqrt(double x) { return 1.0 / std::sqrt(x); }
double ref_abs(double x) { return std::fabs(x); }
double ref_square(double x) { return x * x; }
double ref_reciprocal(double x) { return 1.0 / x; }
double ref_relu(double x) { return std::max(x, 0.0); }
double ref_sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double ref_tanh(double x) { return std::tanh(x); }
double ref_gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }

double ref_sin(double x) { return std::sin(x); }
double ref_cos(double x) { return std::cos(x); }
double ref_tan(double x) { return std::tan(x); }
double ref_asin(double x) { return std::asin(x); }
double ref_acos(double x) { return std::acos(x); }
double ref_atan(double x) { return std::atan(x); }
double ref_sinh(double x) { return std::sinh(x); }
double ref_cosh(double x) { return std::cosh(x); }
double ref_asinh(double x) { return std::asinh(x); }
double ref_acosh(double x) { return std::acosh(x); }
double ref_atanh(double x) { return std::atanh(x); }
double ref_erf(double x) { return std::erf(x); }

// Inputs in each op's domain, avoiding kinks (0 for abs/relu) for finite differences.
const std::vector<double> kAnyInputs = {-7.5, -3.0, -1.25, -0.6, -0.01, 0.02, 0.3, 0.9,
                                        1.0,  2.5,  4.0,   8.25};
const std::vector<double> kPositiveInputs = {0.01, 0.125, 0.5, 0.9, 1.0, 1.7, 3.0, 10.0, 123.0};
const std::vector<double> kUnitInputs = {-0.97, -0.6, -0.25, -0.01, 0.02, 0.3, 0.75, 0.96};
const std::vector<double> kBelowPoleInputs = {-1.5, -1.0, -0.4, -0.01, 0.02, 0.5, 1.2, 1.5};
const std::vector<double> kAboveOneInputs = {1.01, 1.2, 2.0, 3.5, 10.0, 123.0};
const std::vector<double> kModerateInputs = {-6.0, -3.0, -1.25, -0.6, -0.01, 0.02, 0.3, 0.9,
                                             1.0,  2.5,  4.0,   8.25};

template <typename Op>
void check_op(const char* name, Op op, double (*ref)(double), const std::vector<double>& inputs) {
  SCOPED_TRACE(name);
  for (double x : inputs) {
    SCOPED_TRACE(x);
    // Forward: double computation agrees with std:: to a few ulp; float to float precision.
    const double yd = op(x);
    EXPECT_NEAR(yd, ref(x), 1e-14 * std::max(1.0, std::fabs(ref(x))));
    const float yf = op(static_cast<float>(x));
    EXPECT_NEAR(yf, ref(static_cast<float>(x)), 4e-7 * std::max(1.0, std::fabs(ref(x))));

    // Gradient: central finite difference in double, step scaled to x.
    const double h = 1e-6 * std::max(1.0, std::fabs(x));
    const double fd = (ref(x + h) - ref(x - h)) / (2 * h);
    const double dy = 0.75;
    const double g = op.backward(x, yd, dy);
    EXPECT_NEAR(g, dy * fd, 1e-6 * std::max(1.0, std::fabs(dy * fd)));
    // Same gradient in float.
    const float gf = op.backward(static_cast<float>(x), yf, 0.75f);
    EXPECT_NEAR(gf, g, 2e-5 * std::max(1.0, std::fabs(g)));
  }
}

TEST(KernelsUnary, EveryOpForwardAndGradient) {
  check_op("neg", NegFunctor{}, ref_neg, kAnyInputs);
  check_op("exp", ExpFunctor{}, ref_exp, kAnyInputs);
  check_op("log", LogFunctor{}, ref_log, kPositiveInputs);
  check_op("sqrt", SqrtFunctor{}, ref_sqrt, kPositiveInputs);
  check_op("rsqrt", RsqrtFunctor{}, ref_rsqrt, kPositiveInputs);
  check_op("abs", AbsFunctor{}, ref_abs, kAnyInputs);
  check_op("square", SquareFunctor{}, ref_square, kAnyInputs);
  check_op("reciprocal", ReciprocalFunctor{}, ref_reciprocal, kPositiveInputs);
  check_op("relu", ReluFunctor{}, ref_relu, kAnyInputs);
  check_op("sigmoid", SigmoidFunctor{}, ref_sigmoid, kAnyInputs);
  check_op("tanh", TanhFunctor{}, ref_tanh, kAnyInputs);
  check_op("gelu", GeluFunctor{}, ref_gelu, kAnyInputs);
  check_op("sin", SinFunctor{}, ref_sin, kAnyInputs);
  check_op("cos", CosFunctor{}, ref_cos, kAnyInputs);
  check_op("tan", TanFunctor{}, ref_tan, kBelowPoleInputs);
  check_op("asin", AsinFunctor{}, ref_asin, kUnitInputs);
  check_op("acos", AcosFunctor{}, ref_acos, kUnitInputs);
  check_op("atan", AtanFunctor{}, ref_atan, kAnyInputs);
  check_op("sinh", SinhFunctor{}, ref_sinh, kModerateInputs);
  check_op("cosh", CoshFunctor{}, ref_cosh, kModerateInputs);
  check_op("asinh", AsinhFunctor{}, ref_asinh, kAnyInputs);
  check_op("acosh", AcoshFunctor{}, ref_acosh, kAboveOneInputs);
  check_op("atanh", AtanhFunctor{}, ref_atanh, kUnitInputs);
  check_op("erf", ErfFunctor{}, ref_erf, kAnyInputs);
}

TEST(KernelsUnary, TrigonometricDomainsAndLargeArguments) {
  // Outside the domain: NaN (NumPy, TF and PyTorch agree).
  EXPECT_TRUE(std::isnan(AsinFunctor{}(1.5f)));
  EXPECT_TRUE(std::isnan(AcosFunctor{}(-1.0001)));
  EXPECT_TRUE(std::isnan(AcoshFunctor{}(0.5f)));
  EXPECT_TRUE(std::isnan(AtanhFunctor{}(2.0f)));
  // At the edges: exact values, infinite gradients.
  EXPECT_EQ(AsinFunctor{}(1.0), std::asin(1.0));
  EXPECT_EQ(AcosFunctor{}(1.0f), 0.0f);
  EXPECT_EQ(AcoshFunctor{}(1.0f), 0.0f);
  EXPECT_TRUE(std::isinf(AtanhFunctor{}(1.0f)));
  EXPECT_TRUE(std::isinf(AsinFunctor{}.backward(1.0f, AsinFunctor{}(1.0f), 1.0f)));
  EXPECT_TRUE(std::isinf(AcoshFunctor{}.backward(1.0f, 0.0f, 1.0f)));
  EXPECT_TRUE(std::isinf(AtanhFunctor{}.backward(-1.0f, AtanhFunctor{}(-1.0f), 1.0f)));
  // Large arguments are reduced exactly (a polynomial after x - 2 pi round(x / 2 pi) is not).
  for (double x : {1.0e4, 123456.789, 3.0e7, 1.0e22}) {
    const float xf = static_cast<float>(x);
    EXPECT_NEAR(SinFunctor{}(xf), std::sin(static_cast<double>(xf)), 2e-7);
    EXPECT_NEAR(CosFunctor{}(xf), std::cos(static_cast<double>(xf)), 2e-7);
  }
  // asinh's gradient stays finite and right where x^2 overflows float.
  EXPECT_NEAR(AsinhFunctor{}.backward(1e30f, AsinhFunctor{}(1e30f), 1.0f), 1.0 / double(1e30f),
              1e-5 / double(1e30f));
  EXPECT_EQ(ErfFunctor{}(-40.0f), -1.0f);
}

TEST(KernelsUnary, EdgeCases) {
  // Sigmoid never overflows and saturates cleanly.
  EXPECT_EQ(SigmoidFunctor{}(-1000.0f), 0.0f);
  EXPECT_EQ(SigmoidFunctor{}(1000.0f), 1.0f);
  EXPECT_NEAR(SigmoidFunctor{}(-88.0f), std::exp(-88.0), 1e-45);
  // Subgradients at the kinks are 0; relu keeps NaN.
  EXPECT_EQ(ReluFunctor{}.backward(0.0f, 0.0f, 1.0f), 0.0f);
  EXPECT_EQ(AbsFunctor{}.backward(0.0f, 0.0f, 1.0f), 0.0f);
  EXPECT_EQ(AbsFunctor{}.backward(-2.0f, 2.0f, 1.5f), -1.5f);
  EXPECT_TRUE(std::isnan(ReluFunctor{}(std::nanf(""))));
  // gelu: known values (x * Phi(x)).
  EXPECT_NEAR(GeluFunctor{}(1.0), 0.8413447460685429, 1e-15);
  EXPECT_NEAR(GeluFunctor{}(-1.0), -0.15865525393145707, 1e-15);
  EXPECT_EQ(GeluFunctor{}(0.0f), 0.0f);
  // Integers for neg/abs/square.
  EXPECT_EQ(NegFunctor{}(int32_t{7}), -7);
  EXPECT_EQ(AbsFunctor{}(int64_t{-9}), 9);
  EXPECT_EQ(SquareFunctor{}(int32_t{-12}), 144);
  // The backward adapter forwards.
  EXPECT_EQ(UnaryBackwardFunctor<SquareFunctor>{}(3.0f, 9.0f, 2.0f), 12.0f);
}

TEST(KernelsBinary, Values) {
  EXPECT_EQ(AddFunctor{}(1.5f, 2.25f), 3.75f);
  EXPECT_EQ(SubFunctor{}(1.5f, 2.25f), -0.75f);
  EXPECT_EQ(MulFunctor{}(int32_t{-3}, int32_t{7}), -21);
  EXPECT_EQ(DivFunctor{}(1.0, 8.0), 0.125);
  EXPECT_DOUBLE_EQ(PowFunctor{}(2.0, 0.5), std::sqrt(2.0));
  EXPECT_FLOAT_EQ(PowFunctor{}(3.0f, 4.0f), 81.0f);
  EXPECT_TRUE(std::isnan(PowFunctor{}(-2.0f, 0.5f)));
  EXPECT_EQ(MaximumFunctor{}(int64_t{-3}, int64_t{2}), 2);
  EXPECT_EQ(MinimumFunctor{}(-3.0f, 2.0f), -3.0f);
  // NaN propagates from either side (np.maximum, not np.fmax).
  const float nan = std::nanf("");
  EXPECT_TRUE(std::isnan(MaximumFunctor{}(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(MaximumFunctor{}(1.0f, nan)));
  EXPECT_TRUE(std::isnan(MinimumFunctor{}(nan, 1.0f)));
  EXPECT_TRUE(std::isnan(MinimumFunctor{}(1.0f, nan)));
  EXPECT_TRUE(EqualFunctor{}(2, 2));
  EXPECT_FALSE(EqualFunctor{}(nan, nan));
  EXPECT_TRUE(GreaterFunctor{}(3.0f, 2.0f));
  EXPECT_FALSE(GreaterFunctor{}(2.0f, 2.0f));
  EXPECT_TRUE(LessFunctor{}(int64_t{-1}, int64_t{0}));
  // atan2(a, b): the angle of (b, a), every quadrant and the signed zeros.
  EXPECT_DOUBLE_EQ(Atan2Functor{}(1.0, -1.0), 3 * std::atan(1.0));
  EXPECT_DOUBLE_EQ(Atan2Functor{}(-1.0, -1.0), -3 * std::atan(1.0));
  EXPECT_EQ(Atan2Functor{}(0.0f, -1.0f), static_cast<float>(M_PI));
  EXPECT_EQ(Atan2Functor{}(-0.0f, -1.0f), -static_cast<float>(M_PI));
  EXPECT_EQ(Atan2Functor{}(2.0f, 0.0f), static_cast<float>(M_PI / 2));
  EXPECT_TRUE(std::isnan(Atan2Functor{}(nan, 1.0f)));
}

// Known-answer vectors for Philox-4x32-10 published with the paper's reference implementation.
TEST(KernelsPhilox, KnownAnswerVectors) {
  struct Vector {
    uint32_t ctr[4];
    uint32_t key[2];
    uint32_t expected[4];
  };
  const Vector vectors[] = {
      {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
      {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
       {0xffffffffu, 0xffffffffu},
       {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
      {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
       {0xa4093822u, 0x299f31d0u},
       {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
  };
  for (const Vector& v : vectors) {
    const PhiloxBlock out =
        philox4x32_10(PhiloxBlock{{v.ctr[0], v.ctr[1], v.ctr[2], v.ctr[3]}}, v.key[0], v.key[1]);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(out.v[i], v.expected[i]) << "word " << i;
  }
}

TEST(KernelsPhilox, ElementMapping) {
  // Element j uses word j % 4 of block j / 4, keyed by the seed's two halves.
  const uint64_t seed = 0x0123456789abcdefull;
  for (uint64_t j : {0ull, 1ull, 2ull, 3ull, 4ull, 4097ull, (1ull << 34) + 6}) {
    const uint64_t block = j / 4;
    const PhiloxBlock b = philox4x32_10(
        PhiloxBlock{{static_cast<uint32_t>(block), static_cast<uint32_t>(block >> 32), 0, 0}},
        0x89abcdefu, 0x01234567u);
    EXPECT_EQ(philox_uniform(seed, j), static_cast<float>(b.v[j % 4] >> 8) / 16777216.0f);
  }
  // Different seeds, different streams.
  EXPECT_NE(philox_uniform(1, 0), philox_uniform(2, 0));
  // The functors add the offset.
  EXPECT_EQ((UniformFunctor{7, 100, kUniformBitsFloat32}(5)), philox_uniform(7, 105));
  EXPECT_EQ((NormalFunctor{7, 100}(5)), philox_normal(7, 105));
}

TEST(KernelsPhilox, UniformRangeAndGrid) {
  EXPECT_EQ(uniform_from_word(0), 0.0f);
  EXPECT_EQ(uniform_from_word(0xffffffffu), 1.0f - std::ldexp(1.0f, -24));
  EXPECT_EQ(uniform_from_word(0xffffffffu, kUniformBitsFloat16), 1.0f - std::ldexp(1.0f, -11));
  EXPECT_EQ(uniform_from_word(0xffffffffu, kUniformBitsBFloat16), 1.0f - std::ldexp(1.0f, -8));
  double sum = 0, sum_sq = 0;
  const int n = 1 << 20;
  for (int i = 0; i < n; ++i) {
    const float u = philox_uniform(42, static_cast<uint64_t>(i));
    ASSERT_GE(u, 0.0f);
    ASSERT_LT(u, 1.0f);
    sum += u;
    sum_sq += static_cast<double>(u) * u;
  }
  const double mean = sum / n, var = sum_sq / n - mean * mean;
  // Mean 1/2 (std of the estimate 0.29 / 1024), variance 1/12.
  EXPECT_NEAR(mean, 0.5, 5 * 0.2887 / 1024);
  EXPECT_NEAR(var, 1.0 / 12, 1e-3);
}

TEST(KernelsPhilox, NormalMoments) {
  const int n = 1000000;
  double s1 = 0, s2 = 0, s3 = 0, s4 = 0;
  int beyond3 = 0;
  for (int i = 0; i < n; ++i) {
    const double z = philox_normal(2024, static_cast<uint64_t>(i));
    ASSERT_TRUE(std::isfinite(z));
    s1 += z;
    s2 += z * z;
    s3 += z * z * z;
    s4 += z * z * z * z;
    if (std::fabs(z) > 3) ++beyond3;
  }
  const double mean = s1 / n, var = s2 / n - mean * mean;
  // Standard errors: mean 1/sqrt(n) = 0.001, variance sqrt(2/n) = 0.0014; 5 sigma.
  EXPECT_NEAR(mean, 0.0, 0.005);
  EXPECT_NEAR(std::sqrt(var), 1.0, 0.0035);
  EXPECT_NEAR(s3 / n, 0.0, 0.02);  // skewness 0 (se sqrt(15/n))
  EXPECT_NEAR(s4 / n, 3.0, 0.05);  // kurtosis 3 (se sqrt(96/n))
  // P(|z| > 3) = 0.0026998.
  EXPECT_NEAR(beyond3 / static_cast<double>(n), 0.0026998, 0.0003);
}

TEST(KernelsDropout, RateScaleAndBackward) {
  const double rate = 0.3;
  const DropoutFunctor f = DropoutFunctor::make(rate, 99, 0);
  EXPECT_FLOAT_EQ(f.scale, static_cast<float>(1 / 0.7));
  const int n = 1000000;
  int kept = 0;
  for (int i = 0; i < n; ++i) {
    const DropoutResult r = f(i, 2.0f);
    ASSERT_EQ(r.keep, f.keep(i) ? 1 : 0);
    ASSERT_EQ(r.y, r.keep ? 2.0f * f.scale : 0.0f);
    kept += r.keep;
  }
  // Keep probability 0.7; std of the estimate sqrt(0.21 / n) = 0.00046.
  EXPECT_NEAR(kept / static_cast<double>(n), 0.7, 0.0025);
  const DropoutBackwardFunctor b{f.scale};
  EXPECT_EQ(b(3.0f, 1), 3.0f * f.scale);
  EXPECT_EQ(b(3.0f, 0), 0.0f);
  // Rate 0 keeps everything, unscaled.
  const DropoutFunctor none = DropoutFunctor::make(0.0, 1, 0);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(none(i, 1.5f).y, 1.5f);
}

TEST(KernelsReduce, Combiners) {
  EXPECT_EQ(SumCombiner<double>::identity(), 0.0);
  EXPECT_EQ(SumCombiner<int64_t>{}(3, 4), 7);
  EXPECT_EQ(MaxCombiner<float>::identity(), -INFINITY);
  EXPECT_EQ(MinCombiner<double>::identity(), INFINITY);
  EXPECT_EQ(MaxCombiner<int32_t>::identity(), INT32_MIN);
  EXPECT_EQ(MinCombiner<int64_t>::identity(), INT64_MAX);
  EXPECT_EQ(MaxCombiner<double>{}(1.0, 2.0), 2.0);
  EXPECT_EQ(MinCombiner<double>{}(1.0, 2.0), 1.0);
  EXPECT_TRUE(std::isnan(MaxCombiner<double>{}(NAN, 2.0)));
  EXPECT_TRUE(std::isnan(MaxCombiner<double>{}(2.0, NAN)));
  EXPECT_TRUE(std::isnan(MinCombiner<double>{}(2.0, NAN)));
}

TEST(KernelsReduce, ArgCombinersAreOrderIndependent) {
  using IV = IndexedValue<double>;
  const std::vector<IV> values = {{1.0, 0}, {5.0, 1}, {2.0, 2}, {5.0, 3}, {-4.0, 4}, {-4.0, 5}};
  // Any visiting order gives the first maximum / minimum.
  for (int rotation = 0; rotation < 6; ++rotation) {
    IV mx = ArgMaxCombiner<double>::identity(), mn = ArgMinCombiner<double>::identity();
    for (int k = 0; k < 6; ++k) {
      const IV v = values[(k + rotation) % 6];
      mx = ArgMaxCombiner<double>{}(mx, v);
      mn = ArgMinCombiner<double>{}(v, mn);
    }
    EXPECT_EQ(mx.index, 1);
    EXPECT_EQ(mn.index, 4);
  }
  // NaN wins, the first NaN among several.
  IV a = ArgMaxCombiner<double>{}(IV{NAN, 7}, IV{9.0, 2});
  EXPECT_EQ(a.index, 7);
  a = ArgMaxCombiner<double>{}(IV{NAN, 7}, IV{NAN, 3});
  EXPECT_EQ(a.index, 3);
  a = ArgMinCombiner<double>{}(IV{-9.0, 0}, IV{NAN, 5});
  EXPECT_EQ(a.index, 5);
}

// The loss-scale finite check's element test, on every bit pattern of the 16-bit types against
// the IEEE definition (all exponent bits set), and on float32's boundary patterns.
TEST(KernelsNonFinite, EveryHalfAndBFloat16PatternAndFloat32Boundaries) {
  const NonFiniteFunctor f16 = NonFiniteFunctor::float16(), bf16 = NonFiniteFunctor::bfloat16();
  int f16_bad = 0, bf16_bad = 0;
  for (uint32_t b = 0; b < 0x10000u; ++b) {
    const bool f16_expect = ((b >> 10) & 0x1f) == 0x1f;  // 5 exponent bits
    const bool bf16_expect = ((b >> 7) & 0xff) == 0xff;  // 8 exponent bits
    ASSERT_EQ(f16(b), f16_expect) << b;
    ASSERT_EQ(bf16(b), bf16_expect) << b;
    f16_bad += f16_expect;
    bf16_bad += bf16_expect;
  }
  EXPECT_EQ(f16_bad, 2 * 1024);  // +-inf and the NaNs of each sign
  EXPECT_EQ(bf16_bad, 2 * 128);
  const NonFiniteFunctor f32 = NonFiniteFunctor::float32();
  for (uint32_t b : {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffffffffu}) {
    EXPECT_TRUE(f32(b)) << b;
  }
  for (uint32_t b : {0x7f7fffffu, 0xff7fffffu, 0x00000000u, 0x80000000u, 0x00000001u, 0x3f800000u}) {
    EXPECT_FALSE(f32(b)) << b;
  }
  // Words as the CUDA kernel reads them: two 16-bit values, either may be the bad one.
  EXPECT_TRUE(f16.any_in_word(0x3c007c00u));   // 1.0 | inf
  EXPECT_TRUE(f16.any_in_word(0x7e003c00u));   // NaN | 1.0
  EXPECT_FALSE(f16.any_in_word(0x7bff7bffu));  // 65504 | 65504
  EXPECT_TRUE(bf16.any_in_word(0x3f807f80u));
  EXPECT_FALSE(bf16.any_in_word(0x7f7f7f7fu));
  EXPECT_FALSE(f32.any_in_word(0x7c007c00u));  // as float32: a finite number
}

}  // namespace
}  // namespace gpuaccel::kernels
