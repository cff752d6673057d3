// How many blocks share one output of a GPU reduction (cuda/reduce.cu), apart from CUDA so the
// CPU tests check it (tests/cpp/cuda_launch_geometry_test.cc). A reduction with few outputs over
// many elements (a whole tensor's sum, a bias gradient's column sums) would leave the GPU idle
// with one block per output, so each output's elements are split into chunks reduced by
// separate blocks, and a second launch combines each output's partials in a fixed order.
#pragma once

#include <algorithm>
#include <cstdint>

namespace gpuaccel::cuda {

// A block takes at least this many elements: below it a second launch costs more than it saves.
constexpr int64_t kReduceMinElementsPerBlock = 256 * 16;
// The first pass aims for about this many blocks in all (several per SM on the largest GPUs).
constexpr int64_t kReduceTargetBlocks = 1024;

// Blocks per output for `n_out` outputs of `n_red` elements each (1: a single pass).
inline int64_t reduce_splits(int64_t n_out, int64_t n_red) {
  if (n_out <= 0 || n_red <= 0) return 1;
  const int64_t by_size = (n_red + kReduceMinElementsPerBlock - 1) / kReduceMinElementsPerBlock;
  const int64_t by_grid = std::max<int64_t>(1, kReduceTargetBlocks / n_out);
  return std::max<int64_t>(1, std::min(by_size, by_grid));
}

}  // namespace gpuaccel::cuda
