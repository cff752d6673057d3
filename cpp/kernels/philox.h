// Philox-4x32-10, the counter-based generator of Salmon, Moraes, Dror and Shaw, "Parallel random
// numbers: as easy as 1, 2, 3" (SC'11), written from the paper's round function and constants.
// A counter-based generator makes the random number of element i a pure function of
// (seed, i), so a tensor gets the same numbers on any number of CPU threads, on any split of
// the work and on the GPU: every thread just computes the counters it owns.
//
// Element mapping (shared by every backend): element index j (= offset + i for element i of the
// output) uses word j % 4 of the Philox block with counter {lo(j / 4), hi(j / 4), 0, 0} and key
// {lo(seed), hi(seed)}.
//   uniform float32: the top 24 bits of that word times 2^-24, in [0, 1), exact in float;
//   uniform with fewer bits (float16: 11, bfloat16: 8), so that rounding to the storage type
//     can never produce 1.0;
//   normal: Box-Muller on the word pair {0, 1} or {2, 3} that holds j; even j % 4 takes the
//     cosine branch, odd the sine branch. Computed in float; the GPU's logf/cosf may differ from
//     the host's by an ulp or two, the uniforms never differ.
#pragma once

#include <cstdint>

#include "kernels/host_device.h"
#include "kernels/unary_functors.h"

namespace gpuaccel::kernels {

// Multipliers and Weyl key increments from the paper (Philox-4x32).
constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1
constexpr int kPhiloxRounds = 10;

// Bits of randomness per uniform, by storage type (see the header comment).
constexpr int kUniformBitsFloat32 = 24;
constexpr int kUniformBitsFloat16 = 11;
constexpr int kUniformBitsBFloat16 = 8;

struct PhiloxBlock {
  uint32_t v[4];
};

GA_HOST_DEVICE GA_INLINE void philox_mulhilo(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
  const uint64_t product = static_cast<uint64_t>(a) * b;
  hi = static_cast<uint32_t>(product >> 32);
  lo = static_cast<uint32_t>(product);
}

// One Philox-4x32 round: two 32x32->64 multiplies, the high halves xored with the other two
// counter words and the key, and a fixed permutation of the words.
GA_HOST_DEVICE GA_INLINE PhiloxBlock philox_round(PhiloxBlock c, uint32_t k0, uint32_t k1) {
  uint32_t hi0, lo0, hi1, lo1;
  philox_mulhilo(kPhiloxM0, c.v[0], hi0, lo0);
  philox_mulhilo(kPhiloxM1, c.v[2], hi1, lo1);
  PhiloxBlock out;
  out.v[0] = hi1 ^ c.v[1] ^ k0;
  out.v[1] = lo1;
  out.v[2] = hi0 ^ c.v[3] ^ k1;
  out.v[3] = lo0;
  return out;
}

// Philox-4x32-10: ten rounds, the key bumped by the Weyl constants between rounds.
GA_HOST_DEVICE GA_INLINE PhiloxBlock philox4x32_10(PhiloxBlock counter, uint32_t k0, uint32_t k1) {
  counter = philox_round(counter, k0, k1);
  for (int r = 1; r < kPhiloxRounds; ++r) {
    k0 += kPhiloxW0;
    k1 += kPhiloxW1;
    counter = philox_round(counter, k0, k1);
  }
  return counter;
}

// The block that holds element index j under `seed`.
GA_HOST_DEVICE GA_INLINE PhiloxBlock philox_block_for(uint64_t seed, uint64_t index) {
  const uint64_t block = index >> 2;
  PhiloxBlock counter;
  counter.v[0] = static_cast<uint32_t>(block);
  counter.v[1] = static_cast<uint32_t>(block >> 32);
  counter.v[2] = 0;
  counter.v[3] = 0;
  return philox4x32_10(counter, static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// Top `bits` bits of a word as a float in [0, 1) on a grid of 2^-bits (exact in float for
// bits <= 24).
GA_HOST_DEVICE GA_INLINE float uniform_from_word(uint32_t word, int bits = kUniformBitsFloat32) {
  return static_cast<float>(word >> (32 - bits)) * (1.0f / static_cast<float>(1u << bits));
}

// Box-Muller on two words: returns the cosine (first) or sine (second) normal of the pair.
// u1 is taken in (0, 1] so log(u1) is finite.
GA_HOST_DEVICE GA_INLINE float normal_from_words(uint32_t w1, uint32_t w2, bool sine_branch) {
  constexpr float kTwoPi = 6.28318530717958647692f;
  const float u1 = static_cast<float>((w1 >> 8) + 1u) * (1.0f / 16777216.0f);
  const float u2 = uniform_from_word(w2);
  const float r = math::sqrt(-2.0f * math::log(u1));
  const float theta = kTwoPi * u2;
  return sine_branch ? r * math::sin(theta) : r * math::cos(theta);
}

GA_HOST_DEVICE GA_INLINE float philox_uniform(uint64_t seed, uint64_t index,
                                              int bits = kUniformBitsFloat32) {
  const PhiloxBlock b = philox_block_for(seed, index);
  return uniform_from_word(b.v[index & 3], bits);
}

GA_HOST_DEVICE GA_INLINE float philox_normal(uint64_t seed, uint64_t index) {
  const PhiloxBlock b = philox_block_for(seed, index);
  const int pair = static_cast<int>(index & 2);  // 0 or 2
  return normal_from_words(b.v[pair], b.v[pair + 1], (index & 1) != 0);
}

// out(i) for output element i: uniform [0, 1) of element index offset + i.
struct UniformFunctor {
  uint64_t seed;
  uint64_t offset;
  int bits;  // kUniformBits* of the storage type
  GA_HOST_DEVICE GA_INLINE float operator()(int64_t i) const {
    return philox_uniform(seed, offset + static_cast<uint64_t>(i), bits);
  }
};

// out(i) for output element i: standard normal of element index offset + i.
struct NormalFunctor {
  uint64_t seed;
  uint64_t offset;
  GA_HOST_DEVICE GA_INLINE float operator()(int64_t i) const {
    return philox_normal(seed, offset + static_cast<uint64_t>(i));
  }
};

}  // namespace gpuaccel::kernels
