// The op entries of the CUDA backend's ABI 2. Here (no GPU) they check that the library exports
// every entry; on a GPU (Colab) each op runs on small inputs and is compared with a host
// reference built from the same element functors (cpp/kernels) or a plain loop.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "backends/op_kinds.h"
#include "core/cuda_backend_abi.h"
#include "kernels/half_conversions.h"
#include "kernels/philox.h"
#include "kernels/unary_functors.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {
namespace {

#ifdef GPUACCEL_TEST_CUDA_BACKEND

const gpuaccel_cuda_backend* open_backend() {
  void* handle = dlopen(GPUACCEL_TEST_CUDA_BACKEND, RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) return nullptr;
  auto entry = reinterpret_cast<gpuaccel_cuda_backend_entry_fn>(dlsym(handle, GPUACCEL_CUDA_BACKEND_ENTRY));
  return entry ? entry() : nullptr;
}

TEST(CudaBackendAbi2, VersionAndEveryEntryIsSet) {
  const gpuaccel_cuda_backend* t = open_backend();
  ASSERT_NE(t, nullptr) << dlerror();
  EXPECT_EQ(GPUACCEL_CUDA_BACKEND_ABI_VERSION, 4);
  EXPECT_EQ(t->abi_version, 4);
  const void* entries[] = {
      reinterpret_cast<const void*>(t->copy_to_device_async), reinterpret_cast<const void*>(t->copy_to_host_async),
      reinterpret_cast<const void*>(t->record_event), reinterpret_cast<const void*>(t->elapsed_ms),
      reinterpret_cast<const void*>(t->destroy_event), reinterpret_cast<const void*>(t->unary),
      reinterpret_cast<const void*>(t->unary_backward), reinterpret_cast<const void*>(t->binary),
      reinterpret_cast<const void*>(t->copy), reinterpret_cast<const void*>(t->fill),
      reinterpret_cast<const void*>(t->arange), reinterpret_cast<const void*>(t->random),
      reinterpret_cast<const void*>(t->reduce), reinterpret_cast<const void*>(t->dropout),
      reinterpret_cast<const void*>(t->matmul), reinterpret_cast<const void*>(t->conv2d_forward),
      reinterpret_cast<const void*>(t->conv2d_backward_data),
      reinterpret_cast<const void*>(t->conv2d_backward_weights),
      reinterpret_cast<const void*>(t->pool2d_workspace_bytes), reinterpret_cast<const void*>(t->pool2d_forward),
      reinterpret_cast<const void*>(t->pool2d_backward), reinterpret_cast<const void*>(t->softmax_forward),
      reinterpret_cast<const void*>(t->softmax_backward), reinterpret_cast<const void*>(t->batch_norm_forward),
      reinterpret_cast<const void*>(t->batch_norm_backward), reinterpret_cast<const void*>(t->layer_norm_forward),
      reinterpret_cast<const void*>(t->layer_norm_backward),
      reinterpret_cast<const void*>(t->optimizer_update),  // ABI 3
      reinterpret_cast<const void*>(t->create_event),
      reinterpret_cast<const void*>(t->record_existing_event)};  // ABI 4
  for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); ++i) EXPECT_NE(entries[i], nullptr) << "entry " << i;
}

TEST(CudaBackendAbi2, PoolWorkspaceSizeNeedsNoDevice) {
  const gpuaccel_cuda_backend* t = open_backend();
  ASSERT_NE(t, nullptr);
  TensorView x, y;
  x.ndim = y.ndim = 4;
  const int64_t xs[4] = {2, 4, 4, 3}, ys[4] = {2, 2, 2, 3};
  for (int d = 0; d < 4; ++d) x.shape[d] = xs[d], y.shape[d] = ys[d];
  gpuaccel_pool2d_params p{GPUACCEL_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0};
  int64_t bytes = -1;
  char err[512];
  ASSERT_EQ(t->pool2d_workspace_bytes(0, &x, &p, &y, &bytes, err, sizeof(err)), GPUACCEL_CUDA_OK) << err;
  EXPECT_GE(bytes, (96 + 24) * 4);  // copies of x and y
  EXPECT_EQ(t->pool2d_workspace_bytes(0, nullptr, &p, &y, &bytes, err, sizeof(err)), GPUACCEL_CUDA_INVALID_ARGUMENT);
  // Asymmetric max pooling keeps a -inf padded copy of x: (2, 5, 5, 3) here.
  gpuaccel_pool2d_params q{GPUACCEL_POOL_MAX, 2, 2, 2, 2, 0, 1, 0, 1};
  ASSERT_EQ(t->pool2d_workspace_bytes(0, &x, &q, &y, &bytes, err, sizeof(err)), GPUACCEL_CUDA_OK) << err;
  EXPECT_GE(bytes, (150 + 24) * 4);
}

// ---- GPU only ----

class CudaOps : public ::testing::Test {
 protected:
  void SetUp() override {
    t_ = open_backend();
    ASSERT_NE(t_, nullptr);
    int count = 0;
    if (t_->device_count(&count, err_, sizeof(err_)) != GPUACCEL_CUDA_OK || count == 0) {
      GTEST_SKIP() << "no CUDA device: " << err_;
    }
    gpuaccel_cuda_device_properties p{};
    ASSERT_EQ(t_->device_properties(0, &p, err_, sizeof(err_)), 0) << err_;
    cc_ = p.major * 10 + p.minor;
  }
  void TearDown() override {
    for (void* p : allocations_) t_->free_device(0, p, err_, sizeof(err_));
  }
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
    EXPECT_EQ(t_->copy_to_device(0, v.data, host.data(), host.size(), err_, sizeof(err_)), 0) << err_;
    return v;
  }
  TensorView view(const std::vector<int64_t>& shape, DType dtype = DType::kFloat32) {
    TensorView v;
    v.dtype = dtype;
    v.ndim = static_cast<int>(shape.size());
    int64_t stride = 1;
    for (int d = v.ndim - 1; d >= 0; --d) {
      v.shape[d] = shape[d];
      v.strides[d] = stride;
      stride *= shape[d];
    }
    void* p = nullptr;
    EXPECT_EQ(t_->malloc_device(0, std::max<size_t>(bytes(v), 1), &p, err_, sizeof(err_)), 0) << err_;
    allocations_.push_back(p);
    v.data = p;
    return v;
  }
  static size_t bytes(const TensorView& v) {
    const size_t e = v.dtype == DType::kFloat32 || v.dtype == DType::kInt32 ? 4
                     : v.dtype == DType::kInt64                            ? 8
                     : v.dtype == DType::kFloat16 || v.dtype == DType::kBFloat16 ? 2
                                                                                 : 1;
    return static_cast<size_t>(v.numel()) * e;
  }
  std::vector<float> download(const TensorView& v) {
    EXPECT_EQ(t_->synchronize(0, err_, sizeof(err_)), 0) << err_;
    std::vector<unsigned char> host(bytes(v));
    EXPECT_EQ(t_->copy_to_host(0, host.data(), v.data, host.size(), err_, sizeof(err_)), 0) << err_;
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
  const gpuaccel_cuda_backend* t_ = nullptr;
  int cc_ = 0;
  char err_[1024] = {0};
  std::vector<void*> allocations_;
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
    ASSERT_EQ(t_->unary(0, UnaryOp::kGelu, &dx, &dy, err_, sizeof(err_)), 0) << err_;
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
  ASSERT_EQ(t_->unary(0, UnaryOp::kSigmoid, &x, &y, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(t_->unary_backward(0, UnaryOp::kSigmoid, &x, &y, &dy, &dx, err_, sizeof(err_)), 0) << err_;
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
  ASSERT_EQ(t_->binary(0, BinaryOp::kAdd, &x, &bb, &out, err_, sizeof(err_)), 0) << err_;
  expect_near(download(out), {9, 20.5f, 32, 13, 16, 30.25f}, 0);
  const TensorView cmp = view({2, 3}, DType::kBool);
  ASSERT_EQ(t_->binary(0, BinaryOp::kGreater, &x, &dy, &cmp, err_, sizeof(err_)), 0) << err_;
  expect_near(download(cmp), {0, 0, 1, 1, 0, 0}, 0);
}

TEST_F(CudaOps, CopyTransposesAndCasts) {
  const TensorView a = upload({2, 3}, {1, 2, 3, 4, 5, 6});
  TensorView at = a;  // (3, 2) transpose view
  at.shape[0] = 3; at.strides[0] = 1;
  at.shape[1] = 2; at.strides[1] = 3;
  const TensorView dst = view({3, 2}, DType::kBFloat16);
  ASSERT_EQ(t_->copy(0, &at, &dst, err_, sizeof(err_)), 0) << err_;
  expect_near(download(dst), {1, 4, 2, 5, 3, 6}, 0);
  const TensorView filled = view({5}, DType::kInt64);
  ASSERT_EQ(t_->arange(0, &filled, 3, 2, err_, sizeof(err_)), 0) << err_;
  expect_near(download(filled), {3, 5, 7, 9, 11}, 0);
  ASSERT_EQ(t_->fill(0, &filled, -7, err_, sizeof(err_)), 0) << err_;
  expect_near(download(filled), {-7, -7, -7, -7, -7}, 0);
}

TEST_F(CudaOps, RandomAndDropoutMatchTheHostGenerator) {
  const TensorView u = view({1000});
  ASSERT_EQ(t_->random(0, RandomDistribution::kUniform, 42, 7, &u, err_, sizeof(err_)), 0) << err_;
  std::vector<float> want(1000);
  for (int i = 0; i < 1000; ++i) want[i] = kernels::philox_uniform(42, 7 + i);
  expect_near(download(u), want, 0);
  const TensorView nrm = view({1000});
  ASSERT_EQ(t_->random(0, RandomDistribution::kNormal, 42, 7, &nrm, err_, sizeof(err_)), 0) << err_;
  for (int i = 0; i < 1000; ++i) want[i] = kernels::philox_normal(42, 7 + i);
  expect_near(download(nrm), want, 1e-5f);  // device sin/cos/log may differ by an ulp or two

  const TensorView x = upload({1000}, std::vector<float>(1000, 1.0f));
  const TensorView y = view({1000});
  const TensorView mask = view({1000}, DType::kUInt8);
  ASSERT_EQ(t_->dropout(0, &x, 0.25, 9, 0, &y, &mask, err_, sizeof(err_)), 0) << err_;
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
  ASSERT_EQ(t_->reduce(0, ReduceOp::kSum, &x, 0b010, &s, err_, sizeof(err_)), 0) << err_;
  std::vector<float> want(8, 0.0f);
  const std::vector<float> xv = ramp(24, -5.0f, 0.5f);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) want[a * 4 + c] += xv[a * 12 + b * 4 + c];
  expect_near(download(s), want, 1e-6f);
  const TensorView all = view({1, 1, 1});
  ASSERT_EQ(t_->reduce(0, ReduceOp::kMax, &x, 0b111, &all, err_, sizeof(err_)), 0) << err_;
  expect_near(download(all), {xv[23]}, 0);
  const TensorView arg = view({2, 3, 1}, DType::kInt64);
  ASSERT_EQ(t_->reduce(0, ReduceOp::kArgMin, &x, 0b100, &arg, err_, sizeof(err_)), 0) << err_;
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
    const int status = t_->matmul(0, &da, &db, &dbias, &out, err_, sizeof(err_));
    if (dt == DType::kBFloat16 && cc_ < 80) {
      EXPECT_EQ(status, GPUACCEL_CUDA_UNIMPLEMENTED);
      EXPECT_NE(std::string(err_).find("compute capability 8.0"), std::string::npos) << err_;
      continue;
    }
    ASSERT_EQ(status, 0) << err_;
    expect_near(download(out), want, dt == DType::kFloat32 ? 1e-6f : 2e-2f);
  }
  // b given as a transposed view of a (2, 3) row-major matrix: (3, 2) with strides (1, 3).
  const TensorView a2 = upload({2, 3}, {1, 2, 3, 4, 5, 6});
  TensorView bt = upload({2, 3}, {1, 0, 1, 0, 1, 0});
  bt.shape[0] = 3; bt.strides[0] = 1;
  bt.shape[1] = 2; bt.strides[1] = 3;
  const TensorView out2 = view({2, 2});
  ASSERT_EQ(t_->matmul(0, &a2, &bt, nullptr, &out2, err_, sizeof(err_)), 0) << err_;
  expect_near(download(out2), {4, 2, 10, 5}, 0);
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
  gpuaccel_conv2d_params p{1, 1, 1, 1, 1, 1, 1, 1};
  ASSERT_EQ(t_->conv2d_forward(0, &dx, &dw, &db, &p, &y, err_, sizeof(err_)), 0) << err_;
  expect_near(download(y), want, 1e-5f);

  // Gradients with dy = 1: dbias = H*W, dw[kh,kw,c,f] = sum of the x values it touched.
  const TensorView dy = upload({1, H, W, F}, std::vector<float>(H * W * F, 1.0f));
  const TensorView gw = view({K, K, C, F}), gb = view({F}), gx = view({1, H, W, C});
  ASSERT_EQ(t_->conv2d_backward_weights(0, &dx, &dy, &p, &gw, &gb, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(t_->conv2d_backward_data(0, &dy, &dw, &p, &gx, err_, sizeof(err_)), 0) << err_;
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
  gpuaccel_conv2d_params q{2, 2, 1, 1, 0, 1, 0, 1};
  const TensorView y2 = view({1, 2, 2, F});
  EXPECT_EQ(t_->conv2d_forward(0, &dx, &dw, nullptr, &q, &y2, err_, sizeof(err_)), 0) << err_;
}

TEST_F(CudaOps, PoolingSoftmaxAndBatchNorm) {
  const TensorView x = upload({1, 2, 2, 2}, {1, -1, 4, -2, 3, -3, 2, -4});
  const TensorView y = view({1, 1, 1, 2});
  gpuaccel_pool2d_params p{GPUACCEL_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0};
  int64_t ws_bytes = 0;
  ASSERT_EQ(t_->pool2d_workspace_bytes(0, &x, &p, &y, &ws_bytes, err_, sizeof(err_)), 0) << err_;
  void* ws = nullptr;
  ASSERT_EQ(t_->malloc_device(0, ws_bytes, &ws, err_, sizeof(err_)), 0) << err_;
  allocations_.push_back(ws);
  ASSERT_EQ(t_->pool2d_forward(0, &x, &p, &y, ws, err_, sizeof(err_)), 0) << err_;
  expect_near(download(y), {4, -1}, 0);
  const TensorView dy = upload({1, 1, 1, 2}, {10, 20});
  const TensorView dx = view({1, 2, 2, 2});
  ASSERT_EQ(t_->pool2d_backward(0, &dy, &p, ws, &dx, err_, sizeof(err_)), 0) << err_;
  expect_near(download(dx), {0, 20, 10, 0, 0, 0, 0, 0}, 0);

  const TensorView logits = upload({2, 3}, {1, 2, 3, -1, 0, 1000});
  const TensorView sm = view({2, 3}), lsm = view({2, 3});
  ASSERT_EQ(t_->softmax_forward(0, &logits, 0, &sm, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(t_->softmax_forward(0, &logits, 1, &lsm, err_, sizeof(err_)), 0) << err_;
  const float z = std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f);
  expect_near(download(sm), {std::exp(1.0f) / z, std::exp(2.0f) / z, std::exp(3.0f) / z, 0, 0, 1}, 1e-6f);
  expect_near(download(lsm), {1 - std::log(z), 2 - std::log(z), 3 - std::log(z), -1001, -1000, 0}, 1e-5f);

  // Batch norm (training) over (4, 2): per-channel biased mean/var written.
  const TensorView bx = upload({4, 2}, {1, 10, 2, 20, 3, 30, 4, 40});
  const TensorView gamma = upload({2}, {1, 2}), beta = upload({2}, {0, 1});
  const TensorView mean = view({2}), var = view({2}), by = view({4, 2});
  ASSERT_EQ(t_->batch_norm_forward(0, &bx, &gamma, &beta, &mean, &var, 1e-3, 1, &by, err_, sizeof(err_)), 0)
      << err_;
  expect_near(download(mean), {2.5f, 25}, 1e-6f);
  expect_near(download(var), {1.25f, 125}, 1e-5f);
  const std::vector<float> byv = download(by);
  EXPECT_NEAR(byv[0], (1 - 2.5f) / std::sqrt(1.25f + 1e-3f), 1e-4f);
  EXPECT_NEAR(byv[1], 2 * (10 - 25) / std::sqrt(125 + 1e-3f) + 1, 1e-4f);
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
      ASSERT_EQ(t_->layer_norm_forward(0, &dx_in, &dg, &db, eps, &y, &mean, &var, err_, sizeof(err_)), 0) << err_;
      const TensorView gx = view({rows, c}, dt), ggamma = view({c}), gbeta = view({c});
      ASSERT_EQ(t_->layer_norm_backward(0, &dx_in, &ddy, &dg, &mean, &var, eps, &gx, &ggamma, &gbeta, err_,
                                        sizeof(err_)),
                0)
          << err_;
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
    for (int kind : {GPUACCEL_POOL_MAX, GPUACCEL_POOL_AVERAGE}) {
      for (DType dt : {DType::kFloat32, DType::kFloat16}) {
        SCOPED_TRACE("kind " + std::to_string(kind) + " window " + std::to_string(k.kh) + " dtype " +
                     std::to_string(static_cast<int>(dt)));
        const gpuaccel_pool2d_params p{kind, k.kh, k.kw, k.sh, k.sw, k.pt, k.pb, k.pl, k.pr};
        const TensorView dx_in = upload({n, k.h, k.w, c}, x, dt), ddy = upload({n, oh, ow, c}, dy, dt);
        const TensorView y = view({n, oh, ow, c}, dt), gx = view({n, k.h, k.w, c}, dt);
        void* ws = nullptr;
        if (kind == GPUACCEL_POOL_MAX) {
          int64_t ws_bytes = 0;
          ASSERT_EQ(t_->pool2d_workspace_bytes(0, &dx_in, &p, &y, &ws_bytes, err_, sizeof(err_)), 0) << err_;
          ASSERT_EQ(t_->malloc_device(0, ws_bytes, &ws, err_, sizeof(err_)), 0) << err_;
          allocations_.push_back(ws);
        }
        ASSERT_EQ(t_->pool2d_forward(0, &dx_in, &p, &y, ws, err_, sizeof(err_)), 0) << err_;
        ASSERT_EQ(t_->pool2d_backward(0, &ddy, &p, ws, &gx, err_, sizeof(err_)), 0) << err_;
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
                if (kind == GPUACCEL_POOL_MAX) {
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

TEST_F(CudaOps, AsyncCopiesAndEvents) {
  void* pinned = nullptr;
  ASSERT_EQ(t_->malloc_host_pinned(64, &pinned, err_, sizeof(err_)), 0) << err_;
  for (int i = 0; i < 16; ++i) static_cast<float*>(pinned)[i] = static_cast<float>(i);
  const TensorView d = view({16});
  void* start = nullptr;
  void* end = nullptr;
  ASSERT_EQ(t_->record_event(0, &start, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(t_->copy_to_device_async(0, d.data, pinned, 64, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(t_->unary(0, UnaryOp::kSquare, &d, &d, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(t_->copy_to_host_async(0, pinned, d.data, 64, err_, sizeof(err_)), 0) << err_;
  ASSERT_EQ(t_->record_event(0, &end, err_, sizeof(err_)), 0) << err_;
  float ms = -1;
  ASSERT_EQ(t_->elapsed_ms(start, end, &ms, err_, sizeof(err_)), 0) << err_;
  EXPECT_GE(ms, 0.0f);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(static_cast<float*>(pinned)[i], static_cast<float>(i * i));
  EXPECT_EQ(t_->destroy_event(start, err_, sizeof(err_)), 0);
  EXPECT_EQ(t_->destroy_event(end, err_, sizeof(err_)), 0);
  EXPECT_EQ(t_->free_host_pinned(pinned, err_, sizeof(err_)), 0);
}

#endif  // GPUACCEL_TEST_CUDA_BACKEND

}  // namespace
}  // namespace gpuaccel
