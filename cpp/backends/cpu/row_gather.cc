// The loops of row_gather.h.
#include "backends/cpu/row_gather.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <type_traits>

#include "backends/cpu/cpu_threads.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"

namespace gpuaccel::cpu {
namespace {

int64_t row_length(const TensorView& v) { return v.ndim < 2 ? 1 : v.shape[v.ndim - 1]; }

void require(bool ok, const char* op, const std::string& what) {
  if (!ok) throw_error(ErrorCode::kInternal, op, what);
}

// table[row] += rows[row_i] over the columns [begin, end), ids in order.
template <typename S>
void add_columns(const S* rows, const int64_t* ids, int64_t n, int64_t width, S* table,
                 int64_t vocabulary, int64_t begin, int64_t end) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= vocabulary) continue;  // reported by the range check
    S* to = table + ids[i] * width;
    const S* from = rows + i * width;
    for (int64_t c = begin; c < end; ++c) {
      if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
        to[c] = S::from_float(to[c].to_float() + from[c].to_float());
      } else {
        to[c] += from[c];
      }
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

void scatter_add_rows(const TensorView& rows, const TensorView& ids, const TensorView& table) {
  require(ids.dtype == DType::kInt64 && rows.dtype == table.dtype, "scatter_add_rows",
          "ids must be int64 and rows of the table's dtype");
  const int64_t n = ids.numel(), width = row_length(table), vocabulary = table.shape[0];
  if (n == 0 || width == 0) return;
  const int64_t* id = static_cast<const int64_t*>(ids.data);
  auto run = [&](auto tag) {
    using S = decltype(tag);
    const S* from = static_cast<const S*>(rows.data);
    S* to = static_cast<S*>(table.data);
    // Column blocks of at least 16 elements (a cache line of float32), one or more per thread.
    const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>(width / 16, 64));
    parallel_for_if(n * width >= kParallelMinElements && blocks > 1, blocks, [&](int64_t b) {
      add_columns(from, id, n, width, to, vocabulary, b * width / blocks, (b + 1) * width / blocks);
    });
  };
  switch (table.dtype) {
    case DType::kFloat32: return run(float{});
    case DType::kFloat64: return run(double{});
    case DType::kFloat16: return run(Half{});
    case DType::kBFloat16: return run(BFloat16{});
    default: break;
  }
  throw_error(ErrorCode::kInvalidArgument, "scatter_add_rows",
              std::string("expected a floating dtype, got ") + dtype_name(table.dtype));
}

}  // namespace gpuaccel::cpu
