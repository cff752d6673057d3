// The CUDA launches' host-side plans on the CPU: the element-wise indexing plan
// (backends/cuda/launch_geometry.h: which views fold to a flat launch with no divide per element,
// when int32 index math is safe, and that offsets in either width are the views' own) and how a
// reduction splits its outputs over blocks (backends/cuda/reduce_split.h).
#include "backends/cuda/launch_geometry.h"
#include "backends/cuda/reduce_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace gpuaccel::cuda {
namespace {

TensorView view(std::initializer_list<int64_t> shape, std::initializer_list<int64_t> strides) {
  TensorView v;
  for (int64_t s : shape) v.shape[v.ndim++] = s;
  int d = 0;
  for (int64_t s : strides) v.strides[d++] = s;
  return v;
}

TensorView contiguous(std::initializer_list<int64_t> shape) {
  TensorView v;
  for (int64_t s : shape) v.shape[v.ndim++] = s;
  int64_t stride = 1;
  for (int d = v.ndim - 1; d >= 0; --d) {
    v.strides[d] = stride;
    stride *= v.shape[d];
  }
  return v;
}

template <int K>
Geometry<K> fold(const TensorView* const (&views)[K]) {
  Geometry<K> g;
  EXPECT_EQ(fold_geometry(views, &g), "");
  return g;
}

constexpr int64_t kThreads = int64_t{1} << 22;

TEST(CudaLaunchGeometry, ContiguousOperandsOfOneShapeAreFlat) {
  const TensorView out = contiguous({4, 5, 6}), a = contiguous({4, 5, 6}), b = contiguous({4, 5, 6});
  const TensorView* views[3] = {&out, &a, &b};
  const Geometry<3> g = fold(views);
  EXPECT_EQ(g.ndim, 1);
  EXPECT_EQ(g.shape[0], 120);
  EXPECT_EQ(index_mode(g, 120, kThreads), IndexMode::kFlat);
  // Size-1 dimensions with odd strides do not break contiguity; a scalar is flat too.
  const TensorView odd = view({4, 1, 30}, {30, 7, 1}), c = contiguous({4, 1, 30});
  const TensorView* odd_views[2] = {&c, &odd};
  EXPECT_EQ(index_mode(fold(odd_views), 120, kThreads), IndexMode::kFlat);
  const TensorView s0 = contiguous({}), s1 = contiguous({});
  const TensorView* scalar_views[2] = {&s0, &s1};
  EXPECT_EQ(index_mode(fold(scalar_views), 1, kThreads), IndexMode::kFlat);
}

TEST(CudaLaunchGeometry, BroadcastAndTransposedOperandsAreStrided) {
  const TensorView out = contiguous({4, 5}), a = contiguous({4, 5});
  const TensorView bias = view({4, 5}, {0, 1});       // a row broadcast over 4 rows
  const TensorView transposed = view({4, 5}, {1, 4});  // a (5, 4) matrix read transposed
  for (const TensorView* other : {&bias, &transposed}) {
    const TensorView* views[3] = {&out, &a, other};
    EXPECT_EQ(index_mode(fold(views), 20, kThreads), IndexMode::kStrided32);
  }
}

TEST(CudaLaunchGeometry, Int32OnlyWhereEveryIndexAndOffsetFits) {
  const TensorView out = contiguous({2, 3});
  // Offsets beyond int32 in one operand (a huge stride) force 64-bit math.
  const TensorView far = view({2, 3}, {int64_t{1} << 31, 1});
  const TensorView* views[2] = {&out, &far};
  EXPECT_EQ(index_mode(fold(views), 6, kThreads), IndexMode::kStrided64);
  const TensorView near = view({2, 3}, {(int64_t{1} << 30), 1});
  const TensorView* near_views[2] = {&out, &near};
  EXPECT_EQ(index_mode(fold(near_views), 6, kThreads), IndexMode::kStrided32);
  // An element count whose grid-stride overshoot would pass INT32_MAX.
  const TensorView big_out = contiguous({2, 1100000000}), big_in = view({2, 1100000000}, {1, 2});
  const TensorView* big_views[2] = {&big_out, &big_in};
  EXPECT_EQ(index_mode(fold(big_views), 2200000000, kThreads), IndexMode::kStrided64);
  // Negative strides count by magnitude.
  const TensorView flipped = view({2, 3}, {-3, -1});
  const TensorView* flipped_views[2] = {&out, &flipped};
  EXPECT_EQ(index_mode(fold(flipped_views), 6, kThreads), IndexMode::kStrided32);
}

TEST(CudaLaunchGeometry, OffsetsInBothWidthsMatchTheViews) {
  // out contiguous (3, 4, 5); x is a (5, 3, 4) tensor permuted to (3, 4, 5); y broadcasts a (4, 1).
  const TensorView out = contiguous({3, 4, 5});
  const TensorView x = view({3, 4, 5}, {4, 1, 12});
  const TensorView y = view({3, 4, 5}, {0, 1, 0});
  const TensorView* views[3] = {&out, &x, &y};
  const Geometry<3> g = fold(views);
  for (int64_t i = 0; i < 60; ++i) {
    const int64_t d0 = i / 20, d1 = (i / 5) % 4, d2 = i % 5;
    int64_t off64[3];
    g.offsets(i, off64);
    int32_t off32[3];
    g.offsets(static_cast<int32_t>(i), off32);
    const std::vector<int64_t> expect = {i, d0 * 4 + d1 * 1 + d2 * 12, d1};
    for (int k = 0; k < 3; ++k) {
      EXPECT_EQ(off64[k], expect[k]) << i << " operand " << k;
      EXPECT_EQ(off32[k], expect[k]) << i << " operand " << k;
    }
  }
}

// A reduction's geometries as reduce.cu builds them (dimension by dimension) merge the same way:
// a contiguous (8, 4, 4, 16) tensor summed over every axis is one dimension of 2048.
TEST(CudaLaunchGeometry, MergedDimensionsKeepEveryOffset) {
  Geometry<1> red;
  const int64_t shape[4] = {8, 4, 4, 16}, strides[4] = {256, 64, 16, 1};
  for (int d = 0; d < 4; ++d) {
    red.shape[red.ndim] = shape[d];
    red.strides[0][red.ndim++] = strides[d];
  }
  Geometry<1> merged = red;
  merge_dimensions(&merged);
  EXPECT_EQ(merged.ndim, 1);
  EXPECT_EQ(merged.shape[0], 2048);
  // Summing axes 0 and 2 only (strides 256 and 16) merges nothing; a size-1 axis is dropped.
  Geometry<1> partial;
  partial.ndim = 3;
  partial.shape[0] = 8, partial.shape[1] = 1, partial.shape[2] = 4;
  partial.strides[0][0] = 256, partial.strides[0][1] = 64, partial.strides[0][2] = 16;
  Geometry<1> partial_merged = partial;
  merge_dimensions(&partial_merged);
  EXPECT_EQ(partial_merged.ndim, 2);
  for (const Geometry<1>* g : {&red, &partial}) {
    Geometry<1> m = *g;
    merge_dimensions(&m);
    int64_t n = 1;
    for (int d = 0; d < g->ndim; ++d) n *= g->shape[d];
    for (int64_t i = 0; i < n; ++i) {
      int64_t before[1], after[1];
      g->offsets(i, before);
      m.offsets(i, after);
      ASSERT_EQ(before[0], after[0]) << i;
    }
  }
}

TEST(CudaLaunchGeometry, MismatchedViewsAreRefused) {
  const TensorView out = contiguous({2, 3}), other = contiguous({3, 2}), flat = contiguous({6});
  Geometry<2> g;
  const TensorView* shapes[2] = {&out, &other};
  EXPECT_EQ(fold_geometry(shapes, &g), "element-wise operands of different shapes");
  const TensorView* ranks[2] = {&out, &flat};
  EXPECT_EQ(fold_geometry(ranks, &g), "element-wise operands of different ranks");
}

// One output over many elements splits (a 3M-element sum: 733 blocks of 4096 elements; 16M
// elements: the 1024-block target); many
// outputs or few elements each keep one block per output; every split leaves each block at
// least kReduceMinElementsPerBlock elements.
TEST(CudaReduceSplit, FewOutputsOverManyElementsSplit) {
  EXPECT_EQ(reduce_splits(1, 3000007), 733);
  EXPECT_EQ(reduce_splits(1, int64_t{1} << 24), kReduceTargetBlocks);
  EXPECT_EQ(reduce_splits(3, 100000), 25);    // 100000 / 4096, rounded up
  EXPECT_EQ(reduce_splits(64, 65536), 16);    // a bias gradient at batch 64 x 32 x 32: 1024 / 64
  EXPECT_EQ(reduce_splits(2048, 1 << 20), 1);  // enough outputs to fill the GPU
  EXPECT_EQ(reduce_splits(1, 4096), 1);         // one block's worth
  EXPECT_EQ(reduce_splits(1, 4097), 2);
  EXPECT_EQ(reduce_splits(1, 0), 1);
  EXPECT_EQ(reduce_splits(0, 100), 1);
  for (int64_t n_out : {1, 3, 64, 500}) {
    for (int64_t n_red : {int64_t{5000}, int64_t{1} << 16, int64_t{1} << 24}) {
      const int64_t splits = reduce_splits(n_out, n_red);
      EXPECT_GE(n_red / splits, kReduceMinElementsPerBlock / 2) << n_out << " " << n_red;
      EXPECT_LE(n_out * splits, std::max<int64_t>(n_out, kReduceTargetBlocks)) << n_out << " " << n_red;
    }
  }
}

}  // namespace
}  // namespace gpuaccel::cuda
