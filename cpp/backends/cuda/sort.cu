// Sorting along the last dimension on the GPU, and the gather along it that sort's gradient
// uses. One thread sorts one row: it writes the row's keys (kernels/sort_keys.h, the CPU's
// order) and positions, merge-sorts the pairs through a scratch copy (the same
// merge_sort_pairs the CPU tests run) and gathers the values. Correct for every row length and
// dtype; fast only with many rows. A segmented radix sort (cub::DeviceSegmentedSort on the
// same keys) is the step up for few long rows.
#include <cstdint>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/ops.h"
#include "backends/cuda/strided.cuh"
#include "kernels/sort_keys.h"

namespace gpuaccel::cuda {

namespace {

constexpr int kRowsPerBlock = 128;
constexpr int64_t kWorkspaceAlignment = 256;

int64_t align_up(int64_t bytes) {
  return (bytes + kWorkspaceAlignment - 1) / kWorkspaceAlignment * kWorkspaceAlignment;
}

int64_t key_bytes(DType dtype) { return dtype == DType::kInt64 ? 8 : 4; }

int64_t last_dim(const TensorView& v) { return v.ndim == 0 ? 1 : v.shape[v.ndim - 1]; }

template <typename S>
__global__ void sort_rows_kernel(const S* x, int64_t rows, int64_t n, bool descending,
                                 typename kernels::SortKeyOf<S>::type* keys_a,
                                 typename kernels::SortKeyOf<S>::type* keys_b, int64_t* index_b,
                                 int64_t* indices, S* values) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += step) {
    const int64_t base = r * n;
    const S* row = x + base;
    int64_t* order = indices + base;
    for (int64_t j = 0; j < n; ++j) {
      keys_a[base + j] = kernels::sort_key(row[j], descending);
      order[j] = j;
    }
    if (kernels::merge_sort_pairs(keys_a + base, order, keys_b + base, index_b + base, n)) {
      for (int64_t j = 0; j < n; ++j) order[j] = index_b[base + j];
    }
    for (int64_t j = 0; j < n; ++j) values[base + j] = row[order[j]];
  }
}

template <typename S>
__global__ void take_along_last_axis_kernel(const S* x, const int64_t* indices, int64_t total,
                                            int64_t n, int64_t m, S* out) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += step) {
    out[i] = x[i / m * n + indices[i]];
  }
}

}  // namespace

// Two key arrays of x's size, then the scratch positions.
int64_t sort_workspace_bytes(int /*device*/, const TensorView& x) {
  const int64_t n = x.numel();
  return align_up(2 * n * key_bytes(x.dtype)) + n * static_cast<int64_t>(sizeof(int64_t));
}

void sort(int device, const TensorView& x, bool descending, const TensorView& values,
          const TensorView& indices, void* workspace) {
  GA_CUDA_REQUIRE(values.dtype == x.dtype && indices.dtype == DType::kInt64,
                  "sort: values must have x's dtype and indices int64");
  const int64_t total = x.numel();
  if (total == 0) return;
  GA_CUDA_REQUIRE(workspace != nullptr, "sort: no workspace");
  const int64_t n = last_dim(x);
  const int64_t rows = total / n;
  char* ws = static_cast<char*>(workspace);
  int64_t* index_b = reinterpret_cast<int64_t*>(ws + align_up(2 * total * key_bytes(x.dtype)));
  const cudaStream_t stream = device_stream(device);
  const unsigned blocks = static_cast<unsigned>(
      std::min<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, kMaxBlocks));
  dispatch_all(x.dtype, [&](auto tag) {
    using S = decltype(tag);
    using Key = typename kernels::SortKeyOf<S>::type;
    Key* keys_a = reinterpret_cast<Key*>(ws);
    sort_rows_kernel<S><<<blocks, kRowsPerBlock, 0, stream>>>(
        static_cast<const S*>(x.data), rows, n, descending, keys_a, keys_a + total, index_b,
        static_cast<int64_t*>(indices.data), static_cast<S*>(values.data));
  });
  GA_CUDA_CHECK(cudaGetLastError());
}

void take_along_last_axis(int device, const TensorView& x, const TensorView& indices,
                          const TensorView& out) {
  GA_CUDA_REQUIRE(out.dtype == x.dtype && indices.dtype == DType::kInt64,
                  "take_along_last_axis: out must have x's dtype and indices int64");
  const int64_t total = out.numel();
  if (total == 0) return;
  const cudaStream_t stream = device_stream(device);
  dispatch_all(x.dtype, [&](auto tag) {
    using S = decltype(tag);
    take_along_last_axis_kernel<S><<<blocks_for(total), kThreadsPerBlock, 0, stream>>>(
        static_cast<const S*>(x.data), static_cast<const int64_t*>(indices.data), total,
        last_dim(x), last_dim(out), static_cast<S*>(out.data));
  });
  GA_CUDA_CHECK(cudaGetLastError());
}

}  // namespace gpuaccel::cuda
