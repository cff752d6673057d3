// DType metadata and the exact f16/bf16 conversions. Expected values come from an independent
// reference: every finite 16-bit pattern is decoded with ldexp() into a double, and an f32 is
// rounded by binary search over that sorted table and an exact comparison with the midpoint of
// its two neighbours (midpoints of 16-bit floats are exact in double). Nothing below reuses
// the bit tricks of kernels/half_conversions.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"

namespace gpuaccel {
namespace {

// Compile-time spot checks (the conversions are constexpr on bits): 1.0, -2.0, 65504, 1.0.
static_assert(float_bits_to_half_bits(0x3f800000u) == 0x3c00, "1.0f -> f16");
static_assert(half_bits_to_float_bits(0xc000) == 0xc0000000u, "-2.0 f16 -> f32");
static_assert(half_bits_to_float_bits(0x7bff) == 0x477fe000u, "65504 f16 -> f32");
static_assert(float_bits_to_bfloat16_bits(0x3f800000u) == 0x3f80, "1.0f -> bf16");

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// A 16-bit binary float format: exponent bits and mantissa bits (sign is bit 15).
struct Format {
  int exp_bits;
  int mant_bits;
  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint16_t exp_all_ones() const { return static_cast<uint16_t>(((1 << exp_bits) - 1) << mant_bits); }
};
constexpr Format kF16{5, 10};
constexpr Format kBF16{8, 7};

// Decodes a 16-bit pattern to a double straight from the IEEE definition.
double decode(Format fmt, uint16_t bits) {
  const bool negative = bits & 0x8000;
  const int exp = (bits >> fmt.mant_bits) & ((1 << fmt.exp_bits) - 1);
  const int mant = bits & ((1 << fmt.mant_bits) - 1);
  double v;
  if (exp == (1 << fmt.exp_bits) - 1) {
    v = mant == 0 ? std::numeric_limits<double>::infinity()
                  : std::numeric_limits<double>::quiet_NaN();
  } else if (exp == 0) {
    v = std::ldexp(static_cast<double>(mant), 1 - fmt.bias() - fmt.mant_bits);
  } else {
    v = std::ldexp(static_cast<double>(mant + (1 << fmt.mant_bits)),
                   exp - fmt.bias() - fmt.mant_bits);
  }
  return negative ? -v : v;
}

bool is_nan16(Format fmt, uint16_t bits) {
  return (bits & 0x7fff) > fmt.exp_all_ones();
}

// Exact round-to-nearest-even reference for f32 -> 16-bit format.
class Reference {
 public:
  explicit Reference(Format fmt) : fmt_(fmt) {
    // Non-negative finite values are the patterns 0 .. exp_all_ones()-1, in increasing order.
    // The pattern exp_all_ones() (inf) is given the value the next binade would start at, so
    // overflow falls out of the same midpoint rule as every other rounding.
    const uint16_t inf = fmt.exp_all_ones();
    values_.resize(inf + 1);
    for (uint32_t b = 0; b < inf; ++b) values_[b] = decode(fmt, static_cast<uint16_t>(b));
    values_[inf] = std::ldexp(1.0, fmt.bias() + 1);
  }

  uint16_t round(float f) const {
    const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
    const uint16_t inf = fmt_.exp_all_ones();
    if (std::isnan(f)) return static_cast<uint16_t>(sign | inf | 1);  // "some NaN"
    const double a = std::fabs(static_cast<double>(f));
    if (a >= values_[inf]) return static_cast<uint16_t>(sign | inf);
    // Largest index with values_[i] <= a.
    const size_t i = static_cast<size_t>(
        std::upper_bound(values_.begin(), values_.end(), a) - values_.begin() - 1);
    const double mid = (values_[i] + values_[i + 1]) / 2;  // exact in double
    size_t r;
    if (a < mid) {
      r = i;
    } else if (a > mid) {
      r = i + 1;
    } else {
      r = (i % 2 == 0) ? i : i + 1;  // tie: the even pattern
    }
    return static_cast<uint16_t>(sign | r);
  }

  double value(size_t i) const { return values_[i]; }

 private:
  Format fmt_;
  std::vector<double> values_;
};

const Reference& f16_reference() {
  static const Reference r(kF16);
  return r;
}
const Reference& bf16_reference() {
  static const Reference r(kBF16);
  return r;
}

// Checks one f32 -> 16-bit conversion against the reference (NaN: a NaN of the same sign).
::testing::AssertionResult matches_reference(Format fmt, const Reference& ref, float f,
                                             uint16_t got) {
  const uint16_t want = ref.round(f);
  if (std::isnan(f)) {
    if (is_nan16(fmt, got) && ((got ^ want) & 0x8000) == 0) return ::testing::AssertionSuccess();
  } else if (got == want) {
    return ::testing::AssertionSuccess();
  }
  char buf[128];
  std::snprintf(buf, sizeof buf, "f32 0x%08x (%.9g): got 0x%04x, want 0x%04x", bits_of(f),
                static_cast<double>(f), got, want);
  return ::testing::AssertionFailure() << buf;
}

// ---------------------------------------------------------------- f16 ---

TEST(HalfConversion, EveryPatternDecodesExactly) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float f = half_bits_to_float(h);
    const double want = decode(kF16, h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << b;
      ASSERT_TRUE(bits_of(f) & 0x00400000u) << "NaN not quieted: " << std::hex << b;
    } else {
      ASSERT_EQ(static_cast<double>(f), want) << std::hex << b;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << b;  // -0 stays -0
    }
  }
}

TEST(HalfConversion, EveryPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const uint16_t back = float_to_half_bits(half_bits_to_float(h));
    if (is_nan16(kF16, h)) {
      ASSERT_TRUE(is_nan16(kF16, back)) << std::hex << b;
      ASSERT_EQ(back & 0x8000, h & 0x8000) << std::hex << b;
      // A quiet NaN comes back bit for bit; a signaling one comes back quieted.
      ASSERT_EQ(back, h | 0x0200) << std::hex << b;
    } else {
      ASSERT_EQ(back, h) << std::hex << b;
    }
  }
}

// For every pair of neighbouring f16 values (and the largest finite one against 2^16, where
// the next binade would start) the exact midpoint ties to even and the floats just below and
// above it go down and up.
TEST(HalfConversion, MidpointsTieToEven) {
  const Reference& ref = f16_reference();
  for (uint32_t i = 0; i < 0x7c00; ++i) {
    const double lo = ref.value(i), hi = ref.value(i + 1);
    const double mid = (lo + hi) / 2;
    const float fmid = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(fmid), mid) << "midpoint not exact in f32";
    const uint16_t even = static_cast<uint16_t>(i % 2 == 0 ? i : i + 1);
    const float below = std::nextafter(fmid, 0.0f);
    const float above = std::nextafter(fmid, std::numeric_limits<float>::infinity());
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      ASSERT_EQ(float_to_half_bits(s * fmid), sign | even) << i;
      ASSERT_EQ(float_to_half_bits(s * below), sign | i) << i;
      ASSERT_EQ(float_to_half_bits(s * above), sign | (i + 1)) << i;
      // The f16 values themselves convert exactly.
      if (i < 0x7c00) ASSERT_EQ(float_to_half_bits(s * static_cast<float>(lo)), sign | i) << i;
    }
  }
}

TEST(HalfConversion, OverflowBoundary) {
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(std::nextafter(65520.0f, 0.0f)), 0x7bff);  // 65519.996
  EXPECT_EQ(float_to_half_bits(65519.99f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-65520.0f), 0xfc00);
  EXPECT_EQ(float_to_half_bits(-65519.99f), 0xfbff);
  EXPECT_EQ(float_to_half_bits(65536.0f), 0x7c00);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::max()), 0x7c00);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(float_to_half_bits(-std::numeric_limits<float>::infinity()), 0xfc00);
  EXPECT_EQ(half_bits_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_bits_to_float(0xfc00), -std::numeric_limits<float>::infinity());
}

TEST(HalfConversion, SubnormalsAndZeros) {
  const float tiny = std::ldexp(1.0f, -24);  // smallest f16 subnormal
  EXPECT_EQ(float_to_half_bits(tiny), 0x0001);
  EXPECT_EQ(float_to_half_bits(-tiny), 0x8001);
  EXPECT_EQ(float_to_half_bits(tiny / 2), 0x0000);                      // tie -> even (0)
  EXPECT_EQ(float_to_half_bits(-tiny / 2), 0x8000);                     // keeps the sign
  EXPECT_EQ(float_to_half_bits(std::nextafter(tiny / 2, 1.0f)), 0x0001);
  EXPECT_EQ(float_to_half_bits(tiny * 1.5f), 0x0002);                   // tie 1|2 -> 2
  EXPECT_EQ(float_to_half_bits(tiny * 2.5f), 0x0002);                   // tie 2|3 -> 2
  EXPECT_EQ(float_to_half_bits(tiny / 4), 0x0000);
  EXPECT_EQ(float_to_half_bits(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(float_to_half_bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
  EXPECT_EQ(float_to_half_bits(1023 * tiny), 0x03ff);                   // largest subnormal
  EXPECT_EQ(float_to_half_bits(1023.5f * tiny), 0x0400);                // tie -> 2^-14
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -14)), 0x0400);         // smallest normal
  EXPECT_EQ(half_bits_to_float(0x0001), tiny);
  EXPECT_EQ(half_bits_to_float(0x03ff), 1023 * tiny);
  EXPECT_EQ(float_to_half_bits(0.0f), 0x0000);
  EXPECT_EQ(float_to_half_bits(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(half_bits_to_float(0x8000)));
  EXPECT_EQ(half_bits_to_float(0x8000), 0.0f);
}

TEST(HalfConversion, NaNStaysNaN) {
  // Payloads whose dropped bits would round or truncate a careless conversion into inf.
  for (uint32_t bits : {0x7f800001u, 0x7f801fffu, 0x7f802000u, 0x7fbfffffu, 0x7fc00000u,
                        0x7fffffffu, 0xff800001u, 0xffffffffu}) {
    const uint16_t h = float_to_half_bits(float_of(bits));
    EXPECT_TRUE(is_nan16(kF16, h)) << std::hex << bits << " -> " << h;
    EXPECT_EQ(h & 0x8000, (bits >> 16) & 0x8000) << std::hex << bits;
    EXPECT_TRUE(h & 0x0200) << "not quiet: " << std::hex << bits;
  }
  EXPECT_TRUE(std::isnan(half_bits_to_float(0x7c01)));
  EXPECT_TRUE(std::signbit(half_bits_to_float(0xfe00)));
}

// Random f32 bit patterns: half uniformly over all patterns, half with exponents around the
// f16 range so normals, subnormals and both boundaries are hit densely.
std::vector<uint32_t> random_f32_patterns(size_t n, int exp_lo, int exp_hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<uint32_t> any;
  std::uniform_int_distribution<int> exp(exp_lo, exp_hi);
  std::vector<uint32_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    uint32_t b = any(rng);
    if (i % 2) b = (b & 0x807fffffu) | (static_cast<uint32_t>(exp(rng)) << 23);
    out[i] = b;
  }
  return out;
}

TEST(HalfConversion, RandomPatternsMatchReference) {
  const Reference& ref = f16_reference();
  for (uint32_t b : random_f32_patterns(4'000'000, 127 - 27, 127 + 17, 1234)) {
    const float f = float_of(b);
    ASSERT_TRUE(matches_reference(kF16, ref, f, float_to_half_bits(f)));
  }
}

// ---------------------------------------------------------------- bf16 ---

TEST(BFloat16Conversion, EveryPatternDecodesAndRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    const uint16_t h = static_cast<uint16_t>(b);
    const float f = bfloat16_bits_to_float(h);
    const double want = decode(kBF16, h);
    const uint16_t back = float_to_bfloat16_bits(f);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << b;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << b;
      ASSERT_TRUE(is_nan16(kBF16, back)) << std::hex << b;
      ASSERT_EQ(back, h | 0x0040) << std::hex << b;  // quiet NaNs exactly, signaling quieted
    } else {
      ASSERT_EQ(static_cast<double>(f), want) << std::hex << b;
      ASSERT_EQ(std::signbit(f), (h & 0x8000) != 0) << std::hex << b;
      ASSERT_EQ(back, h) << std::hex << b;
    }
  }
}

TEST(BFloat16Conversion, MidpointsTieToEven) {
  const Reference& ref = bf16_reference();
  for (uint32_t i = 0; i < 0x7f80; ++i) {
    const double mid = (ref.value(i) + ref.value(i + 1)) / 2;
    const float fmid = static_cast<float>(mid);
    ASSERT_EQ(static_cast<double>(fmid), mid) << "midpoint not exact in f32";
    const uint16_t even = static_cast<uint16_t>(i % 2 == 0 ? i : i + 1);
    const float below = std::nextafter(fmid, 0.0f);
    const float above = std::nextafter(fmid, std::numeric_limits<float>::infinity());
    for (uint16_t sign : {uint16_t{0}, uint16_t{0x8000}}) {
      const float s = sign ? -1.0f : 1.0f;
      ASSERT_EQ(float_to_bfloat16_bits(s * fmid), sign | even) << i;
      ASSERT_EQ(float_to_bfloat16_bits(s * below), sign | i) << i;
      ASSERT_EQ(float_to_bfloat16_bits(s * above), sign | (i + 1)) << i;
    }
  }
}

TEST(BFloat16Conversion, EveryF32SubnormalMatchesReference) {
  const Reference& ref = bf16_reference();
  for (uint32_t m = 0; m <= 0x007fffffu; ++m) {
    for (uint32_t sign : {0u, 0x80000000u}) {
      const float f = float_of(sign | m);
      ASSERT_TRUE(matches_reference(kBF16, ref, f, float_to_bfloat16_bits(f)));
    }
  }
  // The largest f32 subnormal rounds up into the smallest normal bf16 (2^-126).
  EXPECT_EQ(float_to_bfloat16_bits(float_of(0x007fffffu)), 0x0080);
  EXPECT_EQ(float_to_bfloat16_bits(-std::numeric_limits<float>::denorm_min()), 0x8000);
}

TEST(BFloat16Conversion, OverflowInfNaN) {
  const float max = std::numeric_limits<float>::max();
  const float inf = std::numeric_limits<float>::infinity();
  const double bf16_max = decode(kBF16, 0x7f7f);
  // Just below the midpoint between the largest bf16 and 2^128 stays finite; at it, inf.
  const float mid = static_cast<float>(bf16_max + std::ldexp(1.0, 127 - 8));
  EXPECT_EQ(float_to_bfloat16_bits(std::nextafter(mid, 0.0f)), 0x7f7f);
  EXPECT_EQ(float_to_bfloat16_bits(mid), 0x7f80);
  EXPECT_EQ(float_to_bfloat16_bits(max), 0x7f80);
  EXPECT_EQ(float_to_bfloat16_bits(-max), 0xff80);
  EXPECT_EQ(float_to_bfloat16_bits(inf), 0x7f80);
  EXPECT_EQ(float_to_bfloat16_bits(-inf), 0xff80);
  EXPECT_EQ(float_to_bfloat16_bits(-0.0f), 0x8000);
  for (uint32_t bits : {0x7f800001u, 0x7f807fffu, 0x7f808000u, 0x7fbfffffu, 0x7fffffffu,
                        0xff800001u, 0xffffffffu}) {
    const uint16_t b = float_to_bfloat16_bits(float_of(bits));
    EXPECT_TRUE(is_nan16(kBF16, b)) << std::hex << bits << " -> " << b;
    EXPECT_EQ(b & 0x8000, (bits >> 16) & 0x8000) << std::hex << bits;
  }
}

TEST(BFloat16Conversion, RandomPatternsMatchReference) {
  const Reference& ref = bf16_reference();
  for (uint32_t b : random_f32_patterns(4'000'000, 0, 255, 5678)) {
    const float f = float_of(b);
    ASSERT_TRUE(matches_reference(kBF16, ref, f, float_to_bfloat16_bits(f)));
  }
}

TEST(HalfStorageTypes, WrapTheBitConversions) {
  EXPECT_EQ(Half::from_float(1.5f).bits, 0x3e00);
  EXPECT_EQ(Half{0x3e00}.to_float(), 1.5f);
  EXPECT_EQ(BFloat16::from_float(-2.0f).bits, 0xc000);
  EXPECT_EQ(BFloat16{0xc000}.to_float(), -2.0f);
}

// ---------------------------------------------------------- bulk loops ---

TEST(DTypeBulkConversion, MatchesScalarFunctions) {
  // Large enough for the OpenMP path, plus a small size and an empty one for the serial path.
  const std::vector<uint32_t> patterns = random_f32_patterns(1 << 20, 100, 145, 42);
  for (size_t n : {size_t{0}, size_t{7}, patterns.size()}) {
    std::vector<float> src(n);
    for (size_t i = 0; i < n; ++i) src[i] = float_of(patterns[i]);
    std::vector<uint16_t> h(n + 1, 0xabcd), b(n + 1, 0xabcd);
    convert_f32_to_f16(src.data(), h.data(), n);
    convert_f32_to_bf16(src.data(), b.data(), n);
    EXPECT_EQ(h[n], 0xabcd) << "wrote past the end";
    EXPECT_EQ(b[n], 0xabcd) << "wrote past the end";
    std::vector<float> hf(n), bf(n);
    convert_f16_to_f32(h.data(), hf.data(), n);
    convert_bf16_to_f32(b.data(), bf.data(), n);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_EQ(h[i], float_to_half_bits(src[i])) << i;
      ASSERT_EQ(b[i], float_to_bfloat16_bits(src[i])) << i;
      ASSERT_EQ(bits_of(hf[i]), bits_of(half_bits_to_float(h[i]))) << i;
      ASSERT_EQ(bits_of(bf[i]), bits_of(bfloat16_bits_to_float(b[i]))) << i;
    }
  }
}

// ------------------------------------------------------------ metadata ---

TEST(DType, NamesSizesAndKinds) {
  struct Expect {
    DType dtype;
    const char* name;
    size_t size;
    bool floating;
  };
  const Expect cases[] = {
      {DType::kFloat32, "float32", sizeof(float), true},
      {DType::kFloat16, "float16", sizeof(uint16_t), true},
      {DType::kBFloat16, "bfloat16", sizeof(uint16_t), true},
      {DType::kInt32, "int32", sizeof(int32_t), false},
      {DType::kInt64, "int64", sizeof(int64_t), false},
      {DType::kUInt8, "uint8", sizeof(uint8_t), false},
      {DType::kBool, "bool", sizeof(bool), false},
      {DType::kFloat64, "float64", sizeof(double), true},
      {DType::kInt8, "int8", sizeof(int8_t), false},
      {DType::kInt16, "int16", sizeof(int16_t), false},
  };
  ASSERT_EQ(kNumDTypes, std::size(cases));
  for (const Expect& e : cases) {
    EXPECT_STREQ(dtype_name(e.dtype), e.name);
    EXPECT_EQ(dtype_size(e.dtype), e.size) << e.name;
    EXPECT_EQ(is_floating(e.dtype), e.floating) << e.name;
    EXPECT_EQ(parse_dtype(e.name), e.dtype) << e.name;
  }
}

TEST(DType, Aliases) {
  EXPECT_EQ(parse_dtype("float"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("f32"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("half"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("f16"), DType::kFloat16);
  EXPECT_EQ(parse_dtype("bf16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("double"), DType::kFloat64);
  EXPECT_EQ(parse_dtype("f64"), DType::kFloat64);
  EXPECT_EQ(parse_dtype("short"), DType::kInt16);
}

TEST(DType, ParseErrorQuotesNameAndListsValidOnes) {
  for (const std::string bad : {"uint16", "", "Float32", "int", "float16 ", "char"}) {
    try {
      parse_dtype(bad);
      FAIL() << "no error for '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kValue);
      const std::string msg = e.what();
      EXPECT_NE(msg.find("'" + bad + "'"), std::string::npos) << msg;
      for (DType d : kAllDTypes) EXPECT_NE(msg.find(dtype_name(d)), std::string::npos) << msg;
    }
  }
}

}  // namespace
}  // namespace gpuaccel
