// Tests of the bulk bf16 <-> f32 conversions (backends/cpu/bf16_convert.h): every path this CPU
// can run gives the bits of the scalar formulas, on hand-checked values (ties to even,
// subnormals, NaN, overflow to inf), on every bf16 pattern and on random f32 bit patterns, at
// lengths that exercise the vector bodies and their tails. Paths the CPU lacks are not run
// (the scalar one always is), so the assertions hold whatever the ISA.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "backends/cpu/bf16_convert.h"
#include "core/errors.h"

namespace gpuaccel::cpu {
namespace {

std::vector<Bf16ConvertIsa> runnable_paths() {
  std::vector<Bf16ConvertIsa> out;
  for (Bf16ConvertIsa isa : {Bf16ConvertIsa::kScalar, Bf16ConvertIsa::kAvx2,
                             Bf16ConvertIsa::kAvx512, Bf16ConvertIsa::kAvx512Bf16}) {
    if (bf16_convert_isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

std::vector<uint16_t> narrow_bits(const std::vector<float>& x, Bf16ConvertIsa isa) {
  std::vector<BFloat16> out(x.size());
  f32_to_bf16(x.data(), out.data(), static_cast<int64_t>(x.size()), isa);
  std::vector<uint16_t> bits;
  for (const BFloat16& b : out) bits.push_back(b.bits);
  return bits;
}

TEST(Bf16Convert, DefaultPathIsRunnable) {
  EXPECT_TRUE(bf16_convert_isa_supported(bf16_convert_isa()));
  EXPECT_TRUE(bf16_convert_isa_supported(Bf16ConvertIsa::kScalar));
}

// Values whose bf16 is known by hand, each placed in every lane position of a 70-element run
// (two 32-lane vectors and a tail) so vector bodies and tails both see it.
TEST(Bf16Convert, NarrowingKnownValues) {
  struct Case {
    uint32_t f32;
    uint16_t bf16;
    const char* what;
  };
  const std::vector<Case> cases = {
      {0x3f800000u, 0x3f80, "1.0"},
      {0x3f808000u, 0x3f80, "1 + 2^-8: a tie, rounds to the even 1.0"},
      {0x3f818000u, 0x3f82, "1 + 3*2^-8: a tie, rounds up to the even mantissa"},
      {0x3f808001u, 0x3f81, "just above the tie rounds up"},
      {0xbf80ffffu, 0xbf81, "negative, rounds away from zero in magnitude"},
      {0x7f7fffffu, 0x7f80, "FLT_MAX overflows to inf"},
      {0x7f800000u, 0x7f80, "inf"},
      {0xff800000u, 0xff80, "-inf"},
      {0x7f800001u, 0x7fc0, "signalling NaN is quieted, not turned into inf"},
      {0xffc12345u, 0xffc1, "negative quiet NaN keeps sign and high payload"},
      {0x00010000u, 0x0001, "smallest bf16 subnormal, exact"},
      {0x00018000u, 0x0002, "subnormal tie rounds to even (the instruction would flush it)"},
      {0x00008001u, 0x0001, "tiny subnormal above half rounds up"},
      {0x80000001u, 0x8000, "negative tiny subnormal rounds to -0"},
      {0x00000000u, 0x0000, "+0"},
      {0x80000000u, 0x8000, "-0"},
  };
  for (Bf16ConvertIsa isa : runnable_paths()) {
    for (const Case& c : cases) {
      for (size_t pos : {size_t{0}, size_t{5}, size_t{17}, size_t{31}, size_t{40}, size_t{69}}) {
        std::vector<float> x(70, 1.0f);
        x[pos] = from_bits(c.f32);
        const std::vector<uint16_t> got = narrow_bits(x, isa);
        EXPECT_EQ(got[pos], c.bf16) << bf16_convert_isa_name(isa) << ": " << c.what
                                    << " at position " << pos;
        EXPECT_EQ(got[(pos + 1) % 70], 0x3f80) << bf16_convert_isa_name(isa);
      }
    }
  }
}

TEST(Bf16Convert, NarrowingRandomBitsMatchesScalarFormula) {
  std::mt19937 rng(7);
  for (Bf16ConvertIsa isa : runnable_paths()) {
    for (size_t n : {size_t{1}, size_t{15}, size_t{16}, size_t{33}, size_t{1000}, size_t{4099}}) {
      std::vector<float> x(n);
      for (size_t i = 0; i < n; ++i) {
        uint32_t u = rng();
        if (i % 7 == 3) u &= 0x807fffffu;  // subnormals, mixed into vectors of normals
        x[i] = from_bits(u);
      }
      const std::vector<uint16_t> got = narrow_bits(x, isa);
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i], float_to_bfloat16_bits(x[i]))
            << bf16_convert_isa_name(isa) << " n=" << n << " i=" << i << " bits=" << std::hex
            << bits_of(x[i]);
      }
    }
  }
}

TEST(Bf16Convert, WideningEveryPatternIsExact) {
  std::vector<BFloat16> all(65536 + 5);
  for (size_t i = 0; i < all.size(); ++i) all[i].bits = static_cast<uint16_t>(i);
  for (Bf16ConvertIsa isa : runnable_paths()) {
    std::vector<float> out(all.size());
    bf16_to_f32(all.data(), out.data(), static_cast<int64_t>(all.size()), isa);
    for (size_t i = 0; i < all.size(); ++i) {
      const uint16_t b = all[i].bits;
      uint32_t expected = static_cast<uint32_t>(b) << 16;
      if ((expected & 0x7fffffffu) > 0x7f800000u) expected |= 0x00400000u;  // NaN: quiet
      ASSERT_EQ(bits_of(out[i]), expected) << bf16_convert_isa_name(isa) << " bits " << b;
    }
  }
}

TEST(Bf16Convert, RoundTripOfBf16ValuesIsIdentity) {
  std::vector<BFloat16> x(1000), back(1000);
  std::vector<float> wide(1000);
  std::mt19937 rng(3);
  for (BFloat16& b : x) {
    do {
      b.bits = static_cast<uint16_t>(rng());
    } while ((b.bits & 0x7fff) > 0x7f80);  // NaNs come back quieted, checked above
  }
  bf16_to_f32(x.data(), wide.data(), 1000);
  f32_to_bf16(wide.data(), back.data(), 1000);
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(back[i].bits, x[i].bits) << i;
}

TEST(Bf16Convert, UnsupportedPathIsRefused) {
  for (Bf16ConvertIsa isa : {Bf16ConvertIsa::kAvx2, Bf16ConvertIsa::kAvx512,
                             Bf16ConvertIsa::kAvx512Bf16}) {
    if (bf16_convert_isa_supported(isa)) continue;
    float f = 1.0f;
    BFloat16 b{};
    EXPECT_THROW(f32_to_bf16(&f, &b, 1, isa), Error);
  }
}

}  // namespace
}  // namespace gpuaccel::cpu
