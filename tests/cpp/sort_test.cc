// The sort order (kernels/sort_keys.h: keys and the merge sort the CUDA kernel runs per row),
// the CPU sort and take_along_last_axis kernels against std::stable_sort with an independently
// written comparator, and the frontend's axis handling and gradient.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "backends/cpu/sort.h"
#include "kernels/sort_keys.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/reduce.h"
#include "ops/shape_ops.h"
#include "ops/sort.h"
#include "test_helpers.h"

namespace gpuaccel {
namespace {

// NumPy's/torch's ascending order, written on the values: NaN after everything, -0 == +0.
bool before_ascending(double a, double b) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return a < b;
}
bool before_descending(double a, double b) {
  if (std::isnan(b)) return false;
  if (std::isnan(a)) return true;
  return a > b;
}

// The positions of `row` in stable sorted order.
std::vector<int64_t> reference_order(const std::vector<double>& row, bool descending) {
  std::vector<int64_t> order(row.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return descending ? before_descending(row[a], row[b]) : before_ascending(row[a], row[b]);
  });
  return order;
}

// Rows with ties, signed zeros, infinities and NaNs of both signs.
std::vector<double> tricky_values(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> pick(0, 9);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const double choices[] = {0.0, -0.0, 1.5, -1.5, 2.0, inf, -inf, nan, -nan, 3.25};
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = choices[pick(gen)];
  return v;
}

TEST(SortKeys, MergeSortPairsIsStableAndMatchesTheReference) {
  for (int64_t n : {0, 1, 2, 3, 7, 64, 1000, 1025}) {
    for (bool descending : {false, true}) {
      const std::vector<double> row = tricky_values(n, static_cast<unsigned>(n) + descending);
      std::vector<uint32_t> keys_a(row.size()), keys_b(row.size());
      std::vector<int64_t> index_a(row.size()), index_b(row.size());
      for (size_t j = 0; j < row.size(); ++j) {
        keys_a[j] = kernels::sort_key(static_cast<float>(row[j]), descending);
        index_a[j] = static_cast<int64_t>(j);
      }
      const bool in_b = kernels::merge_sort_pairs(keys_a.data(), index_a.data(), keys_b.data(),
                                                  index_b.data(), n);
      EXPECT_EQ(in_b ? index_b : index_a, reference_order(row, descending))
          << "n=" << n << " descending=" << descending;
    }
  }
}

TEST(SortKeys, KeysOrderEveryTypeLikeItsValues) {
  // Integer keys are monotonic across the sign boundary and the type's whole range.
  const int64_t i64[] = {std::numeric_limits<int64_t>::min(), -5, -1, 0, 1, 7,
                         std::numeric_limits<int64_t>::max()};
  for (size_t i = 0; i + 1 < std::size(i64); ++i) {
    EXPECT_LT(kernels::sort_key(i64[i], false), kernels::sort_key(i64[i + 1], false));
    EXPECT_GT(kernels::sort_key(i64[i], true), kernels::sort_key(i64[i + 1], true));
  }
  EXPECT_LT(kernels::sort_key(int32_t{-1}, false), kernels::sort_key(int32_t{0}, false));
  EXPECT_LT(kernels::sort_key(uint8_t{3}, false), kernels::sort_key(uint8_t{200}, false));
  EXPECT_LT(kernels::sort_key(false, false), kernels::sort_key(true, false));
  // Floats: -inf < -1 < -0 == +0 < denormal < 1 < inf < NaN (any sign).
  const float denormal = std::numeric_limits<float>::denorm_min();
  EXPECT_LT(kernels::sort_key(-std::numeric_limits<float>::infinity(), false), kernels::sort_key(-1.0f, false));
  EXPECT_LT(kernels::sort_key(-1.0f, false), kernels::sort_key(-0.0f, false));
  EXPECT_EQ(kernels::sort_key(-0.0f, false), kernels::sort_key(0.0f, false));
  EXPECT_LT(kernels::sort_key(0.0f, false), kernels::sort_key(denormal, false));
  EXPECT_LT(kernels::sort_key(std::numeric_limits<float>::infinity(), false),
            kernels::sort_key(-std::nanf(""), false));
  EXPECT_EQ(kernels::sort_key(std::nanf(""), false), kernels::sort_key(-std::nanf(""), false));
  // Doubles: the same rules over all 64 bits (values a float would merge stay apart).
  const double below_one = std::nextafter(1.0, 0.0);
  EXPECT_LT(kernels::sort_key(-std::numeric_limits<double>::max(), false), kernels::sort_key(-1e-300, false));
  EXPECT_LT(kernels::sort_key(-1e-300, false), kernels::sort_key(-0.0, false));
  EXPECT_EQ(kernels::sort_key(-0.0, false), kernels::sort_key(0.0, false));
  EXPECT_LT(kernels::sort_key(std::numeric_limits<double>::denorm_min(), false), kernels::sort_key(below_one, false));
  EXPECT_LT(kernels::sort_key(below_one, false), kernels::sort_key(1.0, false));
  EXPECT_LT(kernels::sort_key(std::numeric_limits<double>::infinity(), false), kernels::sort_key(std::nan(""), false));
  EXPECT_EQ(kernels::sort_key(std::nan(""), false), kernels::sort_key(-std::nan(""), false));
  EXPECT_GT(kernels::sort_key(below_one, true), kernels::sort_key(1.0, true));
  // 16-bit floats order by their float value.
  EXPECT_LT(kernels::sort_key(Half::from_float(-2.0f), false), kernels::sort_key(Half::from_float(0.5f), false));
  EXPECT_LT(kernels::sort_key(BFloat16::from_float(0.5f), false), kernels::sort_key(BFloat16::from_float(3.0f), false));
}

// The CPU kernel on float32 rows with ties and NaNs, both directions, many rows in parallel.
TEST(CpuSort, RowsMatchStableSortBothWays) {
  const int64_t rows = 300, n = 257;  // over kParallelMinElements: the rows run in parallel
  const std::vector<double> all = tricky_values(rows * n, 5);
  std::vector<float> x(all.begin(), all.end());
  std::vector<float> values(x.size());
  std::vector<int64_t> indices(x.size());
  for (bool descending : {false, true}) {
    cpu::sort(test::contiguous_view(x.data(), {rows, n}, DType::kFloat32), descending,
              test::contiguous_view(values.data(), {rows, n}, DType::kFloat32),
              test::contiguous_view(indices.data(), {rows, n}, DType::kInt64), nullptr);
    int bad = 0;
    for (int64_t r = 0; r < rows; ++r) {
      const std::vector<double> row(all.begin() + r * n, all.begin() + (r + 1) * n);
      const std::vector<int64_t> want = reference_order(row, descending);
      for (int64_t j = 0; j < n; ++j) {
        if (indices[r * n + j] != want[j]) ++bad;
        const float v = values[r * n + j], w = x[r * n + want[j]];
        if (std::memcmp(&v, &w, sizeof v) != 0) ++bad;  // the very element, sign of zero included
      }
    }
    EXPECT_EQ(bad, 0) << "descending=" << descending;
  }
}

TEST(CpuSort, Int64AndTakeAlongLastAxis) {
  std::vector<int64_t> x = {5, -3, 5, std::numeric_limits<int64_t>::min(), 0, 9,
                            2, 2, 2, -1, std::numeric_limits<int64_t>::max(), 2};
  std::vector<int64_t> values(12), indices(12);
  cpu::sort(test::contiguous_view(x.data(), {2, 6}, DType::kInt64), true,
            test::contiguous_view(values.data(), {2, 6}, DType::kInt64),
            test::contiguous_view(indices.data(), {2, 6}, DType::kInt64), nullptr);
  EXPECT_EQ(indices, (std::vector<int64_t>{5, 0, 2, 4, 1, 3, 4, 0, 1, 2, 5, 3}));
  EXPECT_EQ(values[0], 9);
  EXPECT_EQ(values[5], std::numeric_limits<int64_t>::min());
  // take_along_last_axis reads each row by its own positions (fewer than the row has).
  std::vector<float> table = {10, 11, 12, 13, 20, 21, 22, 23};
  std::vector<int64_t> picks = {3, 0, 3, 1, 1, 2};
  std::vector<float> out(6);
  cpu::take_along_last_axis(test::contiguous_view(table.data(), {2, 4}, DType::kFloat32),
                            test::contiguous_view(picks.data(), {2, 3}, DType::kInt64),
                            test::contiguous_view(out.data(), {2, 3}, DType::kFloat32));
  EXPECT_EQ(out, (std::vector<float>{13, 10, 13, 21, 21, 22}));
}

// The frontend sorts along any axis, and the values' gradient goes back to each value's
// position (a weighted sum of the sorted values, differentiated).
TEST(SortOp, AxisAndGradient) {
  Tensor x = test::make({3, 1, 2, 9, -4, 2}, {2, 3});
  x.impl()->requires_grad = true;
  const SortResult by_rows = sort(x, 0, false);  // along axis 0: columns
  EXPECT_EQ(test::read(by_rows.values), (std::vector<float>{3, -4, 2, 9, 1, 2}));
  EXPECT_EQ(test::read(cast(by_rows.indices, DType::kFloat32)), (std::vector<float>{0, 1, 0, 1, 0, 1}));
  const SortResult sorted = sort(x, -1, true);
  EXPECT_EQ(test::read(sorted.values), (std::vector<float>{3, 2, 1, 9, 2, -4}));
  const Tensor weights = test::make({1, 10, 100, 1000, 10000, 100000}, {2, 3});
  const Tensor loss = reduce(ReduceOp::kSum, mul(sorted.values, weights), {}, false);
  const std::vector<Tensor> grads = compute_gradients({loss}, {Tensor()}, {x});
  // x[0] = (3, 1, 2) sorted descending is positions (0, 2, 1): weights 1, 10, 100 go there.
  EXPECT_EQ(test::read(grads[0]), (std::vector<float>{1, 100, 10, 1000, 100000, 10000}));
}

}  // namespace
}  // namespace gpuaccel
