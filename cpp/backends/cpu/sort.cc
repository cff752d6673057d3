// The CPU side of backends/cpu/sort.h: std::stable_sort of each row's positions by their
// kernels/sort_keys.h keys, rows in parallel (OpenMP) once there is enough work.
#include "backends/cpu/sort.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "backends/cpu/cpu_threads.h"
#include "core/errors.h"
#include "kernels/half_conversions.h"
#include "kernels/sort_keys.h"

namespace gpuaccel::cpu {
namespace {

// Calls f(S{}) with S the storage type of `dtype`.
template <typename F>
void with_storage_type(DType dtype, const char* op, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(float{}); return;
    case DType::kFloat16: f(Half{}); return;
    case DType::kBFloat16: f(BFloat16{}); return;
    case DType::kInt32: f(int32_t{}); return;
    case DType::kInt64: f(int64_t{}); return;
    case DType::kUInt8: f(uint8_t{}); return;
    case DType::kInt8: f(int8_t{}); return;
    case DType::kInt16: f(int16_t{}); return;
    case DType::kBool: f(bool{}); return;
    case DType::kFloat64: f(double{}); return;
  }
  throw_error(ErrorCode::kInternal, op, "unknown dtype");
}

int64_t last_dim(const TensorView& v) { return v.ndim == 0 ? 1 : v.shape[v.ndim - 1]; }

}  // namespace

void sort(const TensorView& x, bool descending, const TensorView& values,
          const TensorView& indices, void* /*workspace*/) {
  const int64_t n = last_dim(x);
  const int64_t total = x.numel();
  if (total == 0) return;
  const int64_t rows = total / n;
  with_storage_type(x.dtype, "sort", [&](auto tag) {
    using S = decltype(tag);
    using Key = typename kernels::SortKeyOf<S>::type;
    const S* xp = static_cast<const S*>(x.data);
    S* vp = static_cast<S*>(values.data);
    int64_t* ip = static_cast<int64_t*>(indices.data);
    parallel_for_if(rows > 1 && total >= kParallelMinElements, rows, [&](int64_t r) {
      const S* row = xp + r * n;
      std::vector<Key> keys(static_cast<size_t>(n));
      for (int64_t j = 0; j < n; ++j) keys[j] = kernels::sort_key(row[j], descending);
      int64_t* order = ip + r * n;
      std::iota(order, order + n, int64_t{0});
      std::stable_sort(order, order + n, [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
      for (int64_t j = 0; j < n; ++j) vp[r * n + j] = row[order[j]];
    });
  });
}

void take_along_last_axis(const TensorView& x, const TensorView& indices, const TensorView& out) {
  const int64_t n = last_dim(x);
  const int64_t m = last_dim(out);
  const int64_t total = out.numel();
  if (total == 0) return;
  const int64_t* ip = static_cast<const int64_t*>(indices.data);
  with_storage_type(x.dtype, "take_along_last_axis", [&](auto tag) {
    using S = decltype(tag);
    const S* xp = static_cast<const S*>(x.data);
    S* op = static_cast<S*>(out.data);
    parallel_for_if(total >= kParallelMinElements, total, [&](int64_t i) {
      op[i] = xp[i / m * n + ip[i]];
    });
  });
}

}  // namespace gpuaccel::cpu
