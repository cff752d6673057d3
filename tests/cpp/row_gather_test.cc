// Tests of the CPU's row gathers (backends/cpu/row_gather.h) against loops written here:
// gather of every dtype's bytes, the scatter-add's fixed order (repeated ids summed as i runs),
// ids out of range (zero rows, nothing added, nothing touched outside the table), a size
// that splits the work across threads, the scatter max/min (NaN winning, integers too), and
// integer sums and products (exact, wrapping).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "backends/cpu/row_gather.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"
#include "strided_test_views.h"

namespace gpuaccel::cpu {
namespace {

TensorView contiguous(void* data, std::vector<int64_t> shape, DType dtype) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return test::strided_view(data, shape, strides, dtype);
}

TEST(RowGather, GathersRowsOfEveryWidthAndZerosForIdsOutOfRange) {
  std::vector<double> table = test::uniform_values<double>(5 * 3, 7);
  std::vector<int64_t> ids = {4, 0, 4, -1, 5, 2};
  std::vector<double> out(ids.size() * 3, -99.0);
  gather_rows(contiguous(table.data(), {5, 3}, DType::kFloat64),
              contiguous(ids.data(), {6}, DType::kInt64),
              contiguous(out.data(), {6, 3}, DType::kFloat64));
  for (size_t i = 0; i < ids.size(); ++i) {
    for (int c = 0; c < 3; ++c) {
      const double want = ids[i] >= 0 && ids[i] < 5 ? table[ids[i] * 3 + c] : 0.0;
      EXPECT_EQ(out[i * 3 + c], want) << "row " << i;
    }
  }
  // Any dtype: rows are bytes (uint8 here).
  std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6};
  std::vector<int64_t> two = {2, 0};
  std::vector<uint8_t> picked(4);
  gather_rows(contiguous(bytes.data(), {3, 2}, DType::kUInt8), contiguous(two.data(), {2}, DType::kInt64),
              contiguous(picked.data(), {2, 2}, DType::kUInt8));
  EXPECT_EQ(picked, (std::vector<uint8_t>{5, 6, 1, 2}));
}

TEST(RowGather, ScatterAddSumsRepeatedIdsInOrderAndSkipsOutOfRange) {
  const int64_t vocabulary = 4, width = 40, n = 9;
  std::vector<float> rows = test::uniform_values<float>(n * width, 3);
  std::vector<int64_t> ids = {1, 3, 1, 1, 7, -2, 0, 3, 1};
  std::vector<float> table(vocabulary * width + 8, 0.0f);  // 8 guard elements after the table
  scatter_rows(contiguous(rows.data(), {n, width}, DType::kFloat32),
                   contiguous(ids.data(), {n}, DType::kInt64),
                   contiguous(table.data(), {vocabulary, width}, DType::kFloat32), RowCombine::kAdd);
  for (int64_t v = 0; v < vocabulary; ++v) {
    for (int64_t c = 0; c < width; ++c) {
      float want = 0.0f;  // summed in order of i, as the kernel promises
      for (int64_t i = 0; i < n; ++i) {
        if (ids[i] == v) want += rows[i * width + c];
      }
      EXPECT_EQ(table[v * width + c], want) << "row " << v << " column " << c;
    }
  }
  for (int64_t k = vocabulary * width; k < static_cast<int64_t>(table.size()); ++k) EXPECT_EQ(table[k], 0.0f);
}

TEST(RowGather, LargeScatterAddIsTheSameWhateverTheThreads) {
  const int64_t vocabulary = 50, width = 256, n = 2000;
  std::vector<float> rows = test::uniform_values<float>(n * width, 5);
  std::vector<int64_t> ids(n);
  for (int64_t i = 0; i < n; ++i) ids[i] = (i * 7919) % vocabulary;
  std::vector<float> table(vocabulary * width, 0.0f);
  scatter_rows(contiguous(rows.data(), {n, width}, DType::kFloat32),
                   contiguous(ids.data(), {n}, DType::kInt64),
                   contiguous(table.data(), {vocabulary, width}, DType::kFloat32), RowCombine::kAdd);
  std::vector<float> want(vocabulary * width, 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < width; ++c) want[ids[i] * width + c] += rows[i * width + c];
  }
  EXPECT_EQ(table, want);  // bit for bit: the order of the sums is fixed
}

TEST(RowGather, ScatterAddOfHalfRoundsEachSum) {
  std::vector<Half> rows = {Half::from_float(1.5f), Half::from_float(0.25f)};
  std::vector<int64_t> ids = {0, 0};
  std::vector<Half> table = {Half::from_float(0.0f)};
  scatter_rows(contiguous(rows.data(), {2, 1}, DType::kFloat16), contiguous(ids.data(), {2}, DType::kInt64),
               contiguous(table.data(), {1, 1}, DType::kFloat16), RowCombine::kAdd);
  EXPECT_EQ(table[0].to_float(), 1.75f);
}

// Integer sums and products are exact and wrap in two's complement (PyTorch's and TF's
// integer arithmetic), int64 beyond 2^53 included; 8-bit tables are refused (the ops widen).
TEST(RowGather, IntegerSumsAndProductsAreExactAndWrap) {
  const std::vector<int64_t> ids = {0, 1, 0, 1, 2};
  std::vector<int32_t> ints = {2147483647, 3, 1, -4, 9};
  std::vector<int32_t> sums = {0, 0, 0}, products = {1, 1, 1};
  scatter_rows(contiguous(ints.data(), {5, 1}, DType::kInt32), contiguous(const_cast<int64_t*>(ids.data()), {5}, DType::kInt64),
               contiguous(sums.data(), {3, 1}, DType::kInt32), RowCombine::kAdd);
  scatter_rows(contiguous(ints.data(), {5, 1}, DType::kInt32), contiguous(const_cast<int64_t*>(ids.data()), {5}, DType::kInt64),
               contiguous(products.data(), {3, 1}, DType::kInt32), RowCombine::kMultiply);
  EXPECT_EQ(sums, (std::vector<int32_t>{-2147483647 - 1, -1, 9}));      // INT32_MAX + 1 wraps
  EXPECT_EQ(products, (std::vector<int32_t>{2147483647, -12, 9}));
  std::vector<int64_t> big = {(int64_t{1} << 60) + 1, 1, (int64_t{1} << 62), 4};
  const std::vector<int64_t> to_zero = {0, 0, 1, 1};
  std::vector<int64_t> big_sums = {0, 0}, big_products = {1, 1};
  scatter_rows(contiguous(big.data(), {4, 1}, DType::kInt64), contiguous(const_cast<int64_t*>(to_zero.data()), {4}, DType::kInt64),
               contiguous(big_sums.data(), {2, 1}, DType::kInt64), RowCombine::kAdd);
  scatter_rows(contiguous(big.data(), {4, 1}, DType::kInt64), contiguous(const_cast<int64_t*>(to_zero.data()), {4}, DType::kInt64),
               contiguous(big_products.data(), {2, 1}, DType::kInt64), RowCombine::kMultiply);
  EXPECT_EQ(big_sums, (std::vector<int64_t>{(int64_t{1} << 60) + 2, (int64_t{1} << 62) + 4}));
  EXPECT_EQ(big_products[0], (int64_t{1} << 60) + 1);
  EXPECT_EQ(big_products[1], 0);  // 2^62 * 4 = 2^64 wraps to 0
  std::vector<uint8_t> bytes = {1}, byte_table = {0};
  EXPECT_THROW(scatter_rows(contiguous(bytes.data(), {1, 1}, DType::kUInt8),
                            contiguous(const_cast<int64_t*>(ids.data()), {1}, DType::kInt64),
                            contiguous(byte_table.data(), {1, 1}, DType::kUInt8), RowCombine::kAdd),
               Error);
}

// Products in order of i, skipping ids out of range; float16 is multiplied in float32 and
// rounded at each step.
TEST(RowGather, ScatterMultiplyInOrderSkipsOutOfRange) {
  const int64_t vocabulary = 3, width = 33, n = 6;
  std::vector<double> rows = test::uniform_values<double>(n * width, 13);
  std::vector<int64_t> ids = {2, 0, 2, 5, 2, -1};
  std::vector<double> table(vocabulary * width + 2, 1.0);  // 2 guard elements
  scatter_rows(contiguous(rows.data(), {n, width}, DType::kFloat64), contiguous(ids.data(), {n}, DType::kInt64),
               contiguous(table.data(), {vocabulary, width}, DType::kFloat64), RowCombine::kMultiply);
  for (int64_t v = 0; v < vocabulary; ++v) {
    for (int64_t c = 0; c < width; ++c) {
      double want = 1.0;
      for (int64_t i = 0; i < n; ++i) {
        if (ids[i] == v) want *= rows[i * width + c];
      }
      EXPECT_EQ(table[v * width + c], want) << "row " << v << " column " << c;
    }
  }
  EXPECT_EQ(table[vocabulary * width], 1.0);
  EXPECT_EQ(table[vocabulary * width + 1], 1.0);
}

TEST(RowGather, ScatterExtremeKeepsTheMaxOrMinNanWinningAndSkipsOutOfRange) {
  const int64_t vocabulary = 3, width = 37, n = 7;  // 37 columns: two thread blocks
  std::vector<float> rows = test::uniform_values<float>(n * width, 11);
  rows[2 * width + 5] = std::numeric_limits<float>::quiet_NaN();
  rows[0 * width + 6] = std::numeric_limits<float>::infinity();
  std::vector<int64_t> ids = {0, 2, 0, 9, 2, -1, 0};
  for (bool is_max : {true, false}) {
    const float identity = is_max ? -1e30f : 1e30f;
    std::vector<float> table(vocabulary * width + 4, identity);  // 4 guard elements
    scatter_rows(contiguous(rows.data(), {n, width}, DType::kFloat32),
                         contiguous(ids.data(), {n}, DType::kInt64),
                         contiguous(table.data(), {vocabulary, width}, DType::kFloat32),
                 is_max ? RowCombine::kMax : RowCombine::kMin);
    for (int64_t v = 0; v < vocabulary; ++v) {
      for (int64_t c = 0; c < width; ++c) {
        float want = identity;
        bool nan = false;
        for (int64_t i = 0; i < n; ++i) {
          if (ids[i] != v) continue;
          const float x = rows[i * width + c];
          nan |= std::isnan(x);
          want = is_max ? std::max(want, x) : std::min(want, x);
        }
        const float got = table[v * width + c];
        if (nan) {
          EXPECT_TRUE(std::isnan(got)) << "row " << v << " column " << c;
        } else {
          EXPECT_EQ(got, want) << "row " << v << " column " << c << (is_max ? " max" : " min");
        }
      }
    }
    for (int64_t k = vocabulary * width; k < static_cast<int64_t>(table.size()); ++k) {
      EXPECT_EQ(table[k], identity);
    }
  }
  // int64 beyond 2^53, where a float comparison would tie
  std::vector<int64_t> big = {(int64_t{1} << 60) + 1, (int64_t{1} << 60) + 2, 5};
  std::vector<int64_t> to_zero = {0, 0, 1};
  std::vector<int64_t> int_table = {INT64_MIN, INT64_MIN};
  scatter_rows(contiguous(big.data(), {3, 1}, DType::kInt64),
                       contiguous(to_zero.data(), {3}, DType::kInt64),
                       contiguous(int_table.data(), {2, 1}, DType::kInt64), RowCombine::kMax);
  EXPECT_EQ(int_table, (std::vector<int64_t>{(int64_t{1} << 60) + 2, 5}));
  std::vector<uint8_t> bytes = {1}, byte_table = {0};
  EXPECT_THROW(scatter_rows(contiguous(bytes.data(), {1, 1}, DType::kUInt8),
                                    contiguous(to_zero.data(), {1}, DType::kInt64),
                                    contiguous(byte_table.data(), {1, 1}, DType::kUInt8), RowCombine::kMax),
               Error);
}

}  // namespace
}  // namespace gpuaccel::cpu
