// Column sums of a (rows, C) view for the backend's normalization kernels (batch_norm.cu's
// statistics and gradients, layer_norm.cu's dgamma/dbeta): each of two per-element terms summed
// over the rows of every column, in fixed chunks of rows whose partial sums are then added in
// chunk order (no atomics), so results are deterministic. 32 columns per block, so a warp reads
// 32 neighbouring values of a row. A term is a functor `float2 operator()(row, column, columns)`
// giving the element's two terms.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "backends/cuda/context.h"
#include "backends/cuda/strided.cuh"

namespace gpuaccel::cuda {
namespace {  // each .cu file its own copy of the kernels

constexpr int kColumns = 32;
constexpr int kRowsInFlight = 8;
constexpr int64_t kMinChunkRows = 64;
constexpr int64_t kMaxChunks = 1024;

// Partial column sums of `term` over chunk blockIdx.y's rows, for 32 channels per block, into
// part0/part1 + chunk * channels.
template <typename Term>
__global__ void column_sums_kernel(Term term, int64_t rows, int64_t channels, int64_t rows_per_chunk, float* part0,
                                   float* part1) {
  __shared__ float s0[kRowsInFlight][kColumns + 1];
  __shared__ float s1[kRowsInFlight][kColumns + 1];
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kColumns + threadIdx.x;
  const int64_t r0 = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t r1 = min(rows, r0 + rows_per_chunk);
  float a = 0.0f, b = 0.0f;
  if (c < channels) {
    for (int64_t r = r0 + threadIdx.y; r < r1; r += kRowsInFlight) {
      const float2 t = term(r, c, channels);
      a += t.x;
      b += t.y;
    }
  }
  s0[threadIdx.y][threadIdx.x] = a;
  s1[threadIdx.y][threadIdx.x] = b;
  __syncthreads();
  if (threadIdx.y == 0 && c < channels) {
    for (int k = 1; k < kRowsInFlight; ++k) {
      a += s0[k][threadIdx.x];
      b += s1[k][threadIdx.x];
    }
    part0[static_cast<int64_t>(blockIdx.y) * channels + c] = a;
    part1[static_cast<int64_t>(blockIdx.y) * channels + c] = b;
  }
}

// out = (sum of the chunks' partial sums, in chunk order) / divisor, per channel.
__global__ void sum_chunks_kernel(const float* part0, const float* part1, int64_t chunks, int64_t channels,
                                  float divisor, float* out0, float* out1) {
  const int64_t step = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < channels; c += step) {
    float a = 0.0f, b = 0.0f;
    for (int64_t k = 0; k < chunks; ++k) {
      a += part0[k * channels + c];
      b += part1[k * channels + c];
    }
    if (out0 != nullptr) out0[c] = a / divisor;
    if (out1 != nullptr) out1[c] = b / divisor;
  }
}

// Column sums of a (rows, channels) view in fixed chunks: `sums(term, divisor, out0, out1)`
// queues the two launches, with the partial sums in a buffer of this object.
class ColumnSums {
 public:
  ColumnSums(int device, int64_t rows, int64_t channels)
      : rows_(rows),
        channels_(channels),
        chunks_(std::max<int64_t>(1, std::min(kMaxChunks, (rows + kMinChunkRows - 1) / kMinChunkRows))),
        rows_per_chunk_((rows + chunks_ - 1) / chunks_),
        partial_(device, 2 * static_cast<size_t>(chunks_ * channels) * sizeof(float)),
        stream_(device_stream(device)) {
    GA_CUDA_REQUIRE((channels + kColumns - 1) / kColumns <= 0x7fffffff, "column sums: too many columns");
  }

  template <typename Term>
  void operator()(const Term& term, float divisor, float* out0, float* out1) {
    float* part0 = static_cast<float*>(partial_.get());
    float* part1 = part0 + chunks_ * channels_;
    const dim3 grid(static_cast<unsigned>((channels_ + kColumns - 1) / kColumns), static_cast<unsigned>(chunks_));
    column_sums_kernel<Term><<<grid, dim3(kColumns, kRowsInFlight), 0, stream_>>>(term, rows_, channels_,
                                                                                  rows_per_chunk_, part0, part1);
    GA_CUDA_CHECK(cudaGetLastError());
    sum_chunks_kernel<<<blocks_for(channels_), kThreadsPerBlock, 0, stream_>>>(part0, part1, chunks_, channels_,
                                                                               divisor, out0, out1);
    GA_CUDA_CHECK(cudaGetLastError());
  }

 private:
  int64_t rows_, channels_, chunks_, rows_per_chunk_;
  ScratchBuffer partial_;
  cudaStream_t stream_;
};

}  // namespace
}  // namespace gpuaccel::cuda
