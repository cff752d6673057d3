// The CUDA backend's ops on a GPU (the device machine, Colab; skipped elsewhere): each op runs
// through GPU 0's Backend on small inputs and is compared with a host reference built from the
// same element functors (cpp/kernels) or a plain loop.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backends/op_kinds.h"
#include "core/errors.h"
#include "memory/memory_manager.h"
#include "cuda_test_device.h"
#include "test_helpers.h"
#include "kernels/bitwise_functors.h"
#include "kernels/half_conversions.h"
#include "kernels/philox.h"
#include "kernels/unary_functors.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {
namespace {

#ifdef GPUACCEL_TEST_CUDA_BACKEND

class CudaOps : public CudaDeviceTest {
 protected:
  // A contiguous device tensor holding `values` (given as float, stored as `dtype`).
  TensorView upload(const std::vector<int64_t>& shape, const std::vector<float>& values,
                    DType dtype = DType::kFloat32) {
    TensorView v = view(shape, dtype);
    std::vector<unsigned char> host(bytes(v));
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == DType::kFloat32) std::memcpy(&host[i * 4], &values[i], 4);
      if (dtype == DType::kFloat16) {
        const uint16_t h = float_to_half_bits(values[i]);
        std::memcpy(&host[i * 2], &h, 2);
      }
      if (dtype == DType::kBFloat16) {
        const uint16_t h = float_to_bfloat16_bits(values[i]);
        std::memcpy(&host[i * 2], &h, 2);
      }
    }
    EXPECT_NO_THROW(backend_->copy_from_host(host.data(), v));
    return v;
  }
  TensorView view(const std::vector<int64_t>& shape, DType dtype = DType::kFloat32) {
    TensorView v = test::contiguous_view(nullptr, shape, dtype);
    v.data = device_alloc(bytes(v));
    return v;
  }
  static size_t bytes(const TensorView& v) {
    const size_t e = v.dtype == DType::kFloat32 || v.dtype == DType::kInt32 ? 4
                     : v.dtype == DType::kInt64 || v.dtype == DType::kFloat64 ? 8
                     : v.dtype == DType::kFloat16 || v.dtype == DType::kBFloat16 ? 2
                                                                                 : 1;
    return static_cast<size_t>(v.numel()) * e;
  }
  std::vector<float> download(const TensorView& v) {
    EXPECT_NO_THROW(backend_->synchronize());
    std::vector<unsigned char> host(bytes(v));
    EXPECT_NO_THROW(backend_->copy_to_host(v, host.data()));
    std::vector<float> out(v.numel());
    for (size_t i = 0; i < out.size(); ++i) {
      uint16_t h;
      switch (v.dtype) {
        case DType::kFloat32: std::memcpy(&out[i], &host[i * 4], 4); break;
        case DType::kFloat16: std::memcpy(&h, &host[i * 2], 2); out[i] = half_bits_to_float(h); break;
        case DType::kBFloat16: std::memcpy(&h, &host[i * 2], 2); out[i] = bfloat16_bits_to_float(h); break;
        case DType::kInt64: { int64_t x; std::memcpy(&x, &host[i * 8], 8); out[i] = static_cast<float>(x); break; }
        case DType::kUInt8: case DType::kBool: out[i] = host[i]; break;
        case DType::kInt32: { int32_t x; std::memcpy(&x, &host[i * 4], 4); out[i] = static_cast<float>(x); break; }
        case DType::kFloat64: { double x; std::memcpy(&x, &host[i * 8], 8); out[i] = static_cast<float>(x); break; }
      }
    }
    return out;
  }
  static void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], tol * std::max(1.0f, std::fabs(want[i]))) << "element " << i;
    }
  }
};

std::vector<float> ramp(size_t n, float start, float step) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + step * static_cast<float>(i);
  return v;
}

TEST_F(CudaOps, UnaryMatchesTheHostFunctorInEveryFloatDtype) {
  const std::vector<float> x = ramp(37, -2.0f, 0.11f);
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const TensorView dx = upload({37}, x, dt);
    const TensorView dy = view({37}, dt);
    ASSERT_NO_THROW(backend_->unary(UnaryOp::kGelu, dx, dy));
    const std::vector<float> xin = download(dx);  // the stored (rounded) inputs
    std::vector<float> want(x.size());
    for (size_t i = 0; i < x.size(); ++i) want[i] = kernels::GeluFunctor{}(xin[i]);
    const float tol = dt == DType::kFloat32 ? 1e-6f : dt == DType::kFloat16 ? 1e-3f : 8e-3f;
    expect_near(download(dy), want, tol);
  }
}

TEST_F(CudaOps, UnaryBackwardAndBroadcastBinary) {
  const TensorView x = upload({2, 3}, {-1, 0.5f, 2, 3, -4, 0.25f});
  const TensorView y = view({2, 3});
  const TensorView dy = upload({2, 3}, {1, 1, 1, 2, 2, 2});
  const TensorView dx = view({2, 3});
  ASSERT_NO_THROW(backend_->unary(UnaryOp::kSigmoid, x, y));
  ASSERT_NO_THROW(backend_->unary_backward(UnaryOp::kSigmoid, x, y, dy, dx));
  const std::vector<float> yv = download(y), dyv = download(dy);
  std::vector<float> want(6);
  for (int i = 0; i < 6; ++i) want[i] = kernels::SigmoidFunctor{}.backward(0.0f, yv[i], dyv[i]);
  expect_near(download(dx), want, 1e-6f);

  // (2,3) + (3,) broadcast as a stride-0 row.
  TensorView b = upload({3}, {10, 20, 30});
  TensorView bb = b;
  bb.ndim = 2;
  bb.shape[0] = 2; bb.strides[0] = 0;
  bb.shape[1] = 3; bb.strides[1] = 1;
  const TensorView out = view({2, 3});
  ASSERT_NO_THROW(backend_->binary(BinaryOp::kAdd, x, bb, out));
  expect_near(download(out), {9, 20.5f, 32, 13, 16, 30.25f}, 0);
  const TensorView cmp = view({2, 3}, DType::kBool);
  ASSERT_NO_THROW(backend_->binary(BinaryOp::kGreater, x, dy, cmp));
  expect_near(download(cmp), {0, 0, 1, 1, 0, 0}, 0);
}

TEST_F(CudaOps, CopyTransposesAndCasts) {
  const TensorView a = upload({2, 3}, {1, 2, 3, 4, 5, 6});
  TensorView at = a;  // (3, 2) transpose view
  at.shape[0] = 3; at.strides[0] = 1;
  at.shape[1] = 2; at.strides[1] = 3;
  const TensorView dst = view({3, 2}, DType::kBFloat16);
  ASSERT_NO_THROW(backend_->copy(at, dst));
  expect_near(download(dst), {1, 4, 2, 5, 3, 6}, 0);
  const TensorView filled = view({5}, DType::kInt64);
  ASSERT_NO_THROW(backend_->arange(filled, 3, 2));
  expect_near(download(filled), {3, 5, 7, 9, 11}, 0);
  ASSERT_NO_THROW(backend_->fill(filled, -7));
  expect_near(download(filled), {-7, -7, -7, -7, -7}, 0);
}

TEST_F(CudaOps, RandomAndDropoutMatchTheHostGenerator) {
  const TensorView u = view({1000});
  ASSERT_NO_THROW(backend_->random(RandomDistribution::kUniform, 42, 7, u));
  std::vector<float> want(1000);
  for (int i = 0; i < 1000; ++i) want[i] = kernels::philox_uniform(42, 7 + i);
  expect_near(download(u), want, 0);
  const TensorView nrm = view({1000});
  ASSERT_NO_THROW(backend_->random(RandomDistribution::kNormal, 42, 7, nrm));
  for (int i = 0; i < 1000; ++i) want[i] = kernels::philox_normal(42, 7 + i);
  expect_near(download(nrm), want, 1e-5f);  // device sin/cos/log may differ by an ulp or two

  const TensorView x = upload({1000}, std::vector<float>(1000, 1.0f));
  const TensorView y = view({1000});
  const TensorView mask = view({1000}, DType::kUInt8);
  ASSERT_NO_THROW(backend_->dropout(x, 0.25, 9, 0, y, mask));
  const std::vector<float> yv = download(y), mv = download(mask);
  for (int i = 0; i < 1000; ++i) {
    const bool keep = kernels::philox_uniform(9, i) >= 0.25f;
    EXPECT_EQ(mv[i], keep ? 1.0f : 0.0f);
    EXPECT_FLOAT_EQ(yv[i], keep ? 1.0f / 0.75f : 0.0f);
  }
}

TEST_F(CudaOps, ReduceSumMeanMaxArgmaxOverAxes) {
  const TensorView x = upload({2, 3, 4}, ramp(24, -5.0f, 0.5f));
  const TensorView s = view({2, 1, 4});
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kSum, x, 0b010, s));
  std::vector<float> want(8, 0.0f);
  const std::vector<float> xv = ramp(24, -5.0f, 0.5f);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) want[a * 4 + c] += xv[a * 12 + b * 4 + c];
  expect_near(download(s), want, 1e-6f);
  const TensorView all = view({1, 1, 1});
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kMax, x, 0b111, all));
  expect_near(download(all), {xv[23]}, 0);
  const TensorView arg = view({2, 3, 1}, DType::kInt64);
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kArgMin, x, 0b100, arg));
  expect_near(download(arg), {0, 0, 0, 0, 0, 0}, 0);
}

TEST_F(CudaOps, MatmulWithBiasBatchedAndTransposed) {
  // (2, 2, 3) @ (2, 3, 2) + bias(2).
  const std::vector<float> a = ramp(12, -1.0f, 0.25f), b = ramp(12, 0.5f, -0.125f);
  const std::vector<float> bias = {1, -1};
  std::vector<float> want(8);
  for (int n = 0; n < 2; ++n)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        float acc = bias[j];
        for (int k = 0; k < 3; ++k) acc += a[n * 6 + i * 3 + k] * b[n * 6 + k * 2 + j];
        want[n * 4 + i * 2 + j] = acc;
      }
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    const TensorView da = upload({2, 2, 3}, a, dt), db = upload({2, 3, 2}, b, dt), dbias = upload({2}, bias, dt);
    const TensorView out = view({2, 2, 2}, dt);
    if (dt == DType::kBFloat16 && cc_ < 80) {
      try {
        backend_->matmul(da, db, &dbias, out);
        ADD_FAILURE() << "bfloat16 matmul ran below compute capability 8.0";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kUnimplemented);
        EXPECT_NE(std::string(e.what()).find("compute capability 8.0"), std::string::npos) << e.what();
      }
      continue;
    }
    ASSERT_NO_THROW(backend_->matmul(da, db, &dbias, out));
    expect_near(download(out), want, dt == DType::kFloat32 ? 1e-6f : 2e-2f);
  }
  // b given as a transposed view of a (2, 3) row-major matrix: (3, 2) with strides (1, 3).
  const TensorView a2 = upload({2, 3}, {1, 2, 3, 4, 5, 6});
  TensorView bt = upload({2, 3}, {1, 0, 1, 0, 1, 0});
  bt.shape[0] = 3; bt.strides[0] = 1;
  bt.shape[1] = 2; bt.strides[1] = 3;
  const TensorView out2 = view({2, 2});
  ASSERT_NO_THROW(backend_->matmul(a2, bt, nullptr, out2));
  expect_near(download(out2), {4, 2, 10, 5}, 0);
}

// Operands that start inside a pool block (a view one element in, batch entries an odd number
// of elements apart): cuBLASLt's heuristic must be told their real alignment, or it may pick a
// kernel that needs 256-byte aligned pointers and faults or is refused (backends/cuda/matmul.cc).
TEST_F(CudaOps, MatmulOnOperandsThatStartInsideABlock) {
  const int B = 3, M = 33, K = 65, N = 17;
  const std::vector<float> a = ramp(B * M * K, -1.0f, 1.0f / 4096), b = ramp(B * K * N, 0.75f, -1.0f / 2048);
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    const size_t e = dt == DType::kFloat32 ? 4 : 2;
    // The reference from the values as stored (float16 rounds the inputs).
    auto stored = [&](float v) { return dt == DType::kFloat32 ? v : half_bits_to_float(float_to_half_bits(v)); };
    std::vector<float> want(B * M * N);
    for (int n = 0; n < B; ++n)
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double acc = 0;
          for (int k = 0; k < K; ++k) acc += double(stored(a[(n * M + i) * K + k])) * stored(b[(n * K + k) * N + j]);
          want[(n * M + i) * N + j] = static_cast<float>(acc);
        }
    // One element in: 4 (float32) or 2 (float16) bytes past a 256-byte aligned block.
    auto shifted = [&](const std::vector<int64_t>& shape, const std::vector<float>& values) {
      std::vector<int64_t> flat = {1};
      for (int64_t d : shape) flat[0] *= d;
      flat[0] += 1;
      std::vector<float> padded(1, 0.0f);
      padded.insert(padded.end(), values.begin(), values.end());
      TensorView v = upload(flat, padded, dt);
      TensorView out = view(shape, dt);
      out.data = static_cast<char*>(v.data) + e;
      return out;
    };
    const TensorView da = shifted({B, M, K}, a), db = shifted({B, K, N}, b);
    TensorView out = shifted({B, M, N}, std::vector<float>(B * M * N, 0.0f));
    ASSERT_NO_THROW(backend_->matmul(da, db, nullptr, out)) << dtype_name(dt);
    TensorView whole = out;
    whole.data = static_cast<char*>(out.data) - e;
    whole.ndim = 1;
    whole.shape[0] = B * M * N + 1;
    whole.strides[0] = 1;
    std::vector<float> got = download(whole);
    got.erase(got.begin());
    expect_near(got, want, dt == DType::kFloat32 ? 1e-5f : 1e-2f);
  }
}

// float32 convolutions run with FMA math, never TF32 (which rounds products to a 10-bit
// mantissa on sm_80+, about 1e-3 relative): a problem large enough for tensor-core algorithms,
// with values TF32 cannot hold, against a float64 loop.
TEST_F(CudaOps, Float32ConvolutionsMatchAFloat64LoopWithoutTf32Rounding) {
  const int N = 2, H = 16, W = 16, C = 64, F = 64, K = 3;
  std::vector<float> x(N * H * W * C), w(K * K * C * F);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return static_cast<float>(state >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;  // [-1, 1)
  };
  for (float& v : x) v = next();
  for (float& v : w) v = next() * 0.1f;
  std::vector<float> want(N * H * W * F);
  for (int n = 0; n < N; ++n)
    for (int oh = 0; oh < H; ++oh)
      for (int ow = 0; ow < W; ++ow)
        for (int f = 0; f < F; ++f) {
          double acc = 0;
          for (int kh = 0; kh < K; ++kh)
            for (int kw = 0; kw < K; ++kw) {
              const int ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              for (int c = 0; c < C; ++c) {
                acc += double(x[((n * H + ih) * W + iw) * C + c]) * w[((kh * K + kw) * C + c) * F + f];
              }
            }
          want[((n * H + oh) * W + ow) * F + f] = static_cast<float>(acc);
        }
  const TensorView dx = upload({N, H, W, C}, x), dw = upload({K, K, C, F}, w);
  const TensorView y = view({N, H, W, F});
  Conv2dParams p{1, 1, 1, 1, 1, 1, 1, 1};
  ASSERT_NO_THROW(backend_->conv2d_forward(dx, dw, nullptr, p, y));
  // |y| is about 1; float32 sums of 576 products stay within 1e-5 of it, TF32 does not.
  const std::vector<float> got = download(y);
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  EXPECT_LT(worst, 2e-5) << "float32 convolution error " << worst << " (TF32 gives about 1e-3)";
}

TEST_F(CudaOps, Conv2dForwardAndGradientsAgainstALoop) {
  // x (1, 4, 4, 2), w (3, 3, 2, 3) HWIO, stride 1, 'same' padding 1, bias.
  const int H = 4, W = 4, C = 2, F = 3, K = 3;
  const std::vector<float> x = ramp(H * W * C, -1.0f, 0.0625f), w = ramp(K * K * C * F, 0.5f, -0.02f);
  const std::vector<float> bias = {0.1f, 0.2f, 0.3f};
  std::vector<float> want(H * W * F);
  for (int oh = 0; oh < H; ++oh)
    for (int ow = 0; ow < W; ++ow)
      for (int f = 0; f < F; ++f) {
        float acc = bias[f];
        for (int kh = 0; kh < K; ++kh)
          for (int kw = 0; kw < K; ++kw)
            for (int c = 0; c < C; ++c) {
              const int ih = oh + kh - 1, iw = ow + kw - 1;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              acc += x[(ih * W + iw) * C + c] * w[((kh * K + kw) * C + c) * F + f];
            }
        want[(oh * W + ow) * F + f] = acc;
      }
  const TensorView dx = upload({1, H, W, C}, x), dw = upload({K, K, C, F}, w), db = upload({F}, bias);
  const TensorView y = view({1, H, W, F});
  Conv2dParams p{1, 1, 1, 1, 1, 1, 1, 1};
  ASSERT_NO_THROW(backend_->conv2d_forward(dx, dw, &db, p, y));
  expect_near(download(y), want, 1e-5f);

  // Gradients with dy = 1: dbias = H*W, dw[kh,kw,c,f] = sum of the x values it touched.
  const TensorView dy = upload({1, H, W, F}, std::vector<float>(H * W * F, 1.0f));
  const TensorView gw = view({K, K, C, F}), gb = view({F}), gx = view({1, H, W, C});
  ASSERT_NO_THROW(backend_->conv2d_backward_weights(dx, dy, p, gw, &gb));
  ASSERT_NO_THROW(backend_->conv2d_backward_data(dy, dw, p, gx));
  std::vector<float> want_gw(K * K * C * F, 0.0f), want_gx(H * W * C, 0.0f);
  for (int oh = 0; oh < H; ++oh)
    for (int ow = 0; ow < W; ++ow)
      for (int kh = 0; kh < K; ++kh)
        for (int kw = 0; kw < K; ++kw) {
          const int ih = oh + kh - 1, iw = ow + kw - 1;
          if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
          for (int c = 0; c < C; ++c)
            for (int f = 0; f < F; ++f) {
              want_gw[((kh * K + kw) * C + c) * F + f] += x[(ih * W + iw) * C + c];
              want_gx[(ih * W + iw) * C + c] += w[((kh * K + kw) * C + c) * F + f];
            }
        }
  expect_near(download(gw), want_gw, 1e-5f);
  expect_near(download(gx), want_gx, 1e-5f);
  expect_near(download(gb), {16, 16, 16}, 0);

  // Asymmetric ('same', stride 2 on an even size: top/left 0, bottom/right 1) runs too.
  Conv2dParams q{2, 2, 1, 1, 0, 1, 0, 1};
  const TensorView y2 = view({1, 2, 2, F});
  EXPECT_NO_THROW(backend_->conv2d_forward(dx, dw, nullptr, q, y2));
}

// Grouped convolutions (cudnnSetConvolutionGroupCount, the filter descriptor's C one group's
// channels): forward, backward data and backward weights against a loop in which filter f
// reads only its group's channels. Two groups, and the depthwise case (groups == C, two
// filters per channel) with asymmetric 'same' padding (the padded-input path); dy not constant,
// so a filter that read another group's channels would show in every output.
TEST_F(CudaOps, GroupedConv2dForwardAndGradientsAgainstALoop) {
  struct Case {
    int C, F, G, S;
    Conv2dParams p;
  };
  const int H = 6, W = 5, K = 3;
  for (const Case& c : {Case{4, 6, 2, 1, Conv2dParams{1, 1, 1, 1, 1, 1, 1, 1, 2}},
                        Case{3, 6, 3, 2, Conv2dParams{2, 2, 1, 1, 0, 1, 0, 1, 3}}}) {
    const int KC = c.C / c.G, OH = (H + c.p.pad_top + c.p.pad_bottom - K) / c.S + 1,
              OW = (W + c.p.pad_left + c.p.pad_right - K) / c.S + 1;
    const std::vector<float> x = ramp(H * W * c.C, -1.0f, 0.03125f),
                             w = ramp(K * K * KC * c.F, 0.5f, -0.015625f),
                             g = ramp(OH * OW * c.F, 0.25f, -0.0078125f);
    std::vector<double> want_y(OH * OW * c.F, 0.0), want_gx(H * W * c.C, 0.0),
        want_gw(K * K * KC * c.F, 0.0);
    for (int oh = 0; oh < OH; ++oh)
      for (int ow = 0; ow < OW; ++ow)
        for (int kh = 0; kh < K; ++kh)
          for (int kw = 0; kw < K; ++kw) {
            const int ih = oh * c.S + kh - int(c.p.pad_top), iw = ow * c.S + kw - int(c.p.pad_left);
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            for (int f = 0; f < c.F; ++f)
              for (int kc = 0; kc < KC; ++kc) {
                const int ch = f / (c.F / c.G) * KC + kc;
                const int xi = (ih * W + iw) * c.C + ch, wi = ((kh * K + kw) * KC + kc) * c.F + f,
                          yi = (oh * OW + ow) * c.F + f;
                want_y[yi] += double(x[xi]) * w[wi];
                want_gx[xi] += double(g[yi]) * w[wi];
                want_gw[wi] += double(g[yi]) * x[xi];
              }
          }
    const TensorView dx = upload({1, H, W, c.C}, x), dw = upload({K, K, KC, c.F}, w),
                     dg = upload({1, OH, OW, c.F}, g);
    const TensorView y = view({1, OH, OW, c.F}), gx = view({1, H, W, c.C}), gw = view({K, K, KC, c.F});
    ASSERT_NO_THROW(backend_->conv2d_forward(dx, dw, nullptr, c.p, y)) << "groups " << c.G;
    ASSERT_NO_THROW(backend_->conv2d_backward_data(dg, dw, c.p, gx)) << "groups " << c.G;
    ASSERT_NO_THROW(backend_->conv2d_backward_weights(dx, dg, c.p, gw, nullptr)) << "groups " << c.G;
    const auto as_float = [](const std::vector<double>& v) { return std::vector<float>(v.begin(), v.end()); };
    expect_near(download(y), as_float(want_y), 1e-5f);
    expect_near(download(gx), as_float(want_gx), 1e-5f);
    expect_near(download(gw), as_float(want_gw), 1e-5f);
  }
}

// The transposed convolution (cuDNN's backward data, then the bias) against the definition: each
// x pixel scattered through the (KH, KW, F, C) kernel. 'same' stride 2 onto an even output pads
// asymmetrically (the padded path); 'valid' with output_padding 1 leaves a last row and column
// that only the bias reaches.
TEST_F(CudaOps, Conv2dTransposeForwardAgainstALoop) {
  const int H = 3, W = 4, C = 2, F = 3, K = 3, S = 2;
  const std::vector<float> x = ramp(H * W * C, -1.0f, 0.09f), w = ramp(K * K * F * C, 0.5f, -0.02f);
  const std::vector<float> bias = {0.1f, -0.2f, 0.3f};
  struct Case {
    int out_h, out_w;
    Conv2dParams p;
  };
  for (const Case& c : {Case{6, 8, Conv2dParams{S, S, 1, 1, 0, 1, 0, 1}},
                        Case{8, 10, Conv2dParams{S, S, 1, 1, 0, 0, 0, 0}}}) {
    std::vector<float> want(c.out_h * c.out_w * F);
    for (int i = 0; i < c.out_h * c.out_w; ++i)
      for (int f = 0; f < F; ++f) want[i * F + f] = bias[f];
    for (int ih = 0; ih < H; ++ih)
      for (int iw = 0; iw < W; ++iw)
        for (int kh = 0; kh < K; ++kh)
          for (int kw = 0; kw < K; ++kw) {
            const int oh = ih * S - static_cast<int>(c.p.pad_top) + kh;
            const int ow = iw * S - static_cast<int>(c.p.pad_left) + kw;
            if (oh < 0 || oh >= c.out_h || ow < 0 || ow >= c.out_w) continue;
            for (int f = 0; f < F; ++f)
              for (int ch = 0; ch < C; ++ch)
                want[(oh * c.out_w + ow) * F + f] +=
                    x[(ih * W + iw) * C + ch] * w[((kh * K + kw) * F + f) * C + ch];
          }
    const TensorView dx = upload({1, H, W, C}, x), dw = upload({K, K, F, C}, w), db = upload({F}, bias);
    const TensorView y = view({1, c.out_h, c.out_w, F});
    ASSERT_NO_THROW(backend_->conv2d_transpose_forward(dx, dw, &db, c.p, y));
    expect_near(download(y), want, 1e-5f);
  }
}

// A shape's second and later calls run its cached plan (descriptors, algorithm, workspace from
// the arena): the same numbers, and the pool holds no more memory after them than after the first.
TEST_F(CudaOps, RepeatedConvolutionsReuseTheirPlanAndWorkspace) {
  const TensorView x = upload({8, 12, 12, 4}, ramp(8 * 12 * 12 * 4, -1.0f, 0.001f));
  const TensorView w = upload({3, 3, 4, 16}, ramp(3 * 3 * 4 * 16, 0.5f, -0.002f));
  const TensorView y = view({8, 10, 10, 16}), dx = view({8, 12, 12, 4}), dw = view({3, 3, 4, 16});
  const Conv2dParams p{1, 1, 1, 1, 0, 0, 0, 0};
  auto pool = MemoryManager::instance().allocator_for(DeviceRegistry::instance().logical_devices(DeviceType::kGPU)[0]);
  std::vector<float> first;
  int64_t held = -1;
  for (int call = 0; call < 3; ++call) {
    ASSERT_NO_THROW(backend_->conv2d_forward(x, w, nullptr, p, y));
    ASSERT_NO_THROW(backend_->conv2d_backward_data(y, w, p, dx));
    ASSERT_NO_THROW(backend_->conv2d_backward_weights(x, y, p, dw, nullptr));
    const std::vector<float> out = download(y);
    if (call == 0) {
      first = out;
      held = pool->stats().requested_bytes.current;
    } else {
      EXPECT_EQ(out, first);
      EXPECT_EQ(pool->stats().requested_bytes.current, held);
    }
  }
}

TEST_F(CudaOps, PoolingSoftmaxAndBatchNorm) {
  const TensorView x = upload({1, 2, 2, 2}, {1, -1, 4, -2, 3, -3, 2, -4});
  const TensorView y = view({1, 1, 1, 2});
  const Pool2dParams p{PoolKind::kMax, 2, 2, 2, 2, 0, 0, 0, 0};
  const int64_t ws_bytes = backend_->pool2d_workspace_bytes(x, p, y);
  EXPECT_EQ(ws_bytes, 2 * 4);  // a copy of y only: the backward reads x itself
  void* ws = device_alloc(static_cast<size_t>(ws_bytes));
  ASSERT_NO_THROW(backend_->pool2d_forward(x, p, y, ws));
  expect_near(download(y), {4, -1}, 0);
  const TensorView dy = upload({1, 1, 1, 2}, {10, 20});
  const TensorView dx = view({1, 2, 2, 2});
  ASSERT_NO_THROW(backend_->pool2d_backward(dy, p, ws, x, dx));
  expect_near(download(dx), {0, 20, 10, 0, 0, 0, 0, 0}, 0);

  const TensorView logits = upload({2, 3}, {1, 2, 3, -1, 0, 1000});
  const TensorView sm = view({2, 3}), lsm = view({2, 3});
  ASSERT_NO_THROW(backend_->softmax_forward(logits, 0, sm));
  ASSERT_NO_THROW(backend_->softmax_forward(logits, 1, lsm));
  const float z = std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f);
  expect_near(download(sm), {std::exp(1.0f) / z, std::exp(2.0f) / z, std::exp(3.0f) / z, 0, 0, 1}, 1e-6f);
  expect_near(download(lsm), {1 - std::log(z), 2 - std::log(z), 3 - std::log(z), -1001, -1000, 0}, 1e-5f);

  // Batch norm (training) over (4, 2): per-channel biased mean/var written.
  const TensorView bx = upload({4, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  const TensorView gamma = upload({2}, {1, 2}), beta = upload({2}, {0, 1});
  const TensorView mean = view({2}), var = view({2}), by = view({4, 2});
  ASSERT_NO_THROW(backend_->batch_norm_forward(bx, gamma, beta, mean, var, 1e-3, 1, by));
  expect_near(download(mean), {2.5f, 25}, 1e-6f);
  expect_near(download(var), {1.25f, 125}, 1e-5f);
  const std::vector<float> byv = download(by);
  EXPECT_NEAR(byv[0], (1 - 2.5f) / std::sqrt(1.25f + 1e-3f), 1e-4f);
  EXPECT_NEAR(byv[1], 2 * (10 - 25) / std::sqrt(125 + 1e-3f) + 1, 1e-4f);
}

// Batch norm through cuDNN's legacy API in the 16-bit dtypes of mixed precision (bfloat16 from
// compute capability 8.0) and over a single row (a batch of one: the variance of one value is 0),
// which the float32 test above does not reach.
TEST_F(CudaOps, BatchNormIn16BitDtypesAndOverOneRow) {
  const TensorView gamma = upload({2}, {1, 2}), beta = upload({2}, {0, 1});
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    if (dt == DType::kBFloat16 && cc_ < 80) continue;  // refused below 8.0 (tested with matmul)
    const TensorView bx = upload({4, 2}, {1, 10, 2, 20, 3, 30, 4, 40}, dt);
    const TensorView mean = view({2}), var = view({2}), by = view({4, 2}, dt);
    ASSERT_NO_THROW(backend_->batch_norm_forward(bx, gamma, beta, mean, var, 1e-3, 1, by)) << dtype_name(dt);
    expect_near(download(mean), {2.5f, 25}, 1e-5f);
    expect_near(download(var), {1.25f, 125}, 1e-4f);
    const std::vector<float> byv = download(by);
    EXPECT_NEAR(byv[0], (1 - 2.5f) / std::sqrt(1.25f + 1e-3f), 2e-2f) << dtype_name(dt);
    const TensorView dy = upload({4, 2}, {1, 1, 1, 1, 1, 1, 1, 1}, dt);
    const TensorView dx = view({4, 2}, dt), dgamma = view({2}), dbeta = view({2});
    ASSERT_NO_THROW(backend_->batch_norm_backward(bx, dy, gamma, mean, var, 1e-3, dx, dgamma, dbeta))
        << dtype_name(dt);
    expect_near(download(dbeta), {4, 4}, 1e-5f);
    expect_near(download(dx), std::vector<float>(8, 0.0f), 2e-2f);  // a constant dy has no x-gradient
  }
  // One row: mean is the row, variance 0, y = beta.
  const TensorView one = upload({1, 2}, {3, -5});
  const TensorView mean = view({2}), var = view({2}), y = view({1, 2});
  ASSERT_NO_THROW(backend_->batch_norm_forward(one, gamma, beta, mean, var, 1e-3, 1, y));
  expect_near(download(mean), {3, -5}, 1e-6f);
  expect_near(download(var), {0, 0}, 0);
  expect_near(download(y), {0, 1}, 1e-5f);
}

// The gradients over one row, which the backend computes without cuDNN (x - mean is 0): dx and
// dgamma are 0, dbeta is dy; in every float dtype.
TEST_F(CudaOps, BatchNormBackwardOverOneRow) {
  const TensorView gamma = upload({2}, {1, 2}), mean = upload({2}, {3, -5}), var = upload({2}, {0, 0});
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    if (dt == DType::kBFloat16 && cc_ < 80) continue;
    const TensorView x = upload({1, 2}, {3, -5}, dt), dy = upload({1, 2}, {0.5f, -2}, dt);
    const TensorView dx = view({1, 2}, dt), dgamma = view({2}), dbeta = view({2});
    ASSERT_NO_THROW(backend_->batch_norm_backward(x, dy, gamma, mean, var, 1e-3, dx, dgamma, dbeta)) << dtype_name(dt);
    expect_near(download(dx), {0, 0}, 0);
    expect_near(download(dgamma), {0, 0}, 0);
    expect_near(download(dbeta), {0.5f, -2}, 0);
  }
}

// The course CNN's first layer: NHWC with one input channel, in all three directions, float32
// and float16, against a float64 loop on the stored values. The backend tries the heuristic's
// algorithms and then general fallbacks (backends/cuda/conv_candidates.h) until cuDNN takes one.
TEST_F(CudaOps, ConvolutionsWithOneInputChannelInEveryDirection) {
  const int N = 2, H = 9, W = 9, F = 8, K = 3, OH = H - K + 1, OW = W - K + 1;
  const std::vector<float> x = ramp(N * H * W, -1.0f, 1.0f / 64), w = ramp(K * K * F, 0.5f, -1.0f / 32);
  const std::vector<float> g = ramp(N * OH * OW * F, 0.25f, -1.0f / 256);
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    auto stored = [&](float v) { return dt == DType::kFloat32 ? v : half_bits_to_float(float_to_half_bits(v)); };
    std::vector<float> want_y(N * OH * OW * F), want_gx(N * H * W, 0.0f), want_gw(K * K * F, 0.0f);
    for (int n = 0; n < N; ++n)
      for (int oh = 0; oh < OH; ++oh)
        for (int ow = 0; ow < OW; ++ow)
          for (int f = 0; f < F; ++f) {
            double acc = 0;
            const double gy = stored(g[((n * OH + oh) * OW + ow) * F + f]);
            for (int kh = 0; kh < K; ++kh)
              for (int kw = 0; kw < K; ++kw) {
                const int xi = (n * H + oh + kh) * W + ow + kw, wi = (kh * K + kw) * F + f;
                acc += double(stored(x[xi])) * stored(w[wi]);
                want_gx[xi] += static_cast<float>(gy * stored(w[wi]));
                want_gw[wi] += static_cast<float>(gy * stored(x[xi]));
              }
            want_y[((n * OH + oh) * OW + ow) * F + f] = static_cast<float>(acc);
          }
    const TensorView dx = upload({N, H, W, 1}, x, dt), dw = upload({K, K, 1, F}, w, dt);
    const TensorView dg = upload({N, OH, OW, F}, g, dt);
    const TensorView y = view({N, OH, OW, F}, dt), gx = view({N, H, W, 1}, dt), gw = view({K, K, 1, F}, dt);
    const Conv2dParams p{1, 1, 1, 1, 0, 0, 0, 0};
    ASSERT_NO_THROW(backend_->conv2d_forward(dx, dw, nullptr, p, y)) << dtype_name(dt);
    ASSERT_NO_THROW(backend_->conv2d_backward_data(dg, dw, p, gx)) << dtype_name(dt);
    ASSERT_NO_THROW(backend_->conv2d_backward_weights(dx, dg, p, gw, nullptr)) << dtype_name(dt);
    const float tol = dt == DType::kFloat32 ? 1e-5f : 1e-2f;
    expect_near(download(y), want_y, tol);
    expect_near(download(gx), want_gx, tol);
    expect_near(download(gw), want_gw, dt == DType::kFloat32 ? 1e-4f : 5e-2f);
  }
}

// A bias that starts inside a block (a slice of a larger vector): the epilogue is planned for
// its real alignment, and a bias under 16 bytes aligned is copied to an aligned block first
// (backends/cuda/matmul_alignment.h).
TEST_F(CudaOps, MatmulWithABiasThatStartsInsideABlock) {
  const int M = 5, K = 7, N = 9;
  const std::vector<float> a = ramp(M * K, -1.0f, 0.05f), b = ramp(K * N, 0.5f, -0.03f), bias = ramp(N + 3, -2, 0.5f);
  for (DType dt : {DType::kFloat32, DType::kFloat16}) {
    auto stored = [&](float v) { return dt == DType::kFloat32 ? v : half_bits_to_float(float_to_half_bits(v)); };
    const size_t e = dt == DType::kFloat32 ? 4 : 2;
    const TensorView da = upload({M, K}, a, dt), db = upload({K, N}, b, dt);
    const TensorView whole_bias = upload({N + 3}, bias, dt);
    for (int offset : {1, 2, 3}) {  // 4, 8, 12 bytes in (float32); 2, 4, 6 (float16)
      TensorView sliced = whole_bias;
      sliced.shape[0] = N;
      sliced.data = static_cast<char*>(whole_bias.data) + offset * e;
      std::vector<float> want(M * N);
      for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
          double acc = stored(bias[offset + j]);
          for (int k = 0; k < K; ++k) acc += double(stored(a[i * K + k])) * stored(b[k * N + j]);
          want[i * N + j] = static_cast<float>(acc);
        }
      const TensorView out = view({M, N}, dt);
      ASSERT_NO_THROW(backend_->matmul(da, db, &sliced, out)) << dtype_name(dt) << " offset " << offset;
      expect_near(download(out), want, dt == DType::kFloat32 ? 1e-5f : 1e-2f);
    }
  }
}

// Two threads running cuDNN and cuBLASLt ops on one GPU at the same moment: each call holds the
// device's handle for its thread (backends/cuda/shared_handle.h), so both get the results one
// thread alone gets.
TEST_F(CudaOps, TwoThreadsRunLibraryOpsOnOneGpuAtOnce) {
  struct Work {
    TensorView x, w, y, logits, sm, a, b, out;
  };
  auto make = [&] {
    Work k;
    k.x = upload({4, 10, 10, 1}, ramp(400, -1.0f, 0.005f));
    k.w = upload({3, 3, 1, 8}, ramp(72, 0.5f, -0.01f));
    k.y = view({4, 8, 8, 8});
    k.logits = upload({16, 10}, ramp(160, -3.0f, 0.04f));
    k.sm = view({16, 10});
    k.a = upload({16, 32}, ramp(512, -1.0f, 0.004f));
    k.b = upload({32, 8}, ramp(256, 0.5f, -0.004f));
    k.out = view({16, 8});
    return k;
  };
  const Conv2dParams p{1, 1, 1, 1, 0, 0, 0, 0};
  auto run = [&](const Work& k) {
    backend_->conv2d_forward(k.x, k.w, nullptr, p, k.y);
    backend_->softmax_forward(k.logits, 0, k.sm);
    backend_->matmul(k.a, k.b, nullptr, k.out);
  };
  Work one = make(), two = make();
  ASSERT_NO_THROW(run(one));
  const std::vector<float> want_y = download(one.y), want_sm = download(one.sm), want_out = download(one.out);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (const Work* k : {&one, &two}) {
    threads.emplace_back([&, k] {
      try {
        for (int i = 0; i < 50; ++i) run(*k);
      } catch (const std::exception&) {
        ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  for (const Work* k : {&one, &two}) {
    EXPECT_EQ(download(k->y), want_y);
    EXPECT_EQ(download(k->sm), want_sm);
    EXPECT_EQ(download(k->out), want_out);
  }
}

// Layer norm over the last dimension vs a double loop on the stored (rounded) inputs: biased
// variance, epsilon inside the sqrt, mean/var (rows,) f32; dgamma/dbeta as column sums. 200 rows
// take the chunked column-sum path, 3 rows the single-chunk one; C = 37 spans two column blocks.
TEST_F(CudaOps, LayerNormForwardAndBackwardAgainstADoubleLoop) {
  const double eps = 1e-3;
  for (const auto& dims : std::vector<std::pair<int64_t, int64_t>>{{3, 5}, {200, 37}}) {
    const int64_t rows = dims.first, c = dims.second;
    std::vector<float> x(rows * c), dy(rows * c), gamma(c), beta(c);
    for (int64_t i = 0; i < rows * c; ++i) {
      x[i] = 2.0f * std::sin(0.37f * static_cast<float>(i)) + 0.1f * static_cast<float>(i % 7);
      dy[i] = std::cos(0.23f * static_cast<float>(i)) - 0.25f;
    }
    for (int64_t j = 0; j < c; ++j) {
      gamma[j] = 0.5f + 0.05f * static_cast<float>(j);
      beta[j] = -0.3f + 0.02f * static_cast<float>(j);
    }
    for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
      SCOPED_TRACE("rows " + std::to_string(rows) + " dtype " + std::to_string(static_cast<int>(dt)));
      const TensorView dx_in = upload({rows, c}, x, dt), ddy = upload({rows, c}, dy, dt);
      const TensorView dg = upload({c}, gamma), db = upload({c}, beta);
      const TensorView y = view({rows, c}, dt), mean = view({rows}), var = view({rows});
      ASSERT_NO_THROW(backend_->layer_norm_forward(dx_in, dg, db, eps, y, mean, var));
      const TensorView gx = view({rows, c}, dt), ggamma = view({c}), gbeta = view({c});
      ASSERT_NO_THROW(backend_->layer_norm_backward(dx_in, ddy, dg, mean, var, eps, gx, ggamma, gbeta));
      const std::vector<float> xs = download(dx_in), dys = download(ddy);
      std::vector<float> want_y(rows * c), want_mean(rows), want_var(rows), want_dx(rows * c);
      std::vector<double> want_dgamma(c, 0.0), want_dbeta(c, 0.0);
      for (int64_t r = 0; r < rows; ++r) {
        double m = 0, v = 0;
        for (int64_t j = 0; j < c; ++j) m += xs[r * c + j];
        m /= static_cast<double>(c);
        for (int64_t j = 0; j < c; ++j) v += (xs[r * c + j] - m) * (xs[r * c + j] - m);
        v /= static_cast<double>(c);
        const double rstd = 1.0 / std::sqrt(v + eps);
        double sg = 0, sgx = 0;
        for (int64_t j = 0; j < c; ++j) {
          const double xhat = (xs[r * c + j] - m) * rstd;
          const double g = static_cast<double>(dys[r * c + j]) * gamma[j];
          want_y[r * c + j] = static_cast<float>(xhat * gamma[j] + beta[j]);
          sg += g;
          sgx += g * xhat;
          want_dgamma[j] += dys[r * c + j] * xhat;
          want_dbeta[j] += dys[r * c + j];
        }
        for (int64_t j = 0; j < c; ++j) {
          const double xhat = (xs[r * c + j] - m) * rstd;
          const double g = static_cast<double>(dys[r * c + j]) * gamma[j];
          want_dx[r * c + j] = static_cast<float>(rstd * (g - sg / c - xhat * sgx / c));
        }
        want_mean[r] = static_cast<float>(m);
        want_var[r] = static_cast<float>(v);
      }
      const float tol = dt == DType::kFloat32 ? 1e-4f : dt == DType::kFloat16 ? 2e-3f : 1e-2f;
      expect_near(download(mean), want_mean, 1e-5f);
      expect_near(download(var), want_var, 1e-5f);
      expect_near(download(y), want_y, tol);
      expect_near(download(gx), want_dx, tol);
      expect_near(download(ggamma), std::vector<float>(want_dgamma.begin(), want_dgamma.end()), 1e-4f);
      expect_near(download(gbeta), std::vector<float>(want_dbeta.begin(), want_dbeta.end()), 1e-4f);
    }
  }
}

// Pooling with asymmetric padding (Keras 'same' on odd totals) vs host loops: max ignores the
// padding, average divides by the number of window elements inside the input.
TEST_F(CudaOps, AsymmetricMaxAndAveragePoolingAgainstLoops) {
  struct Case {
    int64_t h, w, kh, kw, sh, sw, pt, pb, pl, pr;
  };
  // (5, 6), window (4, 3), stride (1, 2): pads top 1 / bottom 2, left 0 / right 1.
  // (5, 4), window (2, 2), stride (2, 2): pads top 0 / bottom 1, left 0 / right 0.
  const Case cases[] = {{5, 6, 4, 3, 1, 2, 1, 2, 0, 1}, {5, 4, 2, 2, 2, 2, 0, 1, 0, 0}};
  const int64_t n = 2, c = 3;
  for (const Case& k : cases) {
    const int64_t oh = (k.h + k.pt + k.pb - k.kh) / k.sh + 1, ow = (k.w + k.pl + k.pr - k.kw) / k.sw + 1;
    const int64_t nx = n * k.h * k.w * c, ny = n * oh * ow * c;
    std::vector<float> x(nx), dy(ny);
    for (int64_t i = 0; i < nx; ++i) x[i] = static_cast<float>((i * 37) % nx) * 0.01f - 0.7f;  // distinct
    for (int64_t i = 0; i < ny; ++i) dy[i] = 0.5f + 0.125f * static_cast<float>(i % 11);
    for (PoolKind kind : {PoolKind::kMax, PoolKind::kAverage}) {
      for (DType dt : {DType::kFloat32, DType::kFloat16}) {
        SCOPED_TRACE("kind " + std::to_string(static_cast<int>(kind)) + " window " + std::to_string(k.kh) + " dtype " +
                     std::to_string(static_cast<int>(dt)));
        const Pool2dParams p{kind, k.kh, k.kw, k.sh, k.sw, k.pt, k.pb, k.pl, k.pr};
        const TensorView dx_in = upload({n, k.h, k.w, c}, x, dt), ddy = upload({n, oh, ow, c}, dy, dt);
        const TensorView y = view({n, oh, ow, c}, dt), gx = view({n, k.h, k.w, c}, dt);
        void* ws = nullptr;
        if (kind == PoolKind::kMax) {
          ws = device_alloc(static_cast<size_t>(backend_->pool2d_workspace_bytes(dx_in, p, y)));
        }
        ASSERT_NO_THROW(backend_->pool2d_forward(dx_in, p, y, ws));
        ASSERT_NO_THROW(backend_->pool2d_backward(ddy, p, ws, dx_in, gx));
        const std::vector<float> xs = download(dx_in), dys = download(ddy);
        std::vector<float> want_y(ny);
        std::vector<double> want_dx(nx, 0.0);
        for (int64_t b = 0; b < n; ++b)
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j)
              for (int64_t ch = 0; ch < c; ++ch) {
                const int64_t out = ((b * oh + i) * ow + j) * c + ch;
                double best = -INFINITY, sum = 0;
                int64_t best_at = -1, count = 0;
                for (int64_t a = 0; a < k.kh; ++a)
                  for (int64_t e = 0; e < k.kw; ++e) {
                    const int64_t ih = i * k.sh - k.pt + a, iw = j * k.sw - k.pl + e;
                    if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                    const int64_t at = ((b * k.h + ih) * k.w + iw) * c + ch;
                    sum += xs[at];
                    ++count;
                    if (xs[at] > best) best = xs[at], best_at = at;
                  }
                ASSERT_GT(count, 0);
                if (kind == PoolKind::kMax) {
                  want_y[out] = static_cast<float>(best);
                  want_dx[best_at] += dys[out];
                } else {
                  want_y[out] = static_cast<float>(sum / count);
                  for (int64_t a = 0; a < k.kh; ++a)
                    for (int64_t e = 0; e < k.kw; ++e) {
                      const int64_t ih = i * k.sh - k.pt + a, iw = j * k.sw - k.pl + e;
                      if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                      want_dx[((b * k.h + ih) * k.w + iw) * c + ch] += dys[out] / count;
                    }
                }
              }
        const float tol = dt == DType::kFloat32 ? 1e-5f : 2e-3f;
        expect_near(download(y), want_y, tol);
        expect_near(download(gx), std::vector<float>(want_dx.begin(), want_dx.end()), tol);
      }
    }
  }
}

TEST_F(CudaOps, PinnedCopiesAndEventsOnTheDeviceStream) {
  void* pinned = nullptr;
  std::string err;
  ASSERT_EQ(library_->malloc_host_pinned(64, &pinned, &err), CudaStatus::kOk) << err;
  for (int i = 0; i < 16; ++i) static_cast<float*>(pinned)[i] = static_cast<float>(i);
  const TensorView d = view({16});
  void* start = nullptr;
  void* end = nullptr;
  ASSERT_TRUE(library_->create_event(ordinal_, &start));
  ASSERT_TRUE(library_->create_event(ordinal_, &end));
  ASSERT_TRUE(library_->record_event(ordinal_, start));
  ASSERT_NO_THROW(backend_->copy_from_host(pinned, d));
  ASSERT_NO_THROW(backend_->unary(UnaryOp::kSquare, d, d));
  ASSERT_TRUE(library_->record_event(ordinal_, end));
  ASSERT_NO_THROW(backend_->copy_to_host(d, pinned));
  float ms = -1;
  ASSERT_TRUE(library_->elapsed_ms(start, end, &ms));
  EXPECT_GE(ms, 0.0f);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<float*>(pinned)[i], static_cast<float>(i * i));
  library_->destroy_event(start);
  library_->destroy_event(end);
  EXPECT_EQ(library_->free_host_pinned(pinned, &err), CudaStatus::kOk) << err;
}

// Device bits of a contiguous view, and a view filled from host bits.
template <typename Bits>
std::vector<Bits> download_bits(Backend& backend, const TensorView& v) {
  std::vector<Bits> out(static_cast<size_t>(v.numel()));
  EXPECT_NO_THROW(backend.copy_to_host(v, out.data()));
  return out;
}

// The loss-scale finite check: one call over more tensors than one launch takes (64), of every
// float dtype, sizes that split into many tiles and leave odd tails, and a view starting 2 bytes
// into a block (no 16-byte vector loads); the flag is overwritten on every call.
TEST_F(CudaOps, AnyNonfiniteOverEveryGradientOfAStep) {
  std::vector<TensorView> tensors;
  const DType dtypes[3] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  for (int i = 0; i < 70; ++i) {
    const int64_t n = i == 5 ? (int64_t{1} << 20) + 3 : 1 + 37 * i;
    tensors.push_back(upload({n}, std::vector<float>(static_cast<size_t>(n), 0.25f), dtypes[i % 3]));
  }
  TensorView offset = tensors[4];  // float16: starts one element (2 bytes) in
  offset.data = static_cast<char*>(offset.data) + 2;
  offset.shape[0] -= 1;
  offset.strides[0] = 1;
  tensors.push_back(offset);
  const TensorView flag = upload({}, {7.0f});
  ASSERT_NO_THROW(backend_->any_nonfinite(tensors, flag));
  EXPECT_EQ(download(flag), std::vector<float>{0.0f});
  const float kInf = std::numeric_limits<float>::infinity();
  const float kNaN = std::numeric_limits<float>::quiet_NaN();
  // (tensor, element, value): the last element of the 1M float16 tensor (index 5), one in the
  // second launch's tensors, and the unaligned view's last element.
  const std::vector<std::tuple<int, int64_t, float>> cases = {
      {5, (int64_t{1} << 20) + 2, kInf}, {68, 100, -kInf}, {69, 0, kNaN}, {70, 1 + 37 * 4 - 2, kInf}};
  for (const auto& [t, element, bad] : cases) {
    TensorView one = tensors[t];
    const size_t size = one.dtype == DType::kFloat32 ? 4 : 2;
    one.data = static_cast<char*>(one.data) + element * size;
    one.ndim = 0;
    const TensorView value = upload({}, {bad}, one.dtype);
    ASSERT_NO_THROW(backend_->copy(value, one));
    ASSERT_NO_THROW(backend_->any_nonfinite(tensors, flag));
    EXPECT_EQ(download(flag), std::vector<float>{1.0f}) << "tensor " << t;
    const TensorView fine = upload({}, {0.25f}, one.dtype);
    ASSERT_NO_THROW(backend_->copy(fine, one));
    ASSERT_NO_THROW(backend_->any_nonfinite(tensors, flag));
    EXPECT_EQ(download(flag), std::vector<float>{0.0f}) << "tensor " << t;
  }
}

// The device's hardware conversions (half_conversions.h under __CUDA_ARCH__) against the host's
// bit functions: every float16 and bfloat16 pattern widened, and float32 values at, between and
// around every 16-bit value narrowed (the ties decide round-to-nearest-even). NaNs only need to
// stay NaN (CUDA returns its canonical NaN).
TEST_F(CudaOps, SixteenBitConversionsRoundAsTheHostBitFunctions) {
  for (DType narrow : {DType::kFloat16, DType::kBFloat16}) {
    const bool f16 = narrow == DType::kFloat16;
    auto widen = [&](uint16_t b) { return f16 ? half_bits_to_float_bits(b) : bfloat16_bits_to_float_bits(b); };
    auto narrow_bits = [&](uint32_t f) { return f16 ? float_bits_to_half_bits(f) : float_bits_to_bfloat16_bits(f); };
    auto is_nan32 = [](uint32_t f) { return (f & 0x7fffffffu) > 0x7f800000u; };
    std::vector<uint16_t> patterns(65536);
    for (uint32_t b = 0; b < 65536; ++b) patterns[b] = static_cast<uint16_t>(b);
    TensorView h = view({65536}, narrow);
    ASSERT_NO_THROW(backend_->copy_from_host(patterns.data(), h));
    const TensorView wide = view({65536});
    ASSERT_NO_THROW(backend_->copy(h, wide));
    const std::vector<uint32_t> got = download_bits<uint32_t>(*backend_, wide);
    for (uint32_t b = 0; b < 65536; ++b) {
      const uint32_t want = widen(static_cast<uint16_t>(b));
      if (is_nan32(want)) {
        ASSERT_TRUE(is_nan32(got[b])) << std::hex << b;
      } else {
        ASSERT_EQ(got[b], want) << std::hex << b;
      }
    }
    // Each finite 16-bit value, the midpoint to the next, and one float32 ulp either side of it.
    std::vector<uint32_t> inputs;
    for (uint32_t b = 0; b < 65536; ++b) {
      const uint32_t lo = widen(static_cast<uint16_t>(b));
      if ((lo & 0x7fffffffu) >= 0x7f800000u) continue;  // inf and NaN
      inputs.push_back(lo);
      const uint32_t hi = widen(static_cast<uint16_t>(b + 1));
      if ((hi & 0x7fffffffu) >= 0x7f800000u || b == 0x7fff) continue;  // no finite neighbour
      float lo_f, hi_f;
      std::memcpy(&lo_f, &lo, 4);
      std::memcpy(&hi_f, &hi, 4);
      const float mid = 0.5f * (lo_f + hi_f);  // exact: one bit more than the 16-bit values
      uint32_t m;
      std::memcpy(&m, &mid, 4);
      for (uint32_t f : {m, m - 1, m + 1}) inputs.push_back(f);
    }
    const int64_t n = static_cast<int64_t>(inputs.size());
    TensorView f32 = view({n});
    ASSERT_NO_THROW(backend_->copy_from_host(inputs.data(), f32));
    const TensorView narrowed = view({n}, narrow);
    ASSERT_NO_THROW(backend_->copy(f32, narrowed));
    const std::vector<uint16_t> got16 = download_bits<uint16_t>(*backend_, narrowed);
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got16[i], narrow_bits(inputs[i])) << dtype_name(narrow) << " from 0x" << std::hex << inputs[i];
    }
  }
}

// Reductions with few outputs over many elements run split over blocks and a second pass: a sum
// and a mean of 3M elements (small integers, so every order gives the exact sum), an argmax whose
// maximum occurs twice (the first index wins across blocks), and column sums of a tall matrix.
TEST_F(CudaOps, ReductionsSplitAcrossBlocksAreExactAndKeepTheFirstIndex) {
  const int64_t n = 3 * 1000 * 1000 + 7;
  std::vector<float> values(static_cast<size_t>(n));
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    values[i] = static_cast<float>(i % 7) - 3.0f;
    sum += values[i];
  }
  values[1234567] = 50.0f;
  values[2900000] = 50.0f;
  sum += 50.0 - (1234567 % 7 - 3) + 50.0 - (2900000 % 7 - 3);
  const TensorView x = upload({n}, values);
  const TensorView s = view({1});
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kSum, x, 0b1, s));
  EXPECT_EQ(download(s), std::vector<float>{static_cast<float>(sum)});
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kMean, x, 0b1, s));
  EXPECT_EQ(download(s), std::vector<float>{static_cast<float>(sum / static_cast<double>(n))});
  const TensorView arg = view({1}, DType::kInt64);
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kArgMax, x, 0b1, arg));
  EXPECT_EQ(download(arg), std::vector<float>{1234567.0f});
  // (100000, 3) -> (1, 3): three outputs, each split.
  const TensorView m = upload({100000, 3}, std::vector<float>(values.begin(), values.begin() + 300000));
  const TensorView cols = view({1, 3});
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kSum, m, 0b01, cols));
  std::vector<float> want(3, 0.0f);
  for (int64_t i = 0; i < 300000; ++i) want[i % 3] += values[i];
  EXPECT_EQ(download(cols), want);
}

// The trigonometric, hyperbolic and erf kernels and atan2: the device's math library against the
// host functor (the CPU's), large arguments and out-of-domain NaNs included.
TEST_F(CudaOps, TrigonometricUnaryAndAtan2MatchTheHostFunctors) {
  const std::vector<float> x = {-3.0e7f, -123.5f, -1.5f, -1.0f, -0.5f, 0.0f,
                                0.25f,   0.999f,  1.0f,  1.5f,  7.0f,  1.0e4f};
  const int64_t n = static_cast<int64_t>(x.size());
  const TensorView dx = upload({n}, x);
  auto check = [&](UnaryOp op, auto functor) {
    SCOPED_TRACE(static_cast<int>(op));
    const TensorView y = view({n});
    ASSERT_NO_THROW(backend_->unary(op, dx, y));
    const std::vector<float> got = download(y);
    for (int64_t i = 0; i < n; ++i) {
      const float want = functor(x[i]);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got[i])) << i;
      } else if (std::isinf(want)) {
        EXPECT_EQ(got[i], want) << i;
      } else {
        EXPECT_NEAR(got[i], want, 4e-6f * std::max(1.0f, std::fabs(want))) << i;
      }
    }
  };
  check(UnaryOp::kSin, kernels::SinFunctor{});
  check(UnaryOp::kCos, kernels::CosFunctor{});
  check(UnaryOp::kTan, kernels::TanFunctor{});
  check(UnaryOp::kAsin, kernels::AsinFunctor{});
  check(UnaryOp::kAcos, kernels::AcosFunctor{});
  check(UnaryOp::kAtan, kernels::AtanFunctor{});
  check(UnaryOp::kAsinh, kernels::AsinhFunctor{});
  check(UnaryOp::kAcosh, kernels::AcoshFunctor{});
  check(UnaryOp::kAtanh, kernels::AtanhFunctor{});
  check(UnaryOp::kErf, kernels::ErfFunctor{});
  const TensorView small = upload({5}, {-2.0f, -0.5f, 0.0f, 1.0f, 3.0f});
  const TensorView ys = view({5});
  ASSERT_NO_THROW(backend_->unary(UnaryOp::kSinh, small, ys));
  expect_near(download(ys), {std::sinh(-2.0f), std::sinh(-0.5f), 0.0f, std::sinh(1.0f), std::sinh(3.0f)},
              4e-6f);
  ASSERT_NO_THROW(backend_->unary(UnaryOp::kCosh, small, ys));
  expect_near(download(ys), {std::cosh(-2.0f), std::cosh(-0.5f), 1.0f, std::cosh(1.0f), std::cosh(3.0f)},
              4e-6f);
  const TensorView dy = upload({5}, {1, 1, 1, 1, 1});
  const TensorView grad = view({5});
  ASSERT_NO_THROW(backend_->unary(UnaryOp::kSin, small, ys));
  ASSERT_NO_THROW(backend_->unary_backward(UnaryOp::kSin, small, ys, dy, grad));
  expect_near(download(grad), {std::cos(-2.0f), std::cos(-0.5f), 1.0f, std::cos(1.0f), std::cos(3.0f)},
              4e-6f);
  const TensorView a = upload({4}, {1.0f, 1.0f, -1.0f, 0.0f});
  const TensorView b = upload({4}, {1.0f, -1.0f, -1.0f, -1.0f});
  const TensorView angle = view({4});
  ASSERT_NO_THROW(backend_->binary(BinaryOp::kAtan2, a, b, angle));
  expect_near(download(angle), {std::atan2(1.0f, 1.0f), std::atan2(1.0f, -1.0f),
                                std::atan2(-1.0f, -1.0f), std::atan2(0.0f, -1.0f)}, 1e-6f);
}

// Row gathers: rows by id (zeros for an id out of range), and the scatter-add summing repeated
// ids in order and skipping out-of-range ones; float64 through the same kernels.
TEST_F(CudaOps, RowGatherAndScatterAddMatchTheHostLoops) {
  const std::vector<double> table = {0.5, 1.0, 1.5, 2.0, 2.5, 3.0};  // (3, 2)
  const std::vector<int64_t> ids = {2, 0, 2, 9, -1};
  TensorView dtable = view({3, 2}, DType::kFloat64), dids = view({5}, DType::kInt64);
  TensorView out = view({5, 2}, DType::kFloat64);
  ASSERT_NO_THROW(backend_->copy_from_host(table.data(), dtable));
  ASSERT_NO_THROW(backend_->copy_from_host(ids.data(), dids));
  ASSERT_NO_THROW(backend_->gather_rows(dtable, dids, out));
  EXPECT_EQ(download(out), (std::vector<float>{2.5, 3.0, 0.5, 1.0, 2.5, 3.0, 0, 0, 0, 0}));
  const std::vector<double> rows = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // (5, 2)
  const std::vector<double> zeros(6, 0.0);
  TensorView drows = view({5, 2}, DType::kFloat64), grad = view({3, 2}, DType::kFloat64);
  ASSERT_NO_THROW(backend_->copy_from_host(rows.data(), drows));
  ASSERT_NO_THROW(backend_->copy_from_host(zeros.data(), grad));
  ASSERT_NO_THROW(backend_->scatter_rows(drows, dids, grad, RowCombine::kAdd));
  EXPECT_EQ(download(grad), (std::vector<float>{3, 4, 0, 0, 1 + 5, 2 + 6}));
}

// The scatter max/min: NaN winning, ids out of range skipped, int64 compared exactly; and the
// narrow integers (int8/int16) through the copy and max kernels.
TEST_F(CudaOps, ScatterExtremeRowsAndNarrowIntegers) {
  const std::vector<float> rows = {1, 5, 3, -2, NAN, 4, 7, 8};  // (4, 2)
  const std::vector<int64_t> ids = {1, 1, 9, 1};
  const std::vector<float> start(4, -1e30f);
  TensorView drows = view({4, 2}, DType::kFloat32), dids = view({4}, DType::kInt64);
  TensorView table = view({2, 2}, DType::kFloat32);
  ASSERT_NO_THROW(backend_->copy_from_host(rows.data(), drows));
  ASSERT_NO_THROW(backend_->copy_from_host(ids.data(), dids));
  ASSERT_NO_THROW(backend_->copy_from_host(start.data(), table));
  ASSERT_NO_THROW(backend_->scatter_rows(drows, dids, table, RowCombine::kMax));
  const std::vector<float> got = download(table);
  EXPECT_EQ(got[0], -1e30f);  // segment 0: nothing
  EXPECT_EQ(got[1], -1e30f);
  EXPECT_EQ(got[2], 7.0f);  // max(1, 3, 7); the NaN's row went to id 9, out of range
  EXPECT_EQ(got[3], 8.0f);
  const std::vector<int64_t> big = {(int64_t{1} << 60) + 1, (int64_t{1} << 60) + 2};
  const std::vector<int64_t> zero_ids = {0, 0}, lowest = {INT64_MIN};
  TensorView dbig = view({2, 1}, DType::kInt64), dzero = view({2}, DType::kInt64);
  TensorView itable = view({1, 1}, DType::kInt64);
  ASSERT_NO_THROW(backend_->copy_from_host(big.data(), dbig));
  ASSERT_NO_THROW(backend_->copy_from_host(zero_ids.data(), dzero));
  ASSERT_NO_THROW(backend_->copy_from_host(lowest.data(), itable));
  ASSERT_NO_THROW(backend_->scatter_rows(dbig, dzero, itable, RowCombine::kMax));
  ASSERT_NO_THROW(backend_->synchronize());
  int64_t top = 0;
  ASSERT_NO_THROW(backend_->copy_to_host(itable, &top));
  EXPECT_EQ(top, (int64_t{1} << 60) + 2);
  // int8: a float cast truncates and saturates, the max compares exactly
  const std::vector<float> floats = {-3.7f, 200.0f, -200.0f, 5.5f};
  TensorView dfloats = view({4}, DType::kFloat32), bytes = view({4}, DType::kInt8);
  TensorView top_byte = view({1}, DType::kInt8);
  ASSERT_NO_THROW(backend_->copy_from_host(floats.data(), dfloats));
  ASSERT_NO_THROW(backend_->copy(dfloats, bytes));
  ASSERT_NO_THROW(backend_->reduce(ReduceOp::kMax, bytes, 1u, top_byte));
  ASSERT_NO_THROW(backend_->synchronize());
  std::vector<int8_t> byte_values(4);
  int8_t byte_max = 0;
  ASSERT_NO_THROW(backend_->copy_to_host(bytes, byte_values.data()));
  ASSERT_NO_THROW(backend_->copy_to_host(top_byte, &byte_max));
  EXPECT_EQ(byte_values, (std::vector<int8_t>{-3, 127, -128, 5}));
  EXPECT_EQ(byte_max, 127);
}

// The scatter's sums and products of integers (exact, wrapping as the CPU's) and its float
// product, ids out of range skipped.
TEST_F(CudaOps, ScatterRowsIntegerSumsAndProducts) {
  const std::vector<int32_t> ints = {2147483647, 3, 1, -4, 9};
  const std::vector<int64_t> ids = {0, 1, 0, 1, 7};
  const std::vector<int32_t> zeros = {0, 0}, ones = {1, 1};
  TensorView dints = view({5, 1}, DType::kInt32), dids = view({5}, DType::kInt64);
  TensorView sums = view({2, 1}, DType::kInt32), products = view({2, 1}, DType::kInt32);
  ASSERT_NO_THROW(backend_->copy_from_host(ints.data(), dints));
  ASSERT_NO_THROW(backend_->copy_from_host(ids.data(), dids));
  ASSERT_NO_THROW(backend_->copy_from_host(zeros.data(), sums));
  ASSERT_NO_THROW(backend_->copy_from_host(ones.data(), products));
  ASSERT_NO_THROW(backend_->scatter_rows(dints, dids, sums, RowCombine::kAdd));
  ASSERT_NO_THROW(backend_->scatter_rows(dints, dids, products, RowCombine::kMultiply));
  ASSERT_NO_THROW(backend_->synchronize());
  std::vector<int32_t> got_sums(2), got_products(2);
  ASSERT_NO_THROW(backend_->copy_to_host(sums, got_sums.data()));
  ASSERT_NO_THROW(backend_->copy_to_host(products, got_products.data()));
  EXPECT_EQ(got_sums, (std::vector<int32_t>{-2147483647 - 1, -1}));  // INT32_MAX + 1 wraps
  EXPECT_EQ(got_products, (std::vector<int32_t>{2147483647, -12}));
  const std::vector<float> rows = {1.5f, -2.0f, 4.0f, 0.5f};  // (2, 2)
  const std::vector<int64_t> same = {0, 0};
  const std::vector<float> start = {1.0f, 1.0f};
  TensorView drows = view({2, 2}), dsame = view({2}, DType::kInt64), table = view({1, 2});
  ASSERT_NO_THROW(backend_->copy_from_host(rows.data(), drows));
  ASSERT_NO_THROW(backend_->copy_from_host(same.data(), dsame));
  ASSERT_NO_THROW(backend_->copy_from_host(start.data(), table));
  ASSERT_NO_THROW(backend_->scatter_rows(drows, dsame, table, RowCombine::kMultiply));
  EXPECT_EQ(download(table), (std::vector<float>{6.0f, -1.0f}));
}

// float64 on cuBLASLt's 64F GEMM and the element-wise kernels, against host double loops.
TEST_F(CudaOps, Float64MatmulAndElementwise) {
  const std::vector<double> a = {1.0 / 3, 2.0, -1.5, 0.25, 1e-8, 3.0};  // (2, 3)
  const std::vector<double> b = {1.0, 0.5, -2.0, 4.0, 1.0 / 7, 1.0};   // (3, 2)
  TensorView da = view({2, 3}, DType::kFloat64), db = view({3, 2}, DType::kFloat64);
  TensorView out = view({2, 2}, DType::kFloat64);
  ASSERT_NO_THROW(backend_->copy_from_host(a.data(), da));
  ASSERT_NO_THROW(backend_->copy_from_host(b.data(), db));
  ASSERT_NO_THROW(backend_->matmul(da, db, nullptr, out));
  ASSERT_NO_THROW(backend_->synchronize());
  std::vector<double> got(4);
  ASSERT_NO_THROW(backend_->copy_to_host(out, got.data()));
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) {
      double want = 0;
      for (int p = 0; p < 3; ++p) want += a[i * 3 + p] * b[p * 2 + j];
      EXPECT_NEAR(got[i * 2 + j], want, 1e-15 * 8) << i << "," << j;
    }
  }
  ASSERT_NO_THROW(backend_->unary(UnaryOp::kExp, da, da));
  ASSERT_NO_THROW(backend_->synchronize());
  std::vector<double> exps(6);
  ASSERT_NO_THROW(backend_->copy_to_host(da, exps.data()));
  for (int i = 0; i < 6; ++i) EXPECT_NEAR(exps[i], std::exp(a[i]), 1e-15 * std::exp(a[i]) * 4);
}

// The bitwise kernel runs the host's functors: int32 shifts at and past the width (shifted out,
// where the hardware would mask or clamp the count), a broadcast uint8 operand, bool xor.
TEST_F(CudaOps, BitwiseMatchesTheHostFunctors) {
  const std::vector<int32_t> a = {5, -5, 1, -1, 7, 12};
  const std::vector<int32_t> b = {-1, 32, 31, 33, 2, 10};
  TensorView da = view({6}, DType::kInt32), db = view({6}, DType::kInt32);
  TensorView out = view({6}, DType::kInt32);
  ASSERT_NO_THROW(backend_->copy_from_host(a.data(), da));
  ASSERT_NO_THROW(backend_->copy_from_host(b.data(), db));
  for (BitwiseOp op : {BitwiseOp::kShiftLeft, BitwiseOp::kShiftRight, BitwiseOp::kAnd,
                       BitwiseOp::kOr, BitwiseOp::kXor}) {
    ASSERT_NO_THROW(backend_->bitwise(op, da, db, out));
    ASSERT_NO_THROW(backend_->synchronize());
    std::vector<int32_t> got(6);
    ASSERT_NO_THROW(backend_->copy_to_host(out, got.data()));
    for (size_t i = 0; i < a.size(); ++i) {
      int32_t want = 0;
      switch (op) {
        case BitwiseOp::kShiftLeft: want = kernels::ShiftLeftFunctor{}(a[i], b[i]); break;
        case BitwiseOp::kShiftRight: want = kernels::ShiftRightFunctor{}(a[i], b[i]); break;
        case BitwiseOp::kAnd: want = a[i] & b[i]; break;
        case BitwiseOp::kOr: want = a[i] | b[i]; break;
        case BitwiseOp::kXor: want = a[i] ^ b[i]; break;
      }
      EXPECT_EQ(got[i], want) << static_cast<int>(op) << " element " << i;
    }
  }
  const std::vector<uint8_t> u = {200, 3, 255};
  const uint8_t count = 1;
  TensorView du = view({3}, DType::kUInt8), dc = view({1}, DType::kUInt8);
  TensorView uout = view({3}, DType::kUInt8);
  ASSERT_NO_THROW(backend_->copy_from_host(u.data(), du));
  ASSERT_NO_THROW(backend_->copy_from_host(&count, dc));
  TensorView counts = dc;  // (1,) broadcast to (3,)
  counts.shape[0] = 3;
  counts.strides[0] = 0;
  ASSERT_NO_THROW(backend_->bitwise(BitwiseOp::kShiftLeft, du, counts, uout));
  EXPECT_EQ(download(uout), (std::vector<float>{144, 6, 254}));
  const std::vector<unsigned char> flags = {1, 0, 1}, others = {1, 1, 0};
  TensorView df = view({3}, DType::kBool), dg = view({3}, DType::kBool), bout = view({3}, DType::kBool);
  ASSERT_NO_THROW(backend_->copy_from_host(flags.data(), df));
  ASSERT_NO_THROW(backend_->copy_from_host(others.data(), dg));
  ASSERT_NO_THROW(backend_->bitwise(BitwiseOp::kXor, df, dg, bout));
  EXPECT_EQ(download(bout), (std::vector<float>{0, 1, 1}));
  EXPECT_THROW(backend_->bitwise(BitwiseOp::kShiftLeft, df, dg, bout), std::exception);
}

// where reads only the chosen operand: b's inf and NaN never reach the rows where cond holds.
TEST_F(CudaOps, WhereSelectsWithBroadcastOperands) {
  std::vector<unsigned char> cond_host = {1, 0, 1};
  TensorView cond = view({3}, DType::kBool);
  ASSERT_NO_THROW(backend_->copy_from_host(cond_host.data(), cond));
  TensorView cond_rows = cond;  // (3,) as (3, 1) broadcast to (3, 4)
  cond_rows.ndim = 2;
  cond_rows.shape[0] = 3; cond_rows.strides[0] = 1;
  cond_rows.shape[1] = 4; cond_rows.strides[1] = 0;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
  const TensorView a = upload({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  const TensorView b = upload({3, 4}, {inf, nan, -inf, nan, -1, -2, -3, -4, nan, inf, nan, inf});
  const TensorView out = view({3, 4});
  ASSERT_NO_THROW(backend_->where(cond_rows, a, b, out));
  const std::vector<float> got = download(out);
  const std::vector<float> want = {1, 2, 3, 4, -1, -2, -3, -4, 9, 10, 11, 12};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
}

// The per-row merge sort: stable, NaN last ascending and first descending, -0 tied with +0,
// and take_along_last_axis by the positions it returns.
TEST_F(CudaOps, SortRowsStablyBothWaysAndTakeAlongTheLastAxis) {
  const float nan = std::nanf(""), inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {3, nan, 1, -inf, 2, 1, -0.0f, 0.0f,   // row 0
                                5, 5, inf, -1, nan, 0, 2, 5};         // row 1
  const TensorView dx = upload({2, 8}, x);
  const TensorView values = view({2, 8});
  const TensorView indices = view({2, 8}, DType::kInt64);
  const int64_t bytes = backend_->sort_workspace_bytes(dx);
  void* workspace = device_alloc(static_cast<size_t>(bytes));
  ASSERT_NO_THROW(backend_->sort(dx, false, values, indices, workspace));
  EXPECT_EQ(download(indices), (std::vector<float>{3, 6, 7, 2, 5, 4, 0, 1, 3, 5, 6, 0, 1, 7, 2, 4}));
  ASSERT_NO_THROW(backend_->sort(dx, true, values, indices, workspace));
  EXPECT_EQ(download(indices), (std::vector<float>{1, 0, 4, 2, 5, 6, 7, 3, 4, 2, 0, 1, 7, 6, 5, 3}));
  const std::vector<float> sorted = download(values);
  EXPECT_TRUE(std::isnan(sorted[0]));
  EXPECT_EQ(sorted[1], 3.0f);
  EXPECT_EQ(sorted[7], -inf);
  const TensorView picks = view({2, 3}, DType::kInt64);
  std::vector<int64_t> picks_host = {7, 0, 0, 2, 2, 6};
  ASSERT_NO_THROW(backend_->copy_from_host(picks_host.data(), picks));
  const TensorView taken = view({2, 3});
  ASSERT_NO_THROW(backend_->take_along_last_axis(dx, picks, taken));
  EXPECT_EQ(download(taken), (std::vector<float>{0, 3, 3, inf, inf, 2}));
}

#endif  // GPUACCEL_TEST_CUDA_BACKEND

}  // namespace
}  // namespace gpuaccel
