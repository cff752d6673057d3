// Tests of the direct max-pooling loops (backends/cpu/max_pool.h) on every ISA path this CPU can
// run (forced with ScopedMaxPoolIsa; the baseline one always runs, and the test prints which
// ran): forward values and argmax, and the backward, in float32 and bfloat16, against plain
// reference loops, compared bit for bit. Max and select are exact and the backward's sums add
// in the same order as the reference, so equality holds on any ISA. Shapes cover disjoint 2x2
// windows, overlapping windows, padding, odd sizes, channel counts around the vector widths and
// one large enough for the parallel split. The backward with relu's mask folded in is checked
// against the two passes it replaces (the pooling's backward, then the element-wise relu
// backward), on inputs holding zeros of both signs, NaNs, infinities and subnormals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/elementwise.h"
#include "backends/cpu/max_pool.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"
#include "tensor/contiguous_view.h"

namespace gpuaccel::cpu {
namespace {

std::vector<MaxPoolIsa> runnable_paths() {
  std::vector<MaxPoolIsa> out;
  for (MaxPoolIsa isa : {MaxPoolIsa::kBaseline, MaxPoolIsa::kAvx2, MaxPoolIsa::kAvx512}) {
    if (max_pool_isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

struct Case {
  int64_t n, h, w, c;
  Pool2dParams p;
  std::string what;
};

Pool2dParams pool(int64_t wh, int64_t ww, int64_t sh, int64_t sw, int64_t pt = 0, int64_t pb = 0,
                  int64_t pl = 0, int64_t pr = 0) {
  Pool2dParams p;
  p.window_h = wh;
  p.window_w = ww;
  p.stride_h = sh;
  p.stride_w = sw;
  p.pad_top = pt;
  p.pad_bottom = pb;
  p.pad_left = pl;
  p.pad_right = pr;
  return p;
}

std::vector<Case> cases() {
  return {
      {2, 6, 6, 3, pool(2, 2, 2, 2), "2x2/2 disjoint"},
      {2, 7, 9, 17, pool(2, 2, 2, 2), "2x2/2 odd sizes (a row and column no window covers)"},
      {1, 9, 7, 35, pool(3, 2, 3, 3), "3x2 stride 3x3 disjoint with gaps"},
      {2, 8, 8, 16, pool(3, 3, 2, 2, 1, 1, 1, 1), "3x3/2 overlapping, padding 1"},
      {1, 7, 6, 33, pool(3, 3, 1, 1, 1, 1, 1, 1), "3x3/1 same padding"},
      {1, 5, 5, 64, pool(2, 2, 1, 1), "2x2/1 overlapping"},
      {1, 4, 5, 1, pool(2, 3, 2, 2, 0, 1, 1, 1), "one channel, asymmetric padding"},
      {1, 2, 2, 5, pool(2, 2, 2, 2, 2, 0, 2, 0), "windows entirely in the padding"},
      // Above kParallelMinElements (cpu_threads.h) in the output as well as the input.
      {8, 32, 32, 64, pool(2, 2, 2, 2), "large, parallel split"},
      {16, 26, 26, 32, pool(3, 3, 2, 2, 1, 1, 1, 1), "large overlapping, parallel split"},
  };
}

int64_t out_size(int64_t in, int64_t window, int64_t stride, int64_t pad_lo, int64_t pad_hi) {
  return (in + pad_lo + pad_hi - window) / stride + 1;
}

TensorView nhwc(void* data, DType dtype, int64_t n, int64_t h, int64_t w, int64_t c) {
  return contiguous_view(data, dtype, {n, h, w, c});
}

struct Reference {
  std::vector<float> y;
  std::vector<uint8_t> argmax;
  std::vector<float> dx;  // summed in float32, in the kernels' (oh, ow) order
};

// Plain loops: first maximum in (kh, kw) scan order, -inf and index 0 for an all-padding window;
// dx[argmax] += dy.
Reference reference(const Case& k, int64_t oh_n, int64_t ow_n, const std::vector<float>& x,
                    const std::vector<float>& dy) {
  const Pool2dParams& p = k.p;
  Reference r;
  r.y.assign(static_cast<size_t>(k.n * oh_n * ow_n * k.c), -INFINITY);
  r.argmax.assign(r.y.size(), 0);
  r.dx.assign(static_cast<size_t>(k.n * k.h * k.w * k.c), 0.0f);
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        for (int64_t c = 0; c < k.c; ++c) {
          const size_t o = static_cast<size_t>(((n * oh_n + oh) * ow_n + ow) * k.c + c);
          bool seen = false;
          int64_t best_pos = -1;
          for (int64_t kh = 0; kh < p.window_h; ++kh) {
            for (int64_t kw = 0; kw < p.window_w; ++kw) {
              const int64_t ih = oh * p.stride_h - p.pad_top + kh;
              const int64_t iw = ow * p.stride_w - p.pad_left + kw;
              if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
              const int64_t pos = ((n * k.h + ih) * k.w + iw) * k.c + c;
              const float v = x[static_cast<size_t>(pos)];
              if (!seen || v > r.y[o]) {
                r.y[o] = v;
                r.argmax[o] = static_cast<uint8_t>(kh * p.window_w + kw);
                best_pos = pos;
                seen = true;
              }
            }
          }
          if (best_pos >= 0) r.dx[static_cast<size_t>(best_pos)] += dy[o];
        }
      }
    }
  }
  return r;
}

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// Values from a small set, so ties (first position wins) are common.
std::vector<float> random_values(size_t count, std::mt19937& rng, bool few_distinct) {
  std::uniform_int_distribution<int> small(-4, 4);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  std::vector<float> v(count);
  for (float& e : v) {
    // bf16-representable, so the bf16 runs see the same numbers.
    e = BFloat16::from_float(few_distinct ? static_cast<float>(small(rng)) : normal(rng)).to_float();
  }
  return v;
}

template <typename S>
S store(float f) {
  if constexpr (std::is_same_v<S, float>) {
    return f;
  } else {
    return BFloat16::from_float(f);
  }
}

template <typename S>
float load(S s) {
  if constexpr (std::is_same_v<S, float>) {
    return s;
  } else {
    return s.to_float();
  }
}

template <typename S>
void check_every_path(DType dtype) {
  const std::vector<MaxPoolIsa> paths = runnable_paths();
  std::string ran;
  for (MaxPoolIsa isa : paths) ran += std::string(" ") + max_pool_isa_name(isa);
  std::printf("max pooling paths run on this CPU:%s (default %s)\n", ran.c_str(),
              max_pool_isa_name(max_pool_isa()));
  std::mt19937 rng(17);
  for (const Case& k : cases()) {
    ASSERT_TRUE(direct_max_pool_applies(k.p)) << k.what;
    const int64_t oh_n = out_size(k.h, k.p.window_h, k.p.stride_h, k.p.pad_top, k.p.pad_bottom);
    const int64_t ow_n = out_size(k.w, k.p.window_w, k.p.stride_w, k.p.pad_left, k.p.pad_right);
    for (bool few_distinct : {true, false}) {
      const std::vector<float> x = random_values(static_cast<size_t>(k.n * k.h * k.w * k.c), rng,
                                                 few_distinct);
      const std::vector<float> dy =
          random_values(static_cast<size_t>(k.n * oh_n * ow_n * k.c), rng, false);
      Reference want = reference(k, oh_n, ow_n, x, dy);
      std::vector<S> xs(x.size()), dys(dy.size());
      for (size_t i = 0; i < x.size(); ++i) xs[i] = store<S>(x[i]);
      for (size_t i = 0; i < dy.size(); ++i) dys[i] = store<S>(dy[i]);
      for (MaxPoolIsa isa : paths) {
        const ScopedMaxPoolIsa forced(isa);
        ASSERT_EQ(max_pool_isa(), isa);
        const std::string where = std::string(max_pool_isa_name(isa)) + ", " + k.what;
        std::vector<S> y(want.y.size(), store<S>(123.0f)), y_only(y), dx(want.dx.size());
        std::vector<uint8_t> ws(want.y.size(), 200);
        const TensorView xv = nhwc(xs.data(), dtype, k.n, k.h, k.w, k.c);
        direct_max_pool_forward(xv, k.p, nhwc(y.data(), dtype, k.n, oh_n, ow_n, k.c), ws.data());
        direct_max_pool_forward(xv, k.p, nhwc(y_only.data(), dtype, k.n, oh_n, ow_n, k.c),
                                nullptr);
        direct_max_pool_backward(nhwc(dys.data(), dtype, k.n, oh_n, ow_n, k.c), k.p, ws.data(),
                                 nhwc(dx.data(), dtype, k.n, k.h, k.w, k.c));
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_EQ(bits(load(y[i])), bits(want.y[i])) << where << " y[" << i << "]";
          ASSERT_EQ(bits(load(y_only[i])), bits(want.y[i])) << where << " y (no argmax)[" << i << "]";
          ASSERT_EQ(ws[i], want.argmax[i]) << where << " argmax[" << i << "]";
        }
        for (size_t i = 0; i < dx.size(); ++i) {
          ASSERT_EQ(bits(load(dx[i])), bits(load(store<S>(want.dx[i])))) << where << " dx[" << i << "]";
        }
      }
    }
  }
}

TEST(MaxPool, EveryPathMatchesTheReferenceFloat32) { check_every_path<float>(DType::kFloat32); }

TEST(MaxPool, EveryPathMatchesTheReferenceBFloat16) {
  check_every_path<BFloat16>(DType::kBFloat16);
}

TEST(MaxPool, NanPropagatesOnEveryPath) {
  const Case k{1, 4, 4, 19, pool(2, 2, 2, 2), "nan"};
  std::vector<float> x(static_cast<size_t>(k.h * k.w * k.c), 1.0f);
  x[5 * k.c + 7] = NAN;  // (1, 1), channel 7: in window (0, 0) at position 3
  for (MaxPoolIsa isa : runnable_paths()) {
    const ScopedMaxPoolIsa forced(isa);
    std::vector<float> y(static_cast<size_t>(2 * 2 * k.c));
    std::vector<uint8_t> ws(y.size());
    direct_max_pool_forward(nhwc(x.data(), DType::kFloat32, 1, 4, 4, k.c), k.p,
                            nhwc(y.data(), DType::kFloat32, 1, 2, 2, k.c), ws.data());
    for (size_t i = 0; i < y.size(); ++i) {
      if (i == 7) {
        EXPECT_TRUE(std::isnan(y[i])) << max_pool_isa_name(isa);
        EXPECT_EQ(ws[i], 3) << max_pool_isa_name(isa);
      } else {
        EXPECT_EQ(y[i], 1.0f) << max_pool_isa_name(isa) << " " << i;
        EXPECT_EQ(ws[i], 0) << max_pool_isa_name(isa) << " " << i;
      }
    }
  }
}

TEST(MaxPool, Bfloat16NanComesOutQuietOnEveryPath) {
  // A signalling NaN pattern: the result carries the quiet bit, the bits a widen-and-round-back
  // through float gives (bf16_convert.h).
  const uint16_t signalling = 0x7f81;
  const uint16_t expected = BFloat16::from_float(BFloat16{signalling}.to_float()).bits;
  ASSERT_EQ(expected, 0x7fc1);
  const int64_t c = 21;
  std::vector<BFloat16> x(static_cast<size_t>(4 * 4 * c), BFloat16::from_float(-2.0f));
  x[static_cast<size_t>((2 * 4 + 3) * c + 20)] = BFloat16{signalling};  // window (1, 1), position 3
  for (MaxPoolIsa isa : runnable_paths()) {
    const ScopedMaxPoolIsa forced(isa);
    std::vector<BFloat16> y(static_cast<size_t>(2 * 2 * c));
    direct_max_pool_forward(nhwc(x.data(), DType::kBFloat16, 1, 4, 4, c), pool(2, 2, 2, 2),
                            nhwc(y.data(), DType::kBFloat16, 1, 2, 2, c), nullptr);
    for (size_t i = 0; i < y.size(); ++i) {
      const uint16_t want = i == static_cast<size_t>(3 * c + 20) ? expected : uint16_t{0xc000};
      EXPECT_EQ(y[i].bits, want) << max_pool_isa_name(isa) << " " << i;
    }
  }
}

TEST(MaxPool, ForcingAPathTheCpuLacksIsATypedErrorAndTheChoiceIsRestored) {
  const MaxPoolIsa before = max_pool_isa();
  EXPECT_TRUE(max_pool_isa_supported(before));
  EXPECT_TRUE(max_pool_isa_supported(MaxPoolIsa::kBaseline));
  {
    const ScopedMaxPoolIsa forced(MaxPoolIsa::kBaseline);
    EXPECT_EQ(max_pool_isa(), MaxPoolIsa::kBaseline);
  }
  EXPECT_EQ(max_pool_isa(), before);
  for (MaxPoolIsa isa : {MaxPoolIsa::kAvx2, MaxPoolIsa::kAvx512}) {
    if (max_pool_isa_supported(isa)) continue;
    EXPECT_THROW(ScopedMaxPoolIsa forced(isa), Error) << max_pool_isa_name(isa);
    EXPECT_EQ(max_pool_isa(), before);
  }
}

// Stored bit patterns the relu mask must classify as a float compare would: zeros of both
// signs, NaNs (quiet, signalling, negative), infinities, subnormals, the smallest normal.
template <typename S>
std::vector<S> special_values() {
  if constexpr (std::is_same_v<S, float>) {
    std::vector<uint32_t> b = {0x00000000, 0x80000000, 0x7fc00000, 0x7f800001, 0xffc00000,
                               0x7f800000, 0xff800000, 0x00000001, 0x807fffff, 0x00800000};
    std::vector<float> v(b.size());
    std::memcpy(v.data(), b.data(), b.size() * sizeof(float));
    return v;
  } else {
    std::vector<S> v;
    for (uint16_t b : {0x0000, 0x8000, 0x7fc0, 0x7f81, 0xffc0, 0x7f80, 0xff80, 0x0001, 0x807f,
                       0x0080}) {
      v.push_back(S{b});
    }
    return v;
  }
}

template <typename S>
uint32_t raw_bits(S s) {
  if constexpr (std::is_same_v<S, float>) {
    return bits(s);
  } else {
    return s.bits;
  }
}

template <typename S>
void check_relu_folded_on_every_path(DType dtype) {
  std::mt19937 rng(29);
  const std::vector<S> specials = special_values<S>();
  std::uniform_int_distribution<size_t> pick(0, specials.size() - 1);
  std::uniform_int_distribution<int> coin(0, 3);
  int checked = 0;
  for (const Case& k : cases()) {
    const Pool2dParams& p = k.p;
    const bool disjoint = p.stride_h >= p.window_h && p.stride_w >= p.window_w &&
                          p.pad_top == 0 && p.pad_left == 0;
    const int64_t oh_n = out_size(k.h, p.window_h, p.stride_h, p.pad_top, p.pad_bottom);
    const int64_t ow_n = out_size(k.w, p.window_w, p.stride_w, p.pad_left, p.pad_right);
    const size_t in_size = static_cast<size_t>(k.n * k.h * k.w * k.c);
    const size_t out_count = static_cast<size_t>(k.n * oh_n * ow_n * k.c);
    // x: a relu's output would hold no negatives but -0 and NaN; the fold must not rely on it,
    // so x has every sign. A quarter of x and of dy are special values.
    std::vector<S> xs(in_size), dys(out_count);
    const std::vector<float> x = random_values(in_size, rng, true);
    const std::vector<float> dy = random_values(out_count, rng, false);
    for (size_t i = 0; i < in_size; ++i) xs[i] = coin(rng) == 0 ? specials[pick(rng)] : store<S>(x[i]);
    for (size_t i = 0; i < out_count; ++i) {
      dys[i] = coin(rng) == 0 ? specials[pick(rng)] : store<S>(dy[i]);
    }
    const TensorView xv = nhwc(xs.data(), dtype, k.n, k.h, k.w, k.c);
    const TensorView dyv = nhwc(dys.data(), dtype, k.n, oh_n, ow_n, k.c);
    std::vector<S> y(out_count);
    std::vector<uint8_t> ws(out_count);
    direct_max_pool_forward(xv, p, nhwc(y.data(), dtype, k.n, oh_n, ow_n, k.c), ws.data());
    // The two passes the fold replaces.
    std::vector<S> want(in_size);
    const TensorView want_v = nhwc(want.data(), dtype, k.n, k.h, k.w, k.c);
    direct_max_pool_backward(dyv, p, ws.data(), want_v);
    unary_backward(UnaryOp::kRelu, xv, xv, want_v, want_v);
    for (MaxPoolIsa isa : runnable_paths()) {
      const ScopedMaxPoolIsa forced(isa);
      const std::string where = std::string(max_pool_isa_name(isa)) + ", " + k.what;
      std::vector<S> dx(in_size, store<S>(77.0f));
      const bool folded = direct_max_pool_backward_relu(dyv, p, ws.data(), xv,
                                                        nhwc(dx.data(), dtype, k.n, k.h, k.w, k.c));
      ASSERT_EQ(folded, disjoint) << where;
      if (!folded) {
        for (size_t i = 0; i < in_size; ++i) {
          ASSERT_EQ(raw_bits(dx[i]), raw_bits(store<S>(77.0f))) << where << " wrote dx[" << i << "]";
        }
        continue;
      }
      ++checked;
      for (size_t i = 0; i < in_size; ++i) {
        ASSERT_EQ(raw_bits(dx[i]), raw_bits(want[i])) << where << " dx[" << i << "]";
      }
    }
  }
  EXPECT_GE(checked, 4);
}

TEST(MaxPool, ReluFoldedIntoTheBackwardMatchesTheTwoPassesFloat32) {
  check_relu_folded_on_every_path<float>(DType::kFloat32);
}

TEST(MaxPool, ReluFoldedIntoTheBackwardMatchesTheTwoPassesBFloat16) {
  check_relu_folded_on_every_path<BFloat16>(DType::kBFloat16);
}

}  // namespace
}  // namespace gpuaccel::cpu
