// The loops of row_gather.h.
#include "backends/cpu/row_gather.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "backends/cpu/cpu_threads.h"
#include "backends/op_names.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"

namespace gpuaccel::cpu {
namespace {

int64_t row_length(const TensorView& v) { return v.ndim < 2 ? 1 : v.shape[v.ndim - 1]; }

void require(bool ok, const char* op, const std::string& what) {
  if (!ok) throw_error(ErrorCode::kInternal, op, what);
}

// The type an element is combined in: float for the 16-bit floats, else its own.
template <typename S>
using ComputeOf = std::conditional_t<std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>, float, S>;

template <typename S>
ComputeOf<S> load(S v) {
  if constexpr (std::is_same_v<ComputeOf<S>, S>) return v; else return v.to_float();
}
template <typename S>
S store(ComputeOf<S> v) {
  if constexpr (std::is_same_v<ComputeOf<S>, S>) return v; else return S::from_float(v);
}

// table[ids[i]][c] = combine(table[ids[i]][c], rows[i][c]) over the columns [begin, end), ids
// in order.
template <typename S, typename Combine>
void combine_columns(const S* rows, const int64_t* ids, int64_t n, int64_t width, S* table,
                     int64_t vocabulary, int64_t begin, int64_t end, Combine combine) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= vocabulary) continue;  // reported by the range check
    S* to = table + ids[i] * width;
    const S* from = rows + i * width;
    for (int64_t c = begin; c < end; ++c) to[c] = store<S>(combine(load(to[c]), load(from[c])));
  }
}

// The scatter driver: column blocks of at least 16 elements (a cache line of float32), one or
// more per thread, so no two threads touch one element and the order is the ids'.
template <typename S, typename Combine>
void scatter_rows(const TensorView& rows, const TensorView& ids, const TensorView& table,
                  Combine combine) {
  const int64_t n = ids.numel(), width = row_length(table), vocabulary = table.shape[0];
  if (n == 0 || width == 0) return;
  const int64_t* id = static_cast<const int64_t*>(ids.data);
  const S* from = static_cast<const S*>(rows.data);
  S* to = static_cast<S*>(table.data);
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(width / 16, 64));
  parallel_for_if(n * width >= kParallelMinElements && blocks > 1, blocks, [&](int64_t b) {
    combine_columns(from, id, n, width, to, vocabulary, b * width / blocks,
                    (b + 1) * width / blocks, combine);
  });
}

// max/min with NaN winning (a NaN compares false both ways, so it must be looked for).
template <typename C>
C extreme(C kept, C next, bool is_max) {
  if constexpr (std::is_floating_point_v<C>) {
    if (kept != kept) return kept;
    if (next != next) return next;
  }
  return (is_max ? next > kept : next < kept) ? next : kept;
}

// Integer sums and products wrap in two's complement (as PyTorch and TF): computed unsigned,
// where overflow is defined.
template <typename C>
C add(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <typename C>
C multiply(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

template <typename S>
void scatter_rows_as(const TensorView& rows, const TensorView& ids, const TensorView& table,
                     RowCombine combine) {
  switch (combine) {
    case RowCombine::kAdd: return scatter_rows<S>(rows, ids, table, [](auto a, auto b) { return add(a, b); });
    case RowCombine::kMultiply:
      return scatter_rows<S>(rows, ids, table, [](auto a, auto b) { return multiply(a, b); });
    case RowCombine::kMax:
    case RowCombine::kMin: {
      const bool is_max = combine == RowCombine::kMax;
      return scatter_rows<S>(rows, ids, table, [is_max](auto a, auto b) { return extreme(a, b, is_max); });
    }
  }
}

}  // namespace

void gather_rows(const TensorView& table, const TensorView& ids, const TensorView& out) {
  require(ids.dtype == DType::kInt64 && out.dtype == table.dtype, "gather_rows",
          "ids must be int64 and out of the table's dtype");
  const int64_t n = ids.numel(), width = row_length(table), vocabulary = table.shape[0];
  const size_t row_bytes = static_cast<size_t>(width) * dtype_size(table.dtype);
  const int64_t* id = static_cast<const int64_t*>(ids.data);
  const char* from = static_cast<const char*>(table.data);
  char* to = static_cast<char*>(out.data);
  parallel_for_if(n * width >= kParallelMinElements, n, [&](int64_t i) {
    if (id[i] < 0 || id[i] >= vocabulary) {  // reported by the range check
      std::memset(to + i * row_bytes, 0, row_bytes);
    } else {
      std::memcpy(to + i * row_bytes, from + id[i] * row_bytes, row_bytes);
    }
  });
}

void scatter_rows(const TensorView& rows, const TensorView& ids, const TensorView& table,
                  RowCombine combine) {
  require(ids.dtype == DType::kInt64 && rows.dtype == table.dtype, op_name(combine),
          "ids must be int64 and rows of the table's dtype");
  switch (table.dtype) {
    case DType::kFloat32: return scatter_rows_as<float>(rows, ids, table, combine);
    case DType::kFloat64: return scatter_rows_as<double>(rows, ids, table, combine);
    case DType::kFloat16: return scatter_rows_as<Half>(rows, ids, table, combine);
    case DType::kBFloat16: return scatter_rows_as<BFloat16>(rows, ids, table, combine);
    case DType::kInt32: return scatter_rows_as<int32_t>(rows, ids, table, combine);
    case DType::kInt64: return scatter_rows_as<int64_t>(rows, ids, table, combine);
    default: break;
  }
  throw_error(ErrorCode::kInvalidArgument, op_name(combine),
              std::string("expected a floating dtype, int32 or int64, got ") +
                  dtype_name(table.dtype));
}

}  // namespace gpuaccel::cpu
