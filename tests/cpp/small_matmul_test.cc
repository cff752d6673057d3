// Tests of the direct small-matmul loop (backends/cpu/small_matmul.h) against a double-precision
// reference written here: plain, transposed (strided) operands, a bias, a batch with a
// broadcast (stride-0) side, and which products it takes. Tolerances are relative to the sums'
// magnitudes, so the test does not depend on summation order or ISA.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backends/cpu/small_matmul.h"
#include "strided_test_views.h"

namespace gpuaccel::cpu {
namespace {

TensorView view_of(std::vector<float>& data, std::vector<int64_t> shape,
                   std::vector<int64_t> strides) {
  return test::strided_view(data.data(), shape, strides, DType::kFloat32);
}

std::vector<float> random_values(size_t n, unsigned seed) {
  return test::uniform_values<float>(n, seed);
}

// out = a @ b (+ bias) for a (M, K) given as a row-major (K, M) buffer read transposed when
// `a_transposed`, b (K, N) row-major.
void check(int64_t m, int64_t n, int64_t k, bool a_transposed, bool with_bias) {
  std::vector<float> a = random_values(static_cast<size_t>(m * k), 1);
  std::vector<float> b = random_values(static_cast<size_t>(k * n), 2);
  std::vector<float> bias = random_values(static_cast<size_t>(n), 3);
  std::vector<float> out(static_cast<size_t>(m * n), -99.0f);
  const TensorView av = a_transposed ? view_of(a, {m, k}, {1, m}) : view_of(a, {m, k}, {k, 1});
  const TensorView bv = view_of(b, {k, n}, {n, 1});
  const TensorView biasv = view_of(bias, {n}, {1});
  const TensorView ov = view_of(out, {m, n}, {n, 1});
  ASSERT_TRUE(small_matmul_applies(av, bv, ov));
  small_matmul(av, bv, with_bias ? &biasv : nullptr, ov);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double want = with_bias ? bias[j] : 0.0, scale = std::fabs(want);
      for (int64_t p = 0; p < k; ++p) {
        const double x = a_transposed ? a[p * m + i] : a[i * k + p];
        want += x * b[p * n + j];
        scale += std::fabs(x * b[p * n + j]);
      }
      EXPECT_NEAR(out[i * n + j], want, 1e-6 * (scale + 1.0))
          << "m=" << m << " n=" << n << " k=" << k << " at (" << i << ", " << j << ")";
    }
  }
}

TEST(SmallMatmul, MatchesReference) {
  check(64, 1, 8, false, true);   // Dense(1) forward at batch 64
  check(8, 1, 64, true, false);   // its weight gradient: x^T @ dy
  check(5, 7, 3, false, false);
  check(3, 4, 1, true, true);
}

TEST(SmallMatmul, BatchWithBroadcastSide) {
  const int64_t batches = 3, m = 2, n = 3, k = 4;
  std::vector<float> a = random_values(static_cast<size_t>(batches * m * k), 4);
  std::vector<float> b = random_values(static_cast<size_t>(k * n), 5);  // one b for all
  std::vector<float> out(static_cast<size_t>(batches * m * n));
  const TensorView av = view_of(a, {batches, m, k}, {m * k, k, 1});
  const TensorView bv = view_of(b, {batches, k, n}, {0, n, 1});
  const TensorView ov = view_of(out, {batches, m, n}, {m * n, n, 1});
  ASSERT_TRUE(small_matmul_applies(av, bv, ov));
  small_matmul(av, bv, nullptr, ov);
  for (int64_t t = 0; t < batches; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double want = 0.0;
        for (int64_t p = 0; p < k; ++p) want += double(a[(t * m + i) * k + p]) * b[p * n + j];
        EXPECT_NEAR(out[(t * m + i) * n + j], want, 1e-5) << t << " " << i << " " << j;
      }
}

TEST(SmallMatmul, LargeOrNonFloatProductsAreLeftToOneDnn) {
  std::vector<float> a(1), b(1), out(1);
  const int64_t side = 64;  // 64^3 multiply-adds > kSmallMatmulMacs
  const TensorView big_a = view_of(a, {side, side}, {0, 0});
  const TensorView big_b = view_of(b, {side, side}, {0, 0});
  const TensorView big_out = view_of(out, {side, side}, {side, 1});
  EXPECT_FALSE(small_matmul_applies(big_a, big_b, big_out));
  TensorView half_a = view_of(a, {2, 2}, {2, 1});
  half_a.dtype = DType::kBFloat16;
  EXPECT_FALSE(small_matmul_applies(half_a, view_of(b, {2, 2}, {2, 1}), view_of(out, {2, 2}, {2, 1})));
}

}  // namespace
}  // namespace gpuaccel::cpu
