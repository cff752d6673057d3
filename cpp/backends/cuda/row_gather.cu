// Row gathers on the GPU (backends/backend_ops.def: gather_rows, scatter_rows). The gather is
// one thread per output element. The scatter gives each thread one column and walk the ids in order, as the CPU does: every element is combined in
// one fixed order (no atomics, so the same result on every run), parallel across the row width.
// A wide table (an embedding of 64+ features) fills the threads it needs; a very long id list
// with a narrow table is the slow case, and the one to measure on a GPU.
#include <string>
#include <type_traits>

#include "backends/cuda/context.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "backends/op_names.h"

namespace gpuaccel::cuda {

namespace {

template <typename S>
__global__ void gather_rows_kernel(const S* table, int64_t vocabulary, const int64_t* ids,
                                   int64_t total, int64_t width, S* out) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < total; e += step) {
    const int64_t id = ids[e / width];
    // An id out of range gives zeros (the deferred range check reports it).
    out[e] = id >= 0 && id < vocabulary ? table[id * width + e % width] : S{};
  }
}

// One thread per column: table[ids[i]][c] = combine(table[ids[i]][c], rows[i][c]), ids in
// order.
template <typename S, typename Combine>
__global__ void scatter_rows_kernel(const S* rows, const int64_t* ids, int64_t n, int64_t width,
                                    S* table, int64_t vocabulary, Combine combine) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < width; c += step) {
    for (int64_t i = 0; i < n; ++i) {
      if (ids[i] < 0 || ids[i] >= vocabulary) continue;  // reported by the range check
      S& to = table[ids[i] * width + c];
      to = Elem<S>::store(combine(Elem<S>::load(to), Elem<S>::load(rows[i * width + c])));
    }
  }
}

// Integer sums and products wrap in two's complement: computed unsigned, where overflow is
// defined.
struct AddCombine {
  template <typename C>
  __device__ __forceinline__ C operator()(C kept, C next) const {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(kept) + static_cast<U>(next));
    } else {
      return kept + next;
    }
  }
};

struct MultiplyCombine {
  template <typename C>
  __device__ __forceinline__ C operator()(C kept, C next) const {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(static_cast<U>(kept) * static_cast<U>(next));
    } else {
      return kept * next;
    }
  }
};

// max/min with NaN winning (NumPy's maximum/minimum).
struct ExtremeCombine {
  bool is_max;
  template <typename C>
  __device__ __forceinline__ C operator()(C kept, C next) const {
    if constexpr (std::is_floating_point_v<C>) {
      if (kept != kept) return kept;
      if (next != next) return next;
    }
    return (is_max ? next > kept : next < kept) ? next : kept;
  }
};

int64_t row_length(const TensorView& v) { return v.ndim < 2 ? 1 : v.shape[v.ndim - 1]; }

template <typename S, typename Combine>
void launch_scatter_rows(int device, const TensorView& rows, const TensorView& ids,
                         const TensorView& table, Combine combine) {
  const int64_t n = ids.numel(), width = row_length(table);
  if (n == 0 || width == 0) return;
  scatter_rows_kernel<S><<<blocks_for(width), kThreadsPerBlock, 0, device_stream(device)>>>(
      static_cast<const S*>(rows.data), static_cast<const int64_t*>(ids.data), n, width,
      static_cast<S*>(table.data), table.shape[0], combine);
  GA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void gather_rows(int device, const TensorView& table, const TensorView& ids, const TensorView& out) {
  GA_CUDA_REQUIRE(ids.dtype == DType::kInt64 && out.dtype == table.dtype,
                  "gather_rows: ids must be int64 and out of the table's dtype");
  const int64_t total = out.numel(), width = row_length(table);
  if (total == 0) return;
  dispatch_all(table.dtype, [&](auto tag) {
    using S = decltype(tag);
    gather_rows_kernel<S><<<blocks_for(total), kThreadsPerBlock, 0, device_stream(device)>>>(
        static_cast<const S*>(table.data), table.shape[0], static_cast<const int64_t*>(ids.data),
        total, width, static_cast<S*>(out.data));
  });
  GA_CUDA_CHECK(cudaGetLastError());
}

void scatter_rows(int device, const TensorView& rows, const TensorView& ids,
                  const TensorView& table, RowCombine combine) {
  GA_CUDA_REQUIRE(ids.dtype == DType::kInt64 && rows.dtype == table.dtype,
                  "scatter_rows: ids must be int64 and rows of the table's dtype");
  auto launch = [&](auto tag) {
    using S = decltype(tag);
    switch (combine) {
      case RowCombine::kAdd: return launch_scatter_rows<S>(device, rows, ids, table, AddCombine{});
      case RowCombine::kMultiply:
        return launch_scatter_rows<S>(device, rows, ids, table, MultiplyCombine{});
      case RowCombine::kMax:
      case RowCombine::kMin:
        return launch_scatter_rows<S>(device, rows, ids, table,
                                      ExtremeCombine{combine == RowCombine::kMax});
    }
  };
  if (table.dtype == DType::kInt32) return launch(int32_t{});
  if (table.dtype == DType::kInt64) return launch(int64_t{});
  dispatch_floating_or_float64(table.dtype, op_name(combine), launch);
}

}  // namespace gpuaccel::cuda
