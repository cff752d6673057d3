// Tests of the CPU's float64 matmul loop (backends/cpu/float64_matmul.h) against a long-double
// reference written here: plain and transposed (strided) operands, a bias, a batch with a
// broadcast (stride-0) right side, and sizes large enough to split rows across threads. The
// tolerance is relative to the sums' magnitudes at float64's epsilon: float32 arithmetic
// anywhere would miss it by seven orders of magnitude.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/float64_matmul.h"
#include "core/errors.h"
#include "strided_test_views.h"

namespace gpuaccel::cpu {
namespace {

TensorView view_of(std::vector<double>& data, std::vector<int64_t> shape,
                   std::vector<int64_t> strides) {
  return test::strided_view(data.data(), shape, strides, DType::kFloat64);
}

std::vector<double> random_values(size_t n, unsigned seed) {
  return test::uniform_values<double>(n, seed);
}

// out[t] = a[t] @ b[t or 0] (+ bias) with a (batches, M, K), read transposed when
// `a_transposed`; b (K, N) row-major, one per batch or shared (stride 0) when `b_shared`.
void check(int64_t batches, int64_t m, int64_t n, int64_t k, bool a_transposed, bool b_shared,
           bool with_bias) {
  std::vector<double> a = random_values(static_cast<size_t>(batches * m * k), 1);
  std::vector<double> b = random_values(static_cast<size_t>((b_shared ? 1 : batches) * k * n), 2);
  std::vector<double> bias = random_values(static_cast<size_t>(n), 3);
  std::vector<double> out(static_cast<size_t>(batches * m * n), -99.0);
  const TensorView av = a_transposed ? view_of(a, {batches, m, k}, {m * k, 1, m})
                                     : view_of(a, {batches, m, k}, {m * k, k, 1});
  const TensorView bv = view_of(b, {batches, k, n}, {b_shared ? 0 : k * n, n, 1});
  const TensorView biasv = view_of(bias, {n}, {1});
  const TensorView ov = view_of(out, {batches, m, n}, {m * n, n, 1});
  float64_matmul(av, bv, with_bias ? &biasv : nullptr, ov);
  for (int64_t t = 0; t < batches; ++t) {
    const double* bt = b.data() + (b_shared ? 0 : t * k * n);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        long double want = with_bias ? bias[j] : 0.0L, scale = std::fabs(want);
        for (int64_t p = 0; p < k; ++p) {
          const double x = a_transposed ? a[t * m * k + p * m + i] : a[t * m * k + i * k + p];
          want += static_cast<long double>(x) * bt[p * n + j];
          scale += std::fabs(static_cast<long double>(x) * bt[p * n + j]);
        }
        EXPECT_NEAR(out[(t * m + i) * n + j], static_cast<double>(want),
                    4e-16 * static_cast<double>(scale + 1.0L) * static_cast<double>(k))
            << "batch " << t << " at (" << i << ", " << j << ")";
      }
    }
  }
}

TEST(Float64Matmul, MatchesReference) {
  check(1, 5, 3, 7, false, false, false);
  check(1, 5, 3, 7, false, false, true);
  check(1, 1, 1, 1, false, false, false);
}

TEST(Float64Matmul, TransposedLeftOperand) { check(1, 9, 4, 6, true, false, true); }

TEST(Float64Matmul, BatchWithSharedRightSide) {
  check(3, 4, 5, 6, false, true, false);
  check(3, 4, 5, 6, true, false, true);
}

TEST(Float64Matmul, LargeEnoughToRunInParallel) { check(2, 64, 48, 40, false, false, true); }

TEST(Float64Matmul, RefusesOtherDtypes) {
  std::vector<double> a = random_values(4, 1), out(4);
  TensorView av = view_of(a, {2, 2}, {2, 1});
  TensorView ov = view_of(out, {2, 2}, {2, 1});
  av.dtype = DType::kFloat32;
  EXPECT_THROW(float64_matmul(av, av, nullptr, ov), Error);
}

}  // namespace
}  // namespace gpuaccel::cpu
