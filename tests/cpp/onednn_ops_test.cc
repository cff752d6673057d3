// The oneDNN CPU kernels (backends/cpu/onednn_ops.h) against naive loops in double written
// here, forward and backward, in f32, bf16 and f16. Inputs are rounded to their dtype first and
// the reference reads the rounded values, so the tolerance only covers the kernel's arithmetic
// and the final rounding of its output:
//   f32:  |got - ref| <= 1e-5 * scale + 1e-6
//   bf16: |got - ref| <= 1.6e-2 * scale + 1e-3  (8-bit mantissa output, f32 accumulation)
//   f16:  |got - ref| <= 2e-3 * scale + 1e-4    (computed in f32, 11-bit mantissa output)
// where `scale` is the sum of the magnitudes of the terms that make up the result (for a
// matmul, sum_k |a_ik * b_kj|), or |ref| for the normalizations and softmax.
// The conv backward reference loops are themselves checked against central finite differences
// of the forward reference.
#include <gtest/gtest.h>
#include <omp.h>

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/onednn_ops.h"
#include "core/dtype.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"

namespace gpuaccel::cpu {
namespace {

double tol_rel(DType t) {
  switch (t) {
    case DType::kFloat32: return 1e-5;
    case DType::kBFloat16: return 1.6e-2;
    default: return 2e-3;
  }
}
double tol_abs(DType t) {
  switch (t) {
    case DType::kFloat32: return 1e-6;
    case DType::kBFloat16: return 1e-3;
    default: return 1e-4;
  }
}

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}
uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// A typed host buffer: elements stored in `dtype`, read and written as double.
struct Buf {
  DType dtype = DType::kFloat32;
  std::vector<uint8_t> bytes;

  Buf() = default;
  Buf(DType t, size_t n) : dtype(t), bytes(n * dtype_size(t)) {}
  size_t size() const { return bytes.size() / dtype_size(dtype); }
  double get(size_t i) const {
    switch (dtype) {
      case DType::kFloat32: return reinterpret_cast<const float*>(bytes.data())[i];
      case DType::kBFloat16:
        return bits_to_float(
            bfloat16_bits_to_float_bits(reinterpret_cast<const uint16_t*>(bytes.data())[i]));
      default:
        return bits_to_float(
            half_bits_to_float_bits(reinterpret_cast<const uint16_t*>(bytes.data())[i]));
    }
  }
  void set(size_t i, double v) {
    const float f = static_cast<float>(v);
    switch (dtype) {
      case DType::kFloat32: reinterpret_cast<float*>(bytes.data())[i] = f; break;
      case DType::kBFloat16:
        reinterpret_cast<uint16_t*>(bytes.data())[i] =
            float_bits_to_bfloat16_bits(float_to_bits(f));
        break;
      default:
        reinterpret_cast<uint16_t*>(bytes.data())[i] = float_bits_to_half_bits(float_to_bits(f));
    }
  }
  std::vector<double> values() const {
    std::vector<double> v(size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = get(i);
    return v;
  }
};

Buf random_buf(DType t, size_t n, uint32_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Buf b(t, n);
  for (size_t i = 0; i < n; ++i) b.set(i, dist(gen));
  return b;
}

TensorView view(Buf& b, std::vector<int64_t> shape, std::vector<int64_t> strides = {}) {
  TensorView v;
  v.data = b.bytes.data();
  v.dtype = b.dtype;
  v.ndim = static_cast<int>(shape.size());
  int64_t s = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    v.shape[d] = shape[d];
    v.strides[d] = strides.empty() ? s : strides[d];
    s *= shape[d];
  }
  return v;
}

void expect_close(const Buf& got, const std::vector<double>& ref, const std::vector<double>& scale,
                  const std::string& what) {
  ASSERT_EQ(got.size(), ref.size()) << what;
  const double rel = tol_rel(got.dtype), abs = tol_abs(got.dtype);
  int failures = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double g = got.get(i);
    const double tol = rel * scale[i] + abs;
    if (!(std::fabs(g - ref[i]) <= tol)) {
      if (++failures <= 5) {
        ADD_FAILURE() << what << " [" << dtype_name(got.dtype) << "] element " << i << ": got "
                      << g << ", want " << ref[i] << " (tol " << tol << ")";
      }
    }
  }
  EXPECT_EQ(failures, 0) << what;
}

std::vector<double> abs_of(const std::vector<double>& v) {
  std::vector<double> r(v.size());
  for (size_t i = 0; i < v.size(); ++i) r[i] = std::fabs(v[i]);
  return r;
}

const DType kComputeTypes[] = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};

// ---------------------------------------------------------------------------------------------
// matmul

struct MatmulCase {
  int64_t batch = 0;  // 0: 2-D
  int64_t m, k, n;
  bool a_transposed = false, b_transposed = false;
  bool a_broadcast = false, b_broadcast = false;  // stride-0 batch
  bool a_gapped = false;  // column stride 2 (neither matrix dim unit-strided)
  bool bias = false;
};

void run_matmul_case(DType t, const MatmulCase& c, uint32_t seed) {
  const int64_t batches = c.batch == 0 ? 1 : c.batch;
  const int64_t a_batches = c.a_broadcast ? 1 : batches;
  const int64_t b_batches = c.b_broadcast ? 1 : batches;
  const int64_t a_cols_stored = c.a_gapped ? 2 * c.k : c.k;
  Buf a = random_buf(t, a_batches * c.m * a_cols_stored, seed);
  Buf b = random_buf(t, b_batches * c.k * c.n, seed + 1);
  Buf bias = random_buf(t, c.n, seed + 2);
  Buf out(t, batches * c.m * c.n);

  // Element (batch, i, j) offsets of the logical operands.
  auto a_off = [&](int64_t bt, int64_t i, int64_t kk) -> int64_t {
    const int64_t base = (c.a_broadcast ? 0 : bt) * c.m * a_cols_stored;
    if (c.a_transposed) return base + kk * c.m + i;          // stored (K, M)
    return base + i * a_cols_stored + (c.a_gapped ? 2 * kk : kk);
  };
  auto b_off = [&](int64_t bt, int64_t kk, int64_t j) -> int64_t {
    const int64_t base = (c.b_broadcast ? 0 : bt) * c.k * c.n;
    if (c.b_transposed) return base + j * c.k + kk;          // stored (N, K)
    return base + kk * c.n + j;
  };
  const int64_t a_sr = c.a_transposed ? 1 : a_cols_stored;
  const int64_t a_sc = c.a_transposed ? c.m : (c.a_gapped ? 2 : 1);
  const int64_t b_sr = c.b_transposed ? 1 : c.n;
  const int64_t b_sc = c.b_transposed ? c.k : 1;

  TensorView av, bv, ov, biasv = view(bias, {c.n});
  if (c.batch == 0) {
    av = view(a, {c.m, c.k}, {a_sr, a_sc});
    bv = view(b, {c.k, c.n}, {b_sr, b_sc});
    ov = view(out, {c.m, c.n});
  } else {
    av = view(a, {c.batch, c.m, c.k}, {c.a_broadcast ? 0 : c.m * a_cols_stored, a_sr, a_sc});
    bv = view(b, {c.batch, c.k, c.n}, {c.b_broadcast ? 0 : c.k * c.n, b_sr, b_sc});
    ov = view(out, {c.batch, c.m, c.n});
  }
  onednn_matmul(av, bv, c.bias ? &biasv : nullptr, ov);

  std::vector<double> ref(out.size()), scale(out.size());
  for (int64_t bt = 0; bt < batches; ++bt)
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        double s = c.bias ? bias.get(j) : 0.0, mag = c.bias ? std::fabs(bias.get(j)) : 0.0;
        for (int64_t kk = 0; kk < c.k; ++kk) {
          const double p = a.get(a_off(bt, i, kk)) * b.get(b_off(bt, kk, j));
          s += p;
          mag += std::fabs(p);
        }
        ref[(bt * c.m + i) * c.n + j] = s;
        scale[(bt * c.m + i) * c.n + j] = mag;
      }
  expect_close(out, ref, scale, "matmul");
}

TEST(OneDnnMatmul, Plain2D) {
  for (DType t : kComputeTypes) run_matmul_case(t, {0, 17, 33, 9}, 1);
}

TEST(OneDnnMatmul, TransposedOperandsAndBias) {
  for (DType t : kComputeTypes) {
    MatmulCase c{0, 13, 21, 11};
    c.a_transposed = true;
    run_matmul_case(t, c, 2);
    c.a_transposed = false;
    c.b_transposed = true;
    c.bias = true;
    run_matmul_case(t, c, 3);
    c.a_transposed = true;
    run_matmul_case(t, c, 4);
  }
}

TEST(OneDnnMatmul, GappedStridesAreCopied) {
  for (DType t : kComputeTypes) {
    MatmulCase c{0, 8, 12, 5};
    c.a_gapped = true;
    run_matmul_case(t, c, 5);
    c.batch = 3;
    run_matmul_case(t, c, 6);
  }
}

TEST(OneDnnMatmul, BatchedAndBroadcastBatch) {
  for (DType t : kComputeTypes) {
    MatmulCase c{4, 6, 10, 7};
    run_matmul_case(t, c, 7);
    c.b_broadcast = true;
    c.bias = true;
    run_matmul_case(t, c, 8);
    c.b_broadcast = false;
    c.a_broadcast = true;
    c.b_transposed = true;
    run_matmul_case(t, c, 9);
    c.b_broadcast = true;  // both broadcast: every batch is the same product
    run_matmul_case(t, c, 10);
  }
}

TEST(OneDnnMatmul, ZeroInnerDimensionGivesBias) {
  Buf a(DType::kFloat32, 0), b(DType::kFloat32, 0), bias = random_buf(DType::kFloat32, 3, 10);
  Buf out(DType::kFloat32, 6);
  TensorView bv = view(bias, {3});
  onednn_matmul(view(a, {2, 0}), view(b, {0, 3}), &bv, view(out, {2, 3}));
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(out.get(i), bias.get(i % 3));
}

TEST(OneDnnMatmul, RepeatedCallCreatesNoPrimitive) {
  Buf a = random_buf(DType::kFloat32, 5 * 7, 11), b = random_buf(DType::kFloat32, 7 * 3, 12);
  Buf out(DType::kFloat32, 15);
  onednn_matmul(view(a, {5, 7}), view(b, {7, 3}), nullptr, view(out, {5, 3}));
  const int64_t created = onednn_primitives_created();
  const int64_t cached = onednn_primitive_cache_size();
  for (int i = 0; i < 3; ++i) onednn_matmul(view(a, {5, 7}), view(b, {7, 3}), nullptr, view(out, {5, 3}));
  EXPECT_EQ(onednn_primitives_created(), created);
  EXPECT_EQ(onednn_primitive_cache_size(), cached);
  // A new shape does create one.
  Buf out2(DType::kFloat32, 5 * 2);
  onednn_matmul(view(a, {5, 7}), view(b, {7, 2}, {3, 1}), nullptr, view(out2, {5, 2}));
  EXPECT_GT(onednn_primitives_created(), created);
}

// A product below kParallelMinMatmulMacs (cpu_threads.h) is made for one thread whatever the
// caller's count (so a caller at one thread finds the same primitive); a larger one at two
// threads is a two-thread primitive. Both give the reference's numbers at both counts, and the
// caller's count is back after the call.
TEST(OneDnnMatmul, SmallProductsRunOnTheCallingThreadOnly) {
  const int threads = omp_get_max_threads();
  const MatmulCase small{0, 64, 96, 40};   // 246 K multiply-adds
  const MatmulCase large{0, 128, 256, 136};  // 4.5 M
  ASSERT_LT(small.m * small.k * small.n, kParallelMinMatmulMacs);
  ASSERT_GE(large.m * large.k * large.n, kParallelMinMatmulMacs);
  omp_set_num_threads(2);
  run_matmul_case(DType::kFloat32, small, 60);
  EXPECT_EQ(omp_get_max_threads(), 2);
  int64_t created = onednn_primitives_created();
  omp_set_num_threads(1);
  run_matmul_case(DType::kFloat32, small, 61);
  EXPECT_EQ(onednn_primitives_created(), created) << "the small product's primitive is the one-thread one";
  run_matmul_case(DType::kFloat32, large, 62);
  created = onednn_primitives_created();
  omp_set_num_threads(2);
  run_matmul_case(DType::kFloat32, large, 63);
  EXPECT_GT(onednn_primitives_created(), created) << "a large product gets a two-thread primitive";
  EXPECT_EQ(omp_get_max_threads(), 2);
  omp_set_num_threads(threads);
}

// ---------------------------------------------------------------------------------------------
// conv2d

struct ConvShape {
  int64_t n, h, w, c, f, kh, kw;
  Conv2dParams p;
  int64_t oh() const {
    return (h + p.pad_top + p.pad_bottom - (p.dilation_h * (kh - 1) + 1)) / p.stride_h + 1;
  }
  int64_t ow() const {
    return (w + p.pad_left + p.pad_right - (p.dilation_w * (kw - 1) + 1)) / p.stride_w + 1;
  }
  int64_t kernel_c() const { return c / p.groups; }  // the kernel's in_channels axis
  int64_t w_size() const { return kh * kw * kernel_c() * f; }
};

// Visits every (n, oh, ow, f, kh, kw, c) with its in-bounds input position. Grouped (p.groups
// > 1): filter f reads only the input channels of its group, f / (F / G), which are the kernel's
// kernel_c() channels from group * kernel_c() on.
void conv_visit(const ConvShape& s,
                const std::function<void(size_t xi, size_t wi, size_t yi)>& fn) {
  const int64_t oh = s.oh(), ow = s.ow();
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t x = 0; x < ow; ++x)
        for (int64_t i = 0; i < s.kh; ++i)
          for (int64_t j = 0; j < s.kw; ++j) {
            const int64_t iy = y * s.p.stride_h - s.p.pad_top + i * s.p.dilation_h;
            const int64_t ix = x * s.p.stride_w - s.p.pad_left + j * s.p.dilation_w;
            if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) continue;
            for (int64_t f = 0; f < s.f; ++f) {
              const int64_t group = f / (s.f / s.p.groups);
              for (int64_t kc = 0; kc < s.kernel_c(); ++kc) {
                const int64_t c = group * s.kernel_c() + kc;
                fn(static_cast<size_t>(((n * s.h + iy) * s.w + ix) * s.c + c),
                   static_cast<size_t>(((i * s.kw + j) * s.kernel_c() + kc) * s.f + f),
                   static_cast<size_t>(((n * oh + y) * ow + x) * s.f + f));
              }
            }
          }
}

struct ConvRef {
  std::vector<double> y, y_scale, dx, dx_scale, dw, dw_scale, db, db_scale;
};

ConvRef conv_reference(const ConvShape& s, const std::vector<double>& x,
                       const std::vector<double>& w, const std::vector<double>* bias,
                       const std::vector<double>& dy) {
  ConvRef r;
  const size_t ny = static_cast<size_t>(s.n * s.oh() * s.ow() * s.f);
  r.y.assign(ny, 0.0);
  r.y_scale.assign(ny, 0.0);
  r.dx.assign(x.size(), 0.0);
  r.dx_scale.assign(x.size(), 0.0);
  r.dw.assign(w.size(), 0.0);
  r.dw_scale.assign(w.size(), 0.0);
  r.db.assign(static_cast<size_t>(s.f), 0.0);
  r.db_scale.assign(static_cast<size_t>(s.f), 0.0);
  conv_visit(s, [&](size_t xi, size_t wi, size_t yi) {
    r.y[yi] += x[xi] * w[wi];
    r.y_scale[yi] += std::fabs(x[xi] * w[wi]);
    r.dx[xi] += dy[yi] * w[wi];
    r.dx_scale[xi] += std::fabs(dy[yi] * w[wi]);
    r.dw[wi] += dy[yi] * x[xi];
    r.dw_scale[wi] += std::fabs(dy[yi] * x[xi]);
  });
  for (size_t i = 0; i < ny; ++i) {
    const size_t f = i % static_cast<size_t>(s.f);
    if (bias != nullptr) {
      r.y[i] += (*bias)[f];
      r.y_scale[i] += std::fabs((*bias)[f]);
    }
    r.db[f] += dy[i];
    r.db_scale[f] += std::fabs(dy[i]);
  }
  return r;
}

void run_conv_case(DType t, const ConvShape& s, bool with_bias, uint32_t seed) {
  const int64_t oh = s.oh(), ow = s.ow();
  Buf x = random_buf(t, s.n * s.h * s.w * s.c, seed);
  Buf w = random_buf(t, s.w_size(), seed + 1);
  Buf bias = random_buf(t, s.f, seed + 2);
  Buf dy = random_buf(t, s.n * oh * ow * s.f, seed + 3);
  Buf y(t, dy.size()), dx(t, x.size()), dw(t, w.size()), db(t, s.f);

  TensorView xv = view(x, {s.n, s.h, s.w, s.c}), wv = view(w, {s.kh, s.kw, s.kernel_c(), s.f});
  TensorView bv = view(bias, {s.f}), yv = view(y, {s.n, oh, ow, s.f});
  TensorView dyv = view(dy, {s.n, oh, ow, s.f}), dbv = view(db, {s.f});
  conv2d_forward(xv, wv, with_bias ? &bv : nullptr, s.p, yv);
  conv2d_backward_data(dyv, wv, s.p, view(dx, {s.n, s.h, s.w, s.c}));
  conv2d_backward_weights(xv, dyv, s.p, view(dw, {s.kh, s.kw, s.kernel_c(), s.f}),
                          with_bias ? &dbv : nullptr);

  const std::vector<double> bias_values = bias.values();
  ConvRef r = conv_reference(s, x.values(), w.values(), with_bias ? &bias_values : nullptr,
                             dy.values());
  expect_close(y, r.y, r.y_scale, "conv2d_forward");
  expect_close(dx, r.dx, r.dx_scale, "conv2d_backward_data");
  expect_close(dw, r.dw, r.dw_scale, "conv2d_backward_weights");
  if (with_bias) expect_close(db, r.db, r.db_scale, "conv2d bias gradient");
}

ConvShape conv_shape(int64_t n, int64_t h, int64_t w, int64_t c, int64_t f, int64_t kh,
                     int64_t kw) {
  ConvShape s{n, h, w, c, f, kh, kw, Conv2dParams{}};
  return s;
}

class OneDnnConvReference : public ::testing::TestWithParam<int64_t> {};

TEST_P(OneDnnConvReference, GradientsMatchFiniteDifferences) {
  // Validates the reference loops the other conv tests trust, in double, plain and grouped.
  const int64_t groups = GetParam();
  ConvShape s = conv_shape(1, 5, 6, 2 * groups, 3 * groups, 3, 2);
  s.p.stride_h = 2;
  s.p.dilation_w = 2;
  s.p.pad_top = 1;
  s.p.pad_right = 1;
  s.p.groups = groups;
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> x(static_cast<size_t>(s.n * s.h * s.w * s.c)),
      w(static_cast<size_t>(s.w_size())),
      g(static_cast<size_t>(s.n * s.oh() * s.ow() * s.f));
  for (auto* v : {&x, &w, &g})
    for (double& e : *v) e = dist(gen);
  // loss = sum(y * g); dloss/dx = backward_data(g), dloss/dw = backward_weights(x, g).
  auto loss = [&](const std::vector<double>& xx, const std::vector<double>& ww) {
    ConvRef r = conv_reference(s, xx, ww, nullptr, g);
    double l = 0;
    for (size_t i = 0; i < r.y.size(); ++i) l += r.y[i] * g[i];
    return l;
  };
  ConvRef r = conv_reference(s, x, w, nullptr, g);
  const double h = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    auto xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    EXPECT_NEAR((loss(xp, w) - loss(xm, w)) / (2 * h), r.dx[i], 1e-7) << "dx " << i;
  }
  for (size_t i = 0; i < w.size(); ++i) {
    auto wp = w, wm = w;
    wp[i] += h;
    wm[i] -= h;
    EXPECT_NEAR((loss(x, wp) - loss(x, wm)) / (2 * h), r.dw[i], 1e-7) << "dw " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(PlainAndGrouped, OneDnnConvReference, ::testing::Values(1, 2));

TEST(OneDnnConv, ValidStride1) {
  for (DType t : kComputeTypes) run_conv_case(t, conv_shape(2, 7, 6, 3, 4, 3, 3), true, 20);
}

TEST(OneDnnConv, SameAsymmetricPaddingStride2) {
  // Keras 'same' with stride 2 on an even size pads one row/column at the bottom/right only.
  for (DType t : kComputeTypes) {
    ConvShape s = conv_shape(2, 8, 8, 5, 6, 3, 3);
    s.p.stride_h = s.p.stride_w = 2;
    s.p.pad_bottom = s.p.pad_right = 1;
    run_conv_case(t, s, true, 21);
    ConvShape s2 = conv_shape(1, 6, 7, 4, 8, 4, 2);  // even kernel: more padding after
    s2.p.pad_top = 1;
    s2.p.pad_bottom = 2;
    s2.p.pad_right = 1;
    run_conv_case(t, s2, false, 22);
  }
}

TEST(OneDnnConv, Dilation) {
  for (DType t : kComputeTypes) {
    ConvShape s = conv_shape(2, 9, 10, 3, 5, 3, 3);
    s.p.dilation_h = 2;
    s.p.dilation_w = 3;
    s.p.pad_top = s.p.pad_bottom = 2;
    s.p.pad_left = s.p.pad_right = 3;
    run_conv_case(t, s, true, 23);
  }
}

// Conv2dParams::groups: the kernel's in_channels axis is C / groups (oneDNN's weights get a
// groups dimension), forward and both backward passes against the grouped reference loop.
TEST(OneDnnConv, GroupedConvolution) {
  for (DType t : kComputeTypes) {
    ConvShape s = conv_shape(2, 7, 6, 6, 4, 3, 3);  // 2 groups: 3 channels -> 2 filters each
    s.p.groups = 2;
    run_conv_case(t, s, true, 30);
    ConvShape strided = conv_shape(1, 8, 9, 6, 9, 3, 2);  // 3 groups, 'same' with stride 2
    strided.p.groups = 3;
    strided.p.stride_h = strided.p.stride_w = 2;
    strided.p.pad_top = strided.p.pad_bottom = 1;
    strided.p.pad_right = 1;
    run_conv_case(t, strided, false, 31);
  }
}

// groups == C: the depthwise convolution (Keras's DepthwiseConv2D), with depth multiplier 1
// and 3 (filters c * 3 + m read channel c), dilated.
TEST(OneDnnConv, DepthwiseConvolution) {
  for (DType t : kComputeTypes) {
    ConvShape s = conv_shape(2, 6, 7, 5, 5, 3, 3);
    s.p.groups = 5;
    run_conv_case(t, s, true, 32);
    ConvShape multiplied = conv_shape(1, 9, 8, 4, 12, 3, 3);
    multiplied.p.groups = 4;
    multiplied.p.dilation_h = multiplied.p.dilation_w = 2;
    multiplied.p.pad_top = multiplied.p.pad_bottom = 2;
    multiplied.p.pad_left = multiplied.p.pad_right = 2;
    run_conv_case(t, multiplied, true, 33);
  }
}

TEST(OneDnnConv, CourseCnnLayerShapes) {
  // The course CNN's first two convolutions at a small batch (C=1 then 32 channels).
  run_conv_case(DType::kFloat32, conv_shape(2, 28, 28, 1, 32, 3, 3), true, 24);
  run_conv_case(DType::kFloat32, conv_shape(2, 13, 13, 32, 64, 3, 3), true, 25);
  run_conv_case(DType::kBFloat16, conv_shape(2, 13, 13, 32, 64, 3, 3), true, 26);
}

TEST(OneDnnConv, RepeatedStepCreatesNoPrimitive) {
  ConvShape s = conv_shape(2, 9, 9, 4, 8, 3, 3);
  run_conv_case(DType::kFloat32, s, true, 27);
  const int64_t created = onednn_primitives_created();
  const int64_t cached = onednn_primitive_cache_size();
  run_conv_case(DType::kFloat32, s, true, 28);
  EXPECT_EQ(onednn_primitives_created(), created);
  EXPECT_EQ(onednn_primitive_cache_size(), cached);
}

// oneDNN fixes a primitive's thread count at creation: a caller at another count gets its own.
TEST(OneDnnConv, OtherThreadCountGetsItsOwnPrimitive) {
  const int threads = omp_get_max_threads();
  ConvShape s = conv_shape(2, 10, 9, 4, 8, 3, 3);
  omp_set_num_threads(2);
  run_conv_case(DType::kFloat32, s, true, 29);
  const int64_t created = onednn_primitives_created();
  omp_set_num_threads(1);
  run_conv_case(DType::kFloat32, s, true, 30);  // also checks the one-thread results
  const int64_t created_at_one = onednn_primitives_created();
  EXPECT_GT(created_at_one, created);
  omp_set_num_threads(2);
  run_conv_case(DType::kFloat32, s, true, 31);  // back at two: the first entries again
  EXPECT_EQ(onednn_primitives_created(), created_at_one);
  omp_set_num_threads(threads);
}

// ---------------------------------------------------------------------------------------------
// conv2d backward-data: the choice among oneDNN's implementations (set_conv2d_backward_data_impl)

// Restores the process-wide setting when a test ends.
struct BackwardDataSettingGuard {
  std::string saved = conv2d_backward_data_impl_setting();
  ~BackwardDataSettingGuard() { set_conv2d_backward_data_impl(saved); }
};

// Views of a shape's backward-data operands, for the queries (their contents are not read).
struct BackwardDataOperands {
  Buf dy, w, dx;
  TensorView dyv, wv, dxv;
  BackwardDataOperands(DType t, const ConvShape& s)
      : dy(t, s.n * s.oh() * s.ow() * s.f), w(t, s.kh * s.kw * s.c * s.f), dx(t, s.n * s.h * s.w * s.c) {
    dyv = view(dy, {s.n, s.oh(), s.ow(), s.f});
    wv = view(w, {s.kh, s.kw, s.c, s.f});
    dxv = view(dx, {s.n, s.h, s.w, s.c});
  }
  std::string used(const ConvShape& s) const { return conv2d_backward_data_impl_used(dyv, wv, s.p, dxv); }
  std::vector<std::string> candidates(const ConvShape& s) const {
    return conv2d_backward_data_impls(dyv, wv, s.p, dxv);
  }
};

TEST(OneDnnConvBackwardDataImpl, EveryCandidateMatchesTheReference) {
  // "measure" may pick any candidate, so each is forced in turn and checked. Which candidates
  // exist depends on the CPU (AVX2 / AVX-512 / AMX); the test takes oneDNN's list as it is.
  BackwardDataSettingGuard guard;
  ConvShape strided = conv_shape(2, 8, 8, 5, 6, 3, 3);
  strided.p.stride_h = strided.p.stride_w = 2;
  strided.p.pad_bottom = strided.p.pad_right = 1;
  uint32_t seed = 90;
  for (DType t : kComputeTypes) {
    for (const ConvShape& s : {conv_shape(2, 13, 13, 32, 64, 3, 3), strided}) {
      const BackwardDataOperands ops(t, s);
      const std::vector<std::string> names = ops.candidates(s);
      ASSERT_FALSE(names.empty());
      for (const std::string& name : names) {
        SCOPED_TRACE(name + " " + dtype_name(t));
        set_conv2d_backward_data_impl(name);
        run_conv_case(t, s, false, seed++);
        EXPECT_EQ(ops.used(s), name);
      }
    }
  }
}

TEST(OneDnnConvBackwardDataImpl, ConcurrentMeasurementsOfOneShape) {
  // Two threads (one OpenMP thread each, as data-parallel replicas) reach new shapes together,
  // so both measure the candidates of the same shape at once (the heap corruption of
  // docs/reliability.md, "Concurrent implementation measurements"); each result then matches
  // the same call made afterwards on this thread alone.
  BackwardDataSettingGuard guard;
  set_conv2d_backward_data_impl("measure");
  constexpr int kThreads = 2, kShapes = 12;
  const auto shape = [](int i) { return conv_shape(1 + i, 13, 13, 32, 64, 3, 3); };
  std::vector<Buf> dys, ws;
  for (int i = 0; i < kShapes; ++i) {
    const ConvShape s = shape(i);
    dys.push_back(random_buf(DType::kFloat32, s.n * s.oh() * s.ow() * s.f, 300 + i));
    ws.push_back(random_buf(DType::kFloat32, s.kh * s.kw * s.c * s.f, 400 + i));
  }
  const auto run = [&](int i, Buf& dx) {
    const ConvShape s = shape(i);
    dx = Buf(DType::kFloat32, s.n * s.h * s.w * s.c);
    conv2d_backward_data(view(dys[i], {s.n, s.oh(), s.ow(), s.f}),
                         view(ws[i], {s.kh, s.kw, s.c, s.f}), s.p, view(dx, {s.n, s.h, s.w, s.c}));
  };
  std::atomic<int> arrived{0};
  std::vector<std::vector<Buf>> got(kThreads, std::vector<Buf>(kShapes));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      omp_set_num_threads(1);
      for (int i = 0; i < kShapes; ++i) {
        arrived.fetch_add(1);
        while (arrived.load() < kThreads * (i + 1)) std::this_thread::yield();
        run(i, got[t][i]);
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < kShapes; ++i) {
    Buf expected;
    run(i, expected);
    for (int t = 0; t < kThreads; ++t) {
      for (size_t e = 0; e < expected.size(); ++e) {
        ASSERT_NEAR(got[t][i].get(e), expected.get(e), 1e-4 * (1 + std::fabs(expected.get(e))))
            << "thread " << t << " shape " << i << " element " << e;
      }
    }
  }
}

TEST(OneDnnConvBackwardDataImpl, MeasuredOnceThenCached) {
  BackwardDataSettingGuard guard;
  set_conv2d_backward_data_impl("measure");
  const ConvShape s = conv_shape(3, 11, 12, 16, 24, 3, 3);  // used by no other test
  const BackwardDataOperands ops(DType::kFloat32, s);
  EXPECT_EQ(ops.used(s), "");
  const int64_t choices = onednn_conv2d_backward_data_choices();
  run_conv_case(DType::kFloat32, s, false, 100);  // numerics checked, whatever was chosen
  EXPECT_EQ(onednn_conv2d_backward_data_choices(), choices + 1);
  const std::string chosen = ops.used(s);
  const std::vector<std::string> names = ops.candidates(s);
  EXPECT_NE(std::find(names.begin(), names.end(), chosen), names.end()) << chosen;
  const int64_t created = onednn_primitives_created();
  run_conv_case(DType::kFloat32, s, false, 101);
  EXPECT_EQ(onednn_conv2d_backward_data_choices(), choices + 1);  // not measured again
  EXPECT_EQ(onednn_primitives_created(), created);
  EXPECT_EQ(ops.used(s), chosen);
}

TEST(OneDnnConvBackwardDataImpl, DefaultAndUnknownNamesTakeOneDnnsOwnPick) {
  BackwardDataSettingGuard guard;
  const ConvShape s = conv_shape(2, 9, 7, 8, 16, 3, 3);
  const BackwardDataOperands ops(DType::kFloat32, s);
  const std::string first = ops.candidates(s).at(0);
  for (const char* setting : {"default", "no-such-implementation"}) {
    SCOPED_TRACE(setting);
    set_conv2d_backward_data_impl(setting);
    run_conv_case(DType::kFloat32, s, false, 110);
    EXPECT_EQ(conv2d_backward_data_impl_setting(), setting);
    EXPECT_EQ(ops.used(s), first);
  }
}

TEST(OneDnnConvBackwardDataImpl, EmptySettingIsRejected) {
  BackwardDataSettingGuard guard;
  try {
    set_conv2d_backward_data_impl("");
    FAIL() << "expected an InvalidArgument error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("'measure'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(conv2d_backward_data_impl_setting(), guard.saved);
}

// ---------------------------------------------------------------------------------------------
// conv2d backward-weights: the choice among oneDNN's implementations and the thread count
// (set_conv2d_backward_weights_impl)

struct BackwardWeightsSettingGuard {
  std::string saved = conv2d_backward_weights_impl_setting();
  int threads = omp_get_max_threads();
  ~BackwardWeightsSettingGuard() {
    set_conv2d_backward_weights_impl(saved);
    omp_set_num_threads(threads);
  }
};

// Views of a shape's backward-weights operands, for the queries (their contents are not read).
struct BackwardWeightsOperands {
  Buf x, dy, dw, db;
  TensorView xv, dyv, dwv, dbv;
  const TensorView* bias;
  BackwardWeightsOperands(DType t, const ConvShape& s, bool with_bias)
      : x(t, s.n * s.h * s.w * s.c), dy(t, s.n * s.oh() * s.ow() * s.f),
        dw(t, s.kh * s.kw * s.c * s.f), db(t, s.f) {
    xv = view(x, {s.n, s.h, s.w, s.c});
    dyv = view(dy, {s.n, s.oh(), s.ow(), s.f});
    dwv = view(dw, {s.kh, s.kw, s.c, s.f});
    dbv = view(db, {s.f});
    bias = with_bias ? &dbv : nullptr;
  }
  std::string used(const ConvShape& s) const {
    return conv2d_backward_weights_impl_used(xv, dyv, s.p, dwv, bias);
  }
  std::vector<std::string> candidates(const ConvShape& s) const {
    return conv2d_backward_weights_impls(xv, dyv, s.p, dwv, bias);
  }
};

bool is_one_thread_variant(const std::string& name) {
  const std::string suffix = "@1thread";
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

TEST(OneDnnConvBackwardWeightsImpl, EveryCandidateMatchesTheReference) {
  // "measure" may pick any candidate, one-thread variants included, so each is forced in turn
  // and checked, with and without a bias gradient. Which implementations exist depends on the
  // CPU; the test takes oneDNN's list as it is. Two threads, so that one-thread variants exist
  // on any machine (and the split of the reduction over threads is exercised).
  BackwardWeightsSettingGuard guard;
  omp_set_num_threads(2);
  ConvShape strided = conv_shape(2, 8, 8, 5, 6, 3, 3);
  strided.p.stride_h = strided.p.stride_w = 2;
  strided.p.pad_bottom = strided.p.pad_right = 1;
  uint32_t seed = 120;
  for (DType t : kComputeTypes) {
    for (const ConvShape& s : {conv_shape(2, 13, 13, 32, 64, 3, 3), strided}) {
      for (bool with_bias : {true, false}) {
        const BackwardWeightsOperands ops(t, s, with_bias);
        const std::vector<std::string> names = ops.candidates(s);
        ASSERT_GE(names.size(), 2u);
        EXPECT_FALSE(is_one_thread_variant(names[0]));
        EXPECT_EQ(names[1], names[0] + "@1thread");  // oneDNN's pick on one thread comes second
        for (const std::string& name : names) {
          SCOPED_TRACE(name + " " + dtype_name(t) + (with_bias ? " bias" : " no bias"));
          set_conv2d_backward_weights_impl(name);
          run_conv_case(t, s, with_bias, seed++);
          EXPECT_EQ(ops.used(s), name);
          EXPECT_EQ(omp_get_max_threads(), 2);  // a one-thread variant leaves the caller's count
        }
      }
    }
  }
}

TEST(OneDnnConvBackwardWeightsImpl, OneThreadVariantsOnlyWhenTheCallerHasMoreThreads) {
  BackwardWeightsSettingGuard guard;
  const ConvShape s = conv_shape(2, 10, 10, 8, 16, 3, 3);
  const BackwardWeightsOperands ops(DType::kFloat32, s, true);
  omp_set_num_threads(1);
  for (const std::string& name : ops.candidates(s)) {
    EXPECT_FALSE(is_one_thread_variant(name)) << name;
  }
  // Named anyway on one thread: the implementation, created on the caller's (single) thread.
  set_conv2d_backward_weights_impl(ops.candidates(s).at(0) + "@1thread");
  run_conv_case(DType::kFloat32, s, true, 140);
  EXPECT_EQ(ops.used(s), ops.candidates(s).at(0) + "@1thread");
  EXPECT_EQ(omp_get_max_threads(), 1);
}

TEST(OneDnnConvBackwardWeightsImpl, MeasuredOnceThenCached) {
  BackwardWeightsSettingGuard guard;
  omp_set_num_threads(2);
  set_conv2d_backward_weights_impl("measure");
  // A shape no other test uses (its choice is made here, not before).
  const ConvShape s = conv_shape(3, 11, 13, 16, 24, 3, 3);
  const BackwardWeightsOperands ops(DType::kFloat32, s, true);
  EXPECT_EQ(ops.used(s), "");
  const int64_t choices = onednn_conv2d_backward_weights_choices();
  run_conv_case(DType::kFloat32, s, true, 150);  // numerics checked, whatever was chosen
  EXPECT_EQ(onednn_conv2d_backward_weights_choices(), choices + 1);
  EXPECT_EQ(omp_get_max_threads(), 2);
  const std::string chosen = ops.used(s);
  const std::vector<std::string> names = ops.candidates(s);
  EXPECT_NE(std::find(names.begin(), names.end(), chosen), names.end()) << chosen;
  const int64_t created = onednn_primitives_created();
  run_conv_case(DType::kFloat32, s, true, 151);
  EXPECT_EQ(onednn_conv2d_backward_weights_choices(), choices + 1);  // not measured again
  EXPECT_EQ(onednn_primitives_created(), created);
  EXPECT_EQ(ops.used(s), chosen);
}

TEST(OneDnnConvBackwardWeightsImpl, DefaultAndUnknownNamesTakeOneDnnsOwnPick) {
  BackwardWeightsSettingGuard guard;
  const ConvShape s = conv_shape(2, 9, 7, 8, 16, 3, 3);
  const BackwardWeightsOperands ops(DType::kFloat32, s, false);
  const std::string first = ops.candidates(s).at(0);
  for (const char* setting : {"default", "no-such-implementation"}) {
    SCOPED_TRACE(setting);
    set_conv2d_backward_weights_impl(setting);
    run_conv_case(DType::kFloat32, s, false, 160);
    EXPECT_EQ(conv2d_backward_weights_impl_setting(), setting);
    EXPECT_EQ(ops.used(s), first);
  }
  // An unknown implementation on one thread: oneDNN's pick, on one thread.
  set_conv2d_backward_weights_impl("no-such-implementation@1thread");
  run_conv_case(DType::kFloat32, s, false, 161);
  EXPECT_EQ(ops.used(s), first + "@1thread");
}

TEST(OneDnnConvBackwardWeightsImpl, EmptySettingIsRejected) {
  BackwardWeightsSettingGuard guard;
  try {
    set_conv2d_backward_weights_impl("");
    FAIL() << "expected an InvalidArgument error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("Conv2DBackpropFilter"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'measure'"), std::string::npos) << e.what();
  }
  EXPECT_EQ(conv2d_backward_weights_impl_setting(), guard.saved);
}

// ---------------------------------------------------------------------------------------------
// pooling

struct PoolShape {
  int64_t n, h, w, c;
  Pool2dParams p;
  int64_t oh() const { return (h + p.pad_top + p.pad_bottom - p.window_h) / p.stride_h + 1; }
  int64_t ow() const { return (w + p.pad_left + p.pad_right - p.window_w) / p.stride_w + 1; }
};

// Values distinct within each (n, c) image and exact in bf16 and f16 (multiples of 1/64 below
// 4 in magnitude), so the max of a window is unique in every dtype.
Buf distinct_buf(DType t, const PoolShape& s, uint32_t seed) {
  Buf b(t, static_cast<size_t>(s.n * s.h * s.w * s.c));
  std::mt19937 gen(seed);
  std::vector<int64_t> perm(static_cast<size_t>(s.h * s.w));
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t c = 0; c < s.c; ++c) {
      for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
      std::shuffle(perm.begin(), perm.end(), gen);
      for (int64_t i = 0; i < s.h * s.w; ++i)
        b.set(static_cast<size_t>((n * s.h * s.w + i) * s.c + c),
              (static_cast<double>(perm[static_cast<size_t>(i)]) - s.h * s.w / 2.0) / 64.0);
    }
  return b;
}

void run_pool_case(DType t, const PoolShape& s, uint32_t seed) {
  const int64_t oh = s.oh(), ow = s.ow();
  Buf x = distinct_buf(t, s, seed);
  Buf dy = random_buf(t, s.n * oh * ow * s.c, seed + 1);
  Buf y(t, dy.size()), dx(t, x.size());
  TensorView xv = view(x, {s.n, s.h, s.w, s.c}), yv = view(y, {s.n, oh, ow, s.c});
  TensorView dyv = view(dy, {s.n, oh, ow, s.c}), dxv = view(dx, {s.n, s.h, s.w, s.c});
  const bool is_max = s.p.kind == PoolKind::kMax;
  std::vector<uint8_t> workspace(static_cast<size_t>(pool2d_workspace_bytes(xv, s.p, yv)));
  if (is_max) {
    EXPECT_GT(workspace.size(), 0u);
  } else {
    EXPECT_EQ(workspace.size(), 0u);
  }
  pool2d_forward(xv, s.p, yv, is_max ? workspace.data() : nullptr);
  pool2d_backward(dyv, s.p, is_max ? workspace.data() : nullptr, xv, dxv);

  std::vector<double> yr(y.size()), ys(y.size()), dxr(x.size(), 0.0), dxs(x.size(), 0.0);
  for (int64_t n = 0; n < s.n; ++n)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j)
        for (int64_t c = 0; c < s.c; ++c) {
          const size_t yi = static_cast<size_t>(((n * oh + i) * ow + j) * s.c + c);
          double best = -1e300, sum = 0, mag = 0;
          size_t best_at = 0;
          int count = 0;
          std::vector<size_t> cells;
          for (int64_t a = 0; a < s.p.window_h; ++a)
            for (int64_t b = 0; b < s.p.window_w; ++b) {
              const int64_t ih = i * s.p.stride_h - s.p.pad_top + a;
              const int64_t iw = j * s.p.stride_w - s.p.pad_left + b;
              if (ih < 0 || ih >= s.h || iw < 0 || iw >= s.w) continue;
              const size_t xi = static_cast<size_t>(((n * s.h + ih) * s.w + iw) * s.c + c);
              cells.push_back(xi);
              const double v = x.get(xi);
              if (v > best) {
                best = v;
                best_at = xi;
              }
              sum += v;
              mag += std::fabs(v);
              ++count;
            }
          if (is_max) {
            yr[yi] = best;
            ys[yi] = std::fabs(best);
            dxr[best_at] += dy.get(yi);
            dxs[best_at] += std::fabs(dy.get(yi));
          } else {
            yr[yi] = sum / count;
            ys[yi] = mag / count;
            for (size_t xi : cells) {
              dxr[xi] += dy.get(yi) / count;
              dxs[xi] += std::fabs(dy.get(yi)) / count;
            }
          }
        }
  expect_close(y, yr, ys, is_max ? "max_pool forward" : "avg_pool forward");
  expect_close(dx, dxr, dxs, is_max ? "max_pool backward" : "avg_pool backward");
}

TEST(OneDnnPool, MaxValid2x2) {
  for (DType t : kComputeTypes) {
    PoolShape s{2, 8, 6, 5, Pool2dParams{}};
    run_pool_case(t, s, 30);
    PoolShape odd{2, 7, 9, 3, Pool2dParams{}};  // the last row/column is dropped
    run_pool_case(t, odd, 31);
  }
}

TEST(OneDnnPool, MaxSamePaddingAndOverlap) {
  for (DType t : kComputeTypes) {
    PoolShape s{2, 7, 8, 4, Pool2dParams{}};
    s.p.window_h = s.p.window_w = 3;
    s.p.pad_top = 1;
    s.p.pad_bottom = 1;
    s.p.pad_right = 1;
    run_pool_case(t, s, 32);
  }
}

TEST(OneDnnPool, AverageExcludesPadding) {
  for (DType t : kComputeTypes) {
    PoolShape s{2, 7, 8, 4, Pool2dParams{}};
    s.p.kind = PoolKind::kAverage;
    s.p.window_h = s.p.window_w = 3;
    s.p.stride_h = 2;
    s.p.stride_w = 1;
    s.p.pad_top = 1;
    s.p.pad_bottom = 1;
    s.p.pad_left = 1;
    s.p.pad_right = 1;
    run_pool_case(t, s, 33);
    PoolShape v{1, 6, 6, 3, Pool2dParams{}};
    v.p.kind = PoolKind::kAverage;
    run_pool_case(t, v, 34);
  }
}

TEST(OneDnnPool, RepeatedStepCreatesNoPrimitive) {
  PoolShape s{2, 8, 8, 4, Pool2dParams{}};
  run_pool_case(DType::kFloat32, s, 35);
  const int64_t created = onednn_primitives_created();
  run_pool_case(DType::kFloat32, s, 36);
  EXPECT_EQ(onednn_primitives_created(), created);
}

// ---------------------------------------------------------------------------------------------
// softmax / log-softmax

void run_softmax_case(DType t, int64_t rows, int64_t classes, bool log, uint32_t seed) {
  Buf x = random_buf(t, rows * classes, seed, -4.0, 4.0);
  Buf dy = random_buf(t, rows * classes, seed + 1);
  Buf y(t, x.size()), dx(t, x.size());
  // The backward pass reads y: give it the exact y rounded to the dtype.
  Buf y_in(t, x.size());
  std::vector<double> yr(x.size()), ys(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mx = -1e300;
    for (int64_t c = 0; c < classes; ++c) mx = std::max(mx, x.get(r * classes + c));
    double sum = 0;
    for (int64_t c = 0; c < classes; ++c) sum += std::exp(x.get(r * classes + c) - mx);
    for (int64_t c = 0; c < classes; ++c) {
      const size_t i = static_cast<size_t>(r * classes + c);
      const double v = x.get(i) - mx;
      yr[i] = log ? v - std::log(sum) : std::exp(v) / sum;
      // oneDNN's vectorized log is accurate to about 2e-6 absolute near log(1) = 0, hence the
      // extra 1 in the log-softmax scale (f32: 1e-5 absolute at least).
      ys[i] = log ? std::fabs(v) + std::fabs(std::log(sum)) + 1.0 : std::fabs(yr[i]);
      y_in.set(i, yr[i]);
    }
  }
  std::vector<double> dxr(x.size()), dxs(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double dot = 0, dot_mag = 0, sum_dy = 0, sum_dy_mag = 0;
    for (int64_t c = 0; c < classes; ++c) {
      const size_t i = static_cast<size_t>(r * classes + c);
      dot += dy.get(i) * y_in.get(i);
      dot_mag += std::fabs(dy.get(i) * y_in.get(i));
      sum_dy += dy.get(i);
      sum_dy_mag += std::fabs(dy.get(i));
    }
    for (int64_t c = 0; c < classes; ++c) {
      const size_t i = static_cast<size_t>(r * classes + c);
      const double yv = y_in.get(i);
      if (log) {
        dxr[i] = dy.get(i) - std::exp(yv) * sum_dy;
        dxs[i] = std::fabs(dy.get(i)) + std::exp(yv) * sum_dy_mag;
      } else {
        dxr[i] = yv * (dy.get(i) - dot);
        dxs[i] = std::fabs(yv) * (std::fabs(dy.get(i)) + dot_mag);
      }
    }
  }
  softmax_forward(view(x, {rows, classes}), log, view(y, {rows, classes}));
  softmax_backward(view(y_in, {rows, classes}), view(dy, {rows, classes}), log,
                   view(dx, {rows, classes}));
  expect_close(y, yr, ys, log ? "log_softmax forward" : "softmax forward");
  expect_close(dx, dxr, dxs, log ? "log_softmax backward" : "softmax backward");
}

TEST(OneDnnSoftmax, SoftmaxAndLogSoftmax) {
  for (DType t : kComputeTypes)
    for (bool log : {false, true}) {
      run_softmax_case(t, 7, 10, log, 40);
      run_softmax_case(t, 3, 37, log, 41);
      run_softmax_case(t, 5, 1, log, 42);
    }
}

// A loss's softmax (batch x classes, below kParallelMinElements) is made for one thread whatever
// the caller's count; a large one at two threads gets its own primitive. Numbers checked at both.
TEST(OneDnnSoftmax, SmallRunsOnTheCallingThreadOnly) {
  const int threads = omp_get_max_threads();
  omp_set_num_threads(2);
  run_softmax_case(DType::kFloat32, 64, 13, true, 64);
  int64_t created = onednn_primitives_created();
  omp_set_num_threads(1);
  run_softmax_case(DType::kFloat32, 64, 13, true, 65);
  EXPECT_EQ(onednn_primitives_created(), created);
  ASSERT_GE(int64_t{520} * 130, kParallelMinElements);
  run_softmax_case(DType::kFloat32, 520, 130, false, 66);
  created = onednn_primitives_created();
  omp_set_num_threads(2);
  run_softmax_case(DType::kFloat32, 520, 130, false, 67);
  EXPECT_GT(onednn_primitives_created(), created);
  EXPECT_EQ(omp_get_max_threads(), 2);
  omp_set_num_threads(threads);
}

TEST(OneDnnSoftmax, ThreeDimensionalUsesLastAxis) {
  Buf x = random_buf(DType::kFloat32, 2 * 3 * 4, 43), y(DType::kFloat32, 24);
  softmax_forward(view(x, {2, 3, 4}), false, view(y, {2, 3, 4}));
  for (int r = 0; r < 6; ++r) {
    double sum = 0;
    for (int c = 0; c < 4; ++c) sum += y.get(r * 4 + c);
    EXPECT_NEAR(sum, 1.0, 1e-6);
  }
}

// ---------------------------------------------------------------------------------------------
// batch norm and layer norm

// Normalization over `groups` independent sets; element (g, m) of set g lives at index(g, m).
// gamma/beta are indexed by param(g, m). Returns y, mean, var, and the backward results.
struct NormRef {
  std::vector<double> y, y_scale, mean, var, dx, dx_scale, dgamma, dgamma_scale, dbeta,
      dbeta_scale;
};

NormRef norm_reference(int64_t groups, int64_t members,
                       const std::function<size_t(int64_t, int64_t)>& index,
                       const std::function<size_t(int64_t, int64_t)>& param, size_t params,
                       const std::vector<double>& x, const std::vector<double>& dy,
                       const std::vector<double>& gamma, const std::vector<double>& beta,
                       double eps, const std::vector<double>* given_mean,
                       const std::vector<double>* given_var) {
  NormRef r;
  r.y.assign(x.size(), 0);
  r.y_scale.assign(x.size(), 0);
  r.dx.assign(x.size(), 0);
  r.dx_scale.assign(x.size(), 0);
  r.mean.assign(static_cast<size_t>(groups), 0);
  r.var.assign(static_cast<size_t>(groups), 0);
  r.dgamma.assign(params, 0);
  r.dgamma_scale.assign(params, 0);
  r.dbeta.assign(params, 0);
  r.dbeta_scale.assign(params, 0);
  for (int64_t g = 0; g < groups; ++g) {
    double mean = 0, var = 0;
    for (int64_t m = 0; m < members; ++m) mean += x[index(g, m)];
    mean /= members;
    for (int64_t m = 0; m < members; ++m) var += (x[index(g, m)] - mean) * (x[index(g, m)] - mean);
    var /= members;
    if (given_mean != nullptr) {
      mean = (*given_mean)[static_cast<size_t>(g)];
      var = (*given_var)[static_cast<size_t>(g)];
    }
    r.mean[static_cast<size_t>(g)] = mean;
    r.var[static_cast<size_t>(g)] = var;
    const double inv = 1.0 / std::sqrt(var + eps);
    double mean_dxhat = 0, mean_dxhat_xhat = 0, mag1 = 0, mag2 = 0;
    for (int64_t m = 0; m < members; ++m) {
      const size_t i = index(g, m), p = param(g, m);
      const double xhat = (x[i] - mean) * inv;
      r.y[i] = gamma[p] * xhat + beta[p];
      r.y_scale[i] = std::fabs(gamma[p] * xhat) + std::fabs(beta[p]);
      const double dxhat = dy[i] * gamma[p];
      mean_dxhat += dxhat / members;
      mean_dxhat_xhat += dxhat * xhat / members;
      mag1 += std::fabs(dxhat) / members;
      mag2 += std::fabs(dxhat * xhat) / members;
      r.dgamma[p] += dy[i] * xhat;
      r.dgamma_scale[p] += std::fabs(dy[i] * xhat);
      r.dbeta[p] += dy[i];
      r.dbeta_scale[p] += std::fabs(dy[i]);
    }
    for (int64_t m = 0; m < members; ++m) {
      const size_t i = index(g, m), p = param(g, m);
      const double xhat = (x[i] - mean) * inv;
      r.dx[i] = inv * (dy[i] * gamma[p] - mean_dxhat - xhat * mean_dxhat_xhat);
      r.dx_scale[i] = inv * (std::fabs(dy[i] * gamma[p]) + mag1 + std::fabs(xhat) * mag2);
    }
  }
  return r;
}

Buf to_f32_buf(const std::vector<double>& v) {
  Buf b(DType::kFloat32, v.size());
  for (size_t i = 0; i < v.size(); ++i) b.set(i, v[i]);
  return b;
}

TEST(OneDnnNorm, ReferenceBackwardMatchesFiniteDifferences) {
  // Validates the reference normalization gradient (layer-norm layout) in double.
  const int64_t rows = 3, c = 5;
  std::mt19937 gen(50);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> x(rows * c), g(rows * c), gamma(c), beta(c);
  for (auto* v : {&x, &g, &gamma, &beta})
    for (double& e : *v) e = dist(gen);
  auto idx = [&](int64_t r, int64_t m) { return static_cast<size_t>(r * c + m); };
  auto par = [&](int64_t, int64_t m) { return static_cast<size_t>(m); };
  auto loss = [&](const std::vector<double>& xx, const std::vector<double>& gg) {
    NormRef r = norm_reference(rows, c, idx, par, c, xx, g, gg, beta, 1e-3, nullptr, nullptr);
    double l = 0;
    for (size_t i = 0; i < r.y.size(); ++i) l += r.y[i] * g[i];
    return l;
  };
  NormRef r = norm_reference(rows, c, idx, par, c, x, g, gamma, beta, 1e-3, nullptr, nullptr);
  const double h = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    auto xp = x, xm = x;
    xp[i] += h;
    xm[i] -= h;
    EXPECT_NEAR((loss(xp, gamma) - loss(xm, gamma)) / (2 * h), r.dx[i], 1e-6) << i;
  }
  for (size_t i = 0; i < gamma.size(); ++i) {
    auto gp = gamma, gm = gamma;
    gp[i] += h;
    gm[i] -= h;
    EXPECT_NEAR((loss(x, gp) - loss(x, gm)) / (2 * h), r.dgamma[i], 1e-6) << i;
  }
}

void run_batch_norm_case(DType t, std::vector<int64_t> shape, uint32_t seed) {
  const int64_t c = shape.back();
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  const int64_t rows = n / c;
  const double eps = 1e-3;
  Buf x = random_buf(t, n, seed, -2.0, 3.0), dy = random_buf(t, n, seed + 1);
  Buf gamma = random_buf(DType::kFloat32, c, seed + 2, 0.5, 1.5);
  Buf beta = random_buf(DType::kFloat32, c, seed + 3);
  Buf y(t, n), dx(t, n), mean(DType::kFloat32, c), var(DType::kFloat32, c);
  Buf dgamma(DType::kFloat32, c), dbeta(DType::kFloat32, c);
  auto idx = [&](int64_t ch, int64_t r) { return static_cast<size_t>(r * c + ch); };
  auto par = [&](int64_t ch, int64_t) { return static_cast<size_t>(ch); };
  NormRef r = norm_reference(c, rows, idx, par, c, x.values(), dy.values(), gamma.values(),
                             beta.values(), eps, nullptr, nullptr);

  TensorView gv = view(gamma, {c}), bv = view(beta, {c}), mv = view(mean, {c}),
             vv = view(var, {c});
  batch_norm_forward(view(x, shape), gv, bv, mv, vv, eps, true, view(y, shape));
  expect_close(y, r.y, r.y_scale, "batch_norm forward (training)");
  expect_close(mean, r.mean, abs_of(r.mean), "batch_norm mean");
  expect_close(var, r.var, r.var, "batch_norm variance");
  // Backward with the exact statistics.
  Buf mean_exact = to_f32_buf(r.mean), var_exact = to_f32_buf(r.var);
  batch_norm_backward(view(x, shape), view(dy, shape), gv, view(mean_exact, {c}),
                      view(var_exact, {c}), eps, view(dx, shape), view(dgamma, {c}),
                      view(dbeta, {c}));
  expect_close(dx, r.dx, r.dx_scale, "batch_norm backward dx");
  expect_close(dgamma, r.dgamma, r.dgamma_scale, "batch_norm dgamma");
  expect_close(dbeta, r.dbeta, r.dbeta_scale, "batch_norm dbeta");

  // Inference reads given statistics.
  std::vector<double> given_mean(static_cast<size_t>(c)), given_var(static_cast<size_t>(c));
  for (int64_t i = 0; i < c; ++i) {
    given_mean[static_cast<size_t>(i)] = 0.1 * static_cast<double>(i);
    given_var[static_cast<size_t>(i)] = 0.5 + 0.25 * static_cast<double>(i);
  }
  Buf gm = to_f32_buf(given_mean), gvar = to_f32_buf(given_var);
  NormRef ri = norm_reference(c, rows, idx, par, c, x.values(), dy.values(), gamma.values(),
                              beta.values(), eps, &given_mean, &given_var);
  batch_norm_forward(view(x, shape), gv, bv, view(gm, {c}), view(gvar, {c}), eps, false,
                     view(y, shape));
  expect_close(y, ri.y, ri.y_scale, "batch_norm forward (inference)");
}

TEST(OneDnnNorm, BatchNorm) {
  for (DType t : kComputeTypes) {
    run_batch_norm_case(t, {4, 5, 6, 8}, 51);  // NHWC
    run_batch_norm_case(t, {16, 3}, 52);       // (N, C)
    run_batch_norm_case(t, {2, 3, 3, 19}, 53);
  }
}

void run_layer_norm_case(DType t, int64_t rows, int64_t c, uint32_t seed) {
  const double eps = 1e-3;
  Buf x = random_buf(t, rows * c, seed, -2.0, 3.0), dy = random_buf(t, rows * c, seed + 1);
  Buf gamma = random_buf(DType::kFloat32, c, seed + 2, 0.5, 1.5);
  Buf beta = random_buf(DType::kFloat32, c, seed + 3);
  Buf y(t, rows * c), dx(t, rows * c), mean(DType::kFloat32, rows), var(DType::kFloat32, rows);
  Buf dgamma(DType::kFloat32, c), dbeta(DType::kFloat32, c);
  auto idx = [&](int64_t r, int64_t m) { return static_cast<size_t>(r * c + m); };
  auto par = [&](int64_t, int64_t m) { return static_cast<size_t>(m); };
  NormRef r = norm_reference(rows, c, idx, par, c, x.values(), dy.values(), gamma.values(),
                             beta.values(), eps, nullptr, nullptr);
  TensorView gv = view(gamma, {c}), bv = view(beta, {c});
  layer_norm_forward(view(x, {rows, c}), gv, bv, eps, view(y, {rows, c}), view(mean, {rows}),
                     view(var, {rows}));
  expect_close(y, r.y, r.y_scale, "layer_norm forward");
  expect_close(mean, r.mean, abs_of(r.mean), "layer_norm mean");
  expect_close(var, r.var, r.var, "layer_norm variance");
  Buf mean_exact = to_f32_buf(r.mean), var_exact = to_f32_buf(r.var);
  layer_norm_backward(view(x, {rows, c}), view(dy, {rows, c}), gv, view(mean_exact, {rows}),
                      view(var_exact, {rows}), eps, view(dx, {rows, c}), view(dgamma, {c}),
                      view(dbeta, {c}));
  expect_close(dx, r.dx, r.dx_scale, "layer_norm backward dx");
  expect_close(dgamma, r.dgamma, r.dgamma_scale, "layer_norm dgamma");
  expect_close(dbeta, r.dbeta, r.dbeta_scale, "layer_norm dbeta");
}

TEST(OneDnnNorm, LayerNorm) {
  for (DType t : kComputeTypes) {
    run_layer_norm_case(t, 6, 16, 60);
    run_layer_norm_case(t, 9, 37, 61);
  }
}

TEST(OneDnnNorm, RepeatedStepCreatesNoPrimitive) {
  run_batch_norm_case(DType::kFloat32, {4, 5, 6, 8}, 70);
  run_layer_norm_case(DType::kFloat32, 6, 16, 71);
  run_softmax_case(DType::kFloat32, 7, 10, true, 72);
  const int64_t created = onednn_primitives_created();
  run_batch_norm_case(DType::kFloat32, {4, 5, 6, 8}, 73);
  run_layer_norm_case(DType::kFloat32, 6, 16, 74);
  run_softmax_case(DType::kFloat32, 7, 10, true, 75);
  EXPECT_EQ(onednn_primitives_created(), created);
}

// ---------------------------------------------------------------------------------------------
// the primitive cache

TEST(OneDnnCache, EvictsLeastRecentlyUsedBeyondCapacity) {
  constexpr int64_t kCapacity = 1024;  // onednn_context.h: kPrimitiveCacheCapacity
  Buf x = random_buf(DType::kFloat32, 1100 * 2, 80), y(DType::kFloat32, 1100 * 2);
  for (int64_t rows = 1; rows <= 1100; ++rows) {
    softmax_forward(view(x, {rows, 2}), false, view(y, {rows, 2}));
  }
  EXPECT_LE(onednn_primitive_cache_size(), kCapacity);
  // The most recent shape is still cached; the first one was evicted and is created again.
  int64_t created = onednn_primitives_created();
  softmax_forward(view(x, {1100, 2}), false, view(y, {1100, 2}));
  EXPECT_EQ(onednn_primitives_created(), created);
  softmax_forward(view(x, {1, 2}), false, view(y, {1, 2}));
  EXPECT_EQ(onednn_primitives_created(), created + 1);
}

TEST(OneDnnCache, ConcurrentCallsShareCachedPrimitives) {
  // Several threads run the same cached matmul and conv at once (user-managed scratchpads, so
  // no buffer is shared) and agree with a single-threaded run.
  const int64_t m = 64, k = 48, n = 40;
  Buf a = random_buf(DType::kFloat32, m * k, 81), b = random_buf(DType::kFloat32, k * n, 82);
  ConvShape cs = conv_shape(2, 12, 12, 8, 16, 3, 3);
  Buf x = random_buf(DType::kFloat32, cs.n * cs.h * cs.w * cs.c, 83);
  Buf w = random_buf(DType::kFloat32, cs.kh * cs.kw * cs.c * cs.f, 84);
  Buf mm_ref(DType::kFloat32, m * n), conv_ref(DType::kFloat32, cs.n * cs.oh() * cs.ow() * cs.f);
  onednn_matmul(view(a, {m, k}), view(b, {k, n}), nullptr, view(mm_ref, {m, n}));
  conv2d_forward(view(x, {cs.n, cs.h, cs.w, cs.c}), view(w, {cs.kh, cs.kw, cs.c, cs.f}), nullptr,
                 cs.p, view(conv_ref, {cs.n, cs.oh(), cs.ow(), cs.f}));
  constexpr int kThreads = 4;
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      Buf mm(DType::kFloat32, m * n), conv(DType::kFloat32, conv_ref.size());
      for (int i = 0; i < 20; ++i) {
        onednn_matmul(view(a, {m, k}), view(b, {k, n}), nullptr, view(mm, {m, n}));
        conv2d_forward(view(x, {cs.n, cs.h, cs.w, cs.c}), view(w, {cs.kh, cs.kw, cs.c, cs.f}),
                       nullptr, cs.p, view(conv, {cs.n, cs.oh(), cs.ow(), cs.f}));
        for (size_t e = 0; e < mm.size(); ++e)
          if (std::fabs(mm.get(e) - mm_ref.get(e)) > 1e-5) ++mismatches[t];
        for (size_t e = 0; e < conv.size(); ++e)
          if (std::fabs(conv.get(e) - conv_ref.get(e)) > 1e-5) ++mismatches[t];
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace gpuaccel::cpu
