// The direct loop of small_matmul.h.
#include "backends/cpu/small_matmul.h"

namespace gpuaccel::cpu {

bool small_matmul_applies(const TensorView& a, const TensorView& b, const TensorView& out) {
  if (a.dtype != DType::kFloat32 || b.dtype != DType::kFloat32 || out.dtype != DType::kFloat32) {
    return false;
  }
  if (out.ndim < 2 || out.ndim > 3 || a.ndim != out.ndim || b.ndim != out.ndim) return false;
  const int64_t batches = out.ndim == 3 ? out.shape[0] : 1;
  const int64_t m = out.shape[out.ndim - 2], n = out.shape[out.ndim - 1];
  const int64_t k = a.shape[a.ndim - 1];
  return batches * m * n * k <= kSmallMatmulMacs;
}

void small_matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                  const TensorView& out) {
  const int r = out.ndim;
  const int64_t batches = r == 3 ? out.shape[0] : 1;
  const int64_t m = out.shape[r - 2], n = out.shape[r - 1], k = a.shape[r - 1];
  const int64_t a_batch = r == 3 ? a.strides[0] : 0, b_batch = r == 3 ? b.strides[0] : 0;
  const int64_t a_row = a.strides[r - 2], a_col = a.strides[r - 1];
  const int64_t b_row = b.strides[r - 2], b_col = b.strides[r - 1];
  const float* ap = static_cast<const float*>(a.data);
  const float* bp = static_cast<const float*>(b.data);
  const float* biasp = bias != nullptr ? static_cast<const float*>(bias->data) : nullptr;
  const int64_t bias_stride = bias != nullptr ? bias->strides[bias->ndim - 1] : 0;
  float* op = static_cast<float*>(out.data);
  for (int64_t t = 0; t < batches; ++t) {
    const float* at = ap + t * a_batch;
    const float* bt = bp + t * b_batch;
    float* ot = op + t * m * n;
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (int64_t p = 0; p < k; ++p) sum += at[i * a_row + p * a_col] * bt[p * b_row + j * b_col];
        ot[i * n + j] = biasp != nullptr ? sum + biasp[j * bias_stride] : sum;
      }
    }
  }
}

}  // namespace gpuaccel::cpu
