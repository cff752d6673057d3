// How an element-wise launch indexes its operands, decided on the host apart from CUDA so the
// CPU tests check it (tests/cpp/cuda_launch_geometry_test.cc). The views of one launch are
// folded into the fewest dimensions that index them all (a contiguous launch becomes 1-d), and
// then one of three index modes is picked:
//   kFlat      every operand is contiguous over the same shape: element i is at offset i in each,
//              no division at all;
//   kStrided32 offsets need a divide and modulo per dimension, but every index and offset fits
//              in int32, whose divide is several times cheaper than int64's on a GPU;
//   kStrided64 the general case.
// Geometry::offsets() is the per-element arithmetic of the strided modes, for host and device.
#pragma once

#include <cstdint>
#include <limits>
#include <string>

#include "kernels/host_device.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cuda {

// The shape of the iteration and each operand's element strides over it.
template <int kOperands>
struct Geometry {
  int ndim = 0;
  int64_t shape[kMaxDims] = {0};
  int64_t strides[kOperands][kMaxDims] = {{0}};

  // Element offsets of linear index `i` (row-major over `shape`), computed in `Index`'s width
  // (the caller picked it with index_mode()).
  template <typename Index>
  GA_HOST_DEVICE GA_INLINE void offsets(Index i, Index (&off)[kOperands]) const {
    // Loops over kOperands (a template constant) are unrolled by nvcc without a pragma, which
    // the host compiler would warn about.
    for (int k = 0; k < kOperands; ++k) off[k] = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      const Index extent = static_cast<Index>(shape[d]);
      const Index idx = i % extent;
      i /= extent;
      for (int k = 0; k < kOperands; ++k) off[k] += idx * static_cast<Index>(strides[k][d]);
    }
  }
};

// Drops g's size-1 dimensions and merges neighbours that are contiguous in every operand (the
// outer one's stride is the inner one's times its extent), keeping the row-major order: fewer
// dimensions, fewer divisions per element, the same offsets.
template <int kOperands>
void merge_dimensions(Geometry<kOperands>* g) {
  Geometry<kOperands> merged;
  for (int d = 0; d < g->ndim; ++d) {
    if (g->shape[d] == 1) continue;
    const int n = merged.ndim;
    bool merge = n > 0;
    for (int k = 0; k < kOperands && merge; ++k) {
      merge = merged.strides[k][n - 1] == g->strides[k][d] * g->shape[d];
    }
    if (merge) {
      merged.shape[n - 1] *= g->shape[d];
      for (int k = 0; k < kOperands; ++k) merged.strides[k][n - 1] = g->strides[k][d];
    } else {
      merged.shape[n] = g->shape[d];
      for (int k = 0; k < kOperands; ++k) merged.strides[k][n] = g->strides[k][d];
      merged.ndim = n + 1;
    }
  }
  *g = merged;
}

// Folds `views` (all of views[0]'s shape) into a geometry (merge_dimensions). Returns an empty
// string, or what is wrong with the views (the caller raises it).
template <int kOperands>
std::string fold_geometry(const TensorView* const (&views)[kOperands], Geometry<kOperands>* g) {
  const TensorView& out = *views[0];
  if (out.ndim < 0 || out.ndim > kMaxDims) return "view with ndim " + std::to_string(out.ndim);
  for (int k = 1; k < kOperands; ++k) {
    if (views[k]->ndim != out.ndim) return "element-wise operands of different ranks";
    for (int d = 0; d < out.ndim; ++d) {
      if (views[k]->shape[d] != out.shape[d]) return "element-wise operands of different shapes";
    }
  }
  *g = Geometry<kOperands>{};
  g->ndim = out.ndim;
  for (int d = 0; d < out.ndim; ++d) {
    g->shape[d] = out.shape[d];
    for (int k = 0; k < kOperands; ++k) g->strides[k][d] = views[k]->strides[d];
  }
  merge_dimensions(g);
  return "";
}

enum class IndexMode { kFlat, kStrided32, kStrided64 };

// The cheapest index mode that addresses `g`'s `n` elements correctly. `max_threads` is the most
// threads a launch has: a grid-stride loop's index reaches n - 1 + max_threads before it stops,
// and that must not overflow the index type either.
template <int kOperands>
IndexMode index_mode(const Geometry<kOperands>& g, int64_t n, int64_t max_threads) {
  bool flat = g.ndim == 0;  // one element (or none): offset 0 everywhere
  if (g.ndim == 1) {
    flat = true;
    for (int k = 0; k < kOperands; ++k) flat = flat && g.strides[k][0] == 1;
  }
  if (flat) return IndexMode::kFlat;
  constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
  if (n > kInt32Max - max_threads) return IndexMode::kStrided64;
  for (int k = 0; k < kOperands; ++k) {
    // The largest offset magnitude this operand reaches (negative strides included).
    int64_t reach = 0;
    for (int d = 0; d < g.ndim; ++d) {
      const int64_t stride = g.strides[k][d] < 0 ? -g.strides[k][d] : g.strides[k][d];
      if (stride > kInt32Max || g.shape[d] - 1 > kInt32Max / (stride == 0 ? 1 : stride)) {
        return IndexMode::kStrided64;
      }
      reach += (g.shape[d] - 1) * stride;
      if (reach > kInt32Max) return IndexMode::kStrided64;
    }
  }
  return IndexMode::kStrided32;
}

}  // namespace gpuaccel::cuda
