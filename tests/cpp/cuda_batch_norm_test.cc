// Batch norm on a GPU (skipped without one) over batches of 65536 rows and more, compared with the
// CPU backend: a 64-image batch of 32x32 (cuDNN with N = 64, where N = rows used to be refused in
// inference), 65536 images of 1x1 in inference (past cuDNN's bound: the backend's own kernels),
// and (rows, C) inputs (own kernels), in training, inference and backward; 16-bit inputs against
// the CPU's float32 on the same stored values. The routing itself is tested on the CPU
// (cuda_batch_norm_route_test.cc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/device_registry.h"
#include "cuda_test_device.h"
#include "test_helpers.h"
#include "kernels/half_conversions.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {
namespace {

#ifdef GPUACCEL_TEST_CUDA_BACKEND

TensorView view_of(void* data, const std::vector<int64_t>& shape, DType dtype) {
  return test::contiguous_view(data, shape, dtype);
}

float stored(float v, DType dtype) {
  if (dtype == DType::kFloat16) return half_bits_to_float(float_to_half_bits(v));
  if (dtype == DType::kBFloat16) return bfloat16_bits_to_float(float_to_bfloat16_bits(v));
  return v;
}

class CudaBatchNorm : public CudaDeviceTest {
 protected:
  // A device tensor of `values` stored as `dtype`.
  TensorView upload(const std::vector<int64_t>& shape, const std::vector<float>& values, DType dtype) {
    const size_t elem = dtype == DType::kFloat32 ? 4 : 2;
    std::vector<unsigned char> host(values.size() * elem);
    for (size_t i = 0; i < values.size(); ++i) {
      if (dtype == DType::kFloat32) {
        std::memcpy(&host[i * 4], &values[i], 4);
      } else {
        const uint16_t h = dtype == DType::kFloat16 ? float_to_half_bits(values[i]) : float_to_bfloat16_bits(values[i]);
        std::memcpy(&host[i * 2], &h, 2);
      }
    }
    const TensorView v = view_of(device_alloc(host.size()), shape, dtype);
    EXPECT_NO_THROW(backend_->copy_from_host(host.data(), v));
    return v;
  }
  TensorView empty(const std::vector<int64_t>& shape, DType dtype) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return view_of(device_alloc(static_cast<size_t>(n) * (dtype == DType::kFloat32 ? 4 : 2)), shape, dtype);
  }
  std::vector<float> download(const TensorView& v) {
    EXPECT_NO_THROW(backend_->synchronize());
    const size_t elem = v.dtype == DType::kFloat32 ? 4 : 2;
    std::vector<unsigned char> host(static_cast<size_t>(v.numel()) * elem);
    EXPECT_NO_THROW(backend_->copy_to_host(v, host.data()));
    std::vector<float> out(v.numel());
    for (size_t i = 0; i < out.size(); ++i) {
      if (elem == 4) {
        std::memcpy(&out[i], &host[i * 4], 4);
      } else {
        uint16_t h;
        std::memcpy(&h, &host[i * 2], 2);
        out[i] = v.dtype == DType::kFloat16 ? half_bits_to_float(h) : bfloat16_bits_to_float(h);
      }
    }
    return out;
  }

  // Forward (training and inference) and backward of x (shape, channels last) on the GPU in
  // `dtype`, against the CPU backend in float32 on the same stored values.
  void compare_with_cpu(const std::vector<int64_t>& shape, DType dtype, float tol) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    const int64_t c = shape.back();
    std::vector<float> x(n), dy(n), gamma(c), beta(c);
    for (int64_t i = 0; i < n; ++i) {
      x[i] = stored(static_cast<float>((i * 7919) % 1009) / 250.0f - 2.0f + 0.5f * static_cast<float>(i % c), dtype);
      dy[i] = stored(static_cast<float>((i * 104729) % 997) / 500.0f - 1.0f, dtype);
    }
    for (int64_t k = 0; k < c; ++k) {
      gamma[k] = 1.0f + 0.25f * static_cast<float>(k);
      beta[k] = 0.5f - 0.125f * static_cast<float>(k);
    }
    const double eps = 1e-3;
    // CPU, float32.
    Backend& cpu = backend_for(DeviceRegistry::instance().logical_devices(DeviceType::kCPU).at(0));
    std::vector<float> cy(n), cyi(n), cdx(n), cmean(c), cvar(c), cdg(c), cdb(c);
    auto host = [&](std::vector<float>& v, const std::vector<int64_t>& s) {
      return view_of(v.data(), s, DType::kFloat32);
    };
    std::vector<float> hx = x, hdy = dy, hg = gamma, hb = beta;
    cpu.batch_norm_forward(host(hx, shape), host(hg, {c}), host(hb, {c}), host(cmean, {c}), host(cvar, {c}), eps,
                           true, host(cy, shape));
    cpu.batch_norm_forward(host(hx, shape), host(hg, {c}), host(hb, {c}), host(cmean, {c}), host(cvar, {c}), eps,
                           false, host(cyi, shape));
    cpu.batch_norm_backward(host(hx, shape), host(hdy, shape), host(hg, {c}), host(cmean, {c}), host(cvar, {c}), eps,
                            host(cdx, shape), host(cdg, {c}), host(cdb, {c}));
    cpu.synchronize();
    // GPU.
    const TensorView gx = upload(shape, x, dtype), gdy = upload(shape, dy, dtype);
    const TensorView gg = upload({c}, gamma, DType::kFloat32), gb = upload({c}, beta, DType::kFloat32);
    const TensorView mean = empty({c}, DType::kFloat32), var = empty({c}, DType::kFloat32);
    const TensorView y = empty(shape, dtype), yi = empty(shape, dtype), dx = empty(shape, dtype);
    const TensorView dg = empty({c}, DType::kFloat32), db = empty({c}, DType::kFloat32);
    ASSERT_NO_THROW(backend_->batch_norm_forward(gx, gg, gb, mean, var, eps, true, y));
    ASSERT_NO_THROW(backend_->batch_norm_forward(gx, gg, gb, mean, var, eps, false, yi));
    ASSERT_NO_THROW(backend_->batch_norm_backward(gx, gdy, gg, mean, var, eps, dx, dg, db));
    // Within t relative to |want|, or t * floor for values near 0 (sums over many rows cancel).
    auto expect_close = [&](const std::vector<float>& got, const std::vector<float>& want, float t, const char* what,
                            float floor = 1.0f) {
      ASSERT_EQ(got.size(), want.size());
      int bad = 0;
      for (size_t i = 0; i < got.size() && bad < 5; ++i) {
        if (!(std::fabs(got[i] - want[i]) <= t * std::max(floor, std::fabs(want[i])))) {
          ADD_FAILURE() << what << "[" << i << "] = " << got[i] << ", CPU " << want[i] << " (" << dtype_name(dtype)
                        << ")";
          ++bad;
        }
      }
    };
    expect_close(download(mean), cmean, 1e-4f, "mean");
    expect_close(download(var), cvar, 1e-4f, "var");
    expect_close(download(y), cy, tol, "y (training)");
    expect_close(download(yi), cyi, tol, "y (inference)");
    expect_close(download(db), cdb, 1e-3f, "dbeta", 10.0f);
    expect_close(download(dg), cdg, 1e-3f, "dgamma", 10.0f);
    expect_close(download(dx), cdx, tol, "dx");
  }
};

TEST_F(CudaBatchNorm, A64ImageBatchOf32x32MatchesTheCpu) {
  compare_with_cpu({64, 32, 32, 4}, DType::kFloat32, 1e-4f);
  compare_with_cpu({64, 32, 32, 4}, DType::kFloat16, 1e-2f);
}

TEST_F(CudaBatchNorm, ABatchBeyondCudnnsInferenceBoundMatchesTheCpu) {
  compare_with_cpu({65536, 1, 1, 3}, DType::kFloat32, 1e-4f);
  compare_with_cpu({65537, 1, 1, 3}, DType::kFloat16, 1e-2f);
}

TEST_F(CudaBatchNorm, RowsAndColumnsMatchTheCpu) {
  compare_with_cpu({70000, 3}, DType::kFloat32, 1e-4f);
  compare_with_cpu({5, 37}, DType::kFloat32, 1e-4f);
  if (cc_ >= 80) compare_with_cpu({70000, 3}, DType::kBFloat16, 3e-2f);
}

#endif  // GPUACCEL_TEST_CUDA_BACKEND

}  // namespace
}  // namespace gpuaccel
