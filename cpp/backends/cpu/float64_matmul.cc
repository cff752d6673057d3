// The loop of float64_matmul.h.
#include "backends/cpu/float64_matmul.h"

#include <algorithm>
#include <vector>

#include "backends/cpu/cpu_threads.h"
#include "core/errors.h"

namespace gpuaccel::cpu {

void float64_matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                    const TensorView& out) {
  if (a.dtype != DType::kFloat64 || b.dtype != DType::kFloat64 || out.dtype != DType::kFloat64 ||
      (bias != nullptr && bias->dtype != DType::kFloat64)) {
    throw_error(ErrorCode::kInternal, "float64_matmul", "every operand must be float64");
  }
  const int r = out.ndim;
  const int64_t batches = r == 3 ? out.shape[0] : 1;
  const int64_t m = out.shape[r - 2], n = out.shape[r - 1], k = a.shape[r - 1];
  if (batches * m * n == 0) return;
  const int64_t a_batch = r == 3 ? a.strides[0] : 0, b_batch = r == 3 ? b.strides[0] : 0;
  const int64_t a_row = a.strides[r - 2], a_col = a.strides[r - 1];
  const int64_t b_row = b.strides[r - 2], b_col = b.strides[r - 1];
  const double* ap = static_cast<const double*>(a.data);
  const double* bp = static_cast<const double*>(b.data);
  double* op = static_cast<double*>(out.data);

  // b as contiguous (k, n) rows: as it is when already so, else one copy per distinct batch.
  const bool b_rows_contiguous = b_col == 1 && b_row == n;
  const int64_t b_copies = b_rows_contiguous ? 0 : (b_batch == 0 ? 1 : batches);
  std::vector<double> packed(static_cast<size_t>(b_copies * k * n));
  for (int64_t t = 0; t < b_copies; ++t) {
    const double* src = bp + t * b_batch;
    double* dst = packed.data() + t * k * n;
    for (int64_t p = 0; p < k; ++p) {
      for (int64_t j = 0; j < n; ++j) dst[p * n + j] = src[p * b_row + j * b_col];
    }
  }
  auto b_rows_of = [&](int64_t t) -> const double* {
    if (b_rows_contiguous) return bp + t * b_batch;
    return packed.data() + (b_batch == 0 ? 0 : t) * k * n;
  };

  std::vector<double> bias_row;
  if (bias != nullptr) {
    const int64_t stride = bias->strides[bias->ndim - 1];
    const double* biasp = static_cast<const double*>(bias->data);
    bias_row.resize(static_cast<size_t>(n));
    for (int64_t j = 0; j < n; ++j) bias_row[j] = biasp[j * stride];
  }

  const int64_t rows = batches * m;
  const bool parallel = rows * n * k >= kParallelMinElements;
#pragma omp parallel for schedule(static) if (parallel)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t t = row / m, i = row % m;
    const double* a_i = ap + t * a_batch + i * a_row;
    const double* b_rows = b_rows_of(t);
    double* o = op + row * n;
    std::fill(o, o + n, 0.0);
    for (int64_t p = 0; p < k; ++p) {
      const double scale = a_i[p * a_col];
      const double* b_p = b_rows + p * n;
      for (int64_t j = 0; j < n; ++j) o[j] += scale * b_p[j];
    }
    if (bias != nullptr) {
      for (int64_t j = 0; j < n; ++j) o[j] += bias_row[j];
    }
  }
}

}  // namespace gpuaccel::cpu
