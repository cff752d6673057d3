// Sorting along the last dimension and the gather along it that sort's gradient uses, on the
// CPU (backends/backend_ops.def: sort, take_along_last_axis). The order is kernels/sort_keys.h's,
// shared with the CUDA kernel.
#pragma once

#include <cstdint>

#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// The CPU sorts in place of its outputs: no workspace.
inline int64_t sort_workspace_bytes(const TensorView& /*x*/) { return 0; }

// Each row of x (contiguous) stably: values and int64 indices, contiguous of x's shape.
void sort(const TensorView& x, bool descending, const TensorView& values,
          const TensorView& indices, void* workspace);

// out[r, j] = x[r, indices[r, j]] (contiguous views; indices int64 in [0, n)).
void take_along_last_axis(const TensorView& x, const TensorView& indices, const TensorView& out);

}  // namespace gpuaccel::cpu
