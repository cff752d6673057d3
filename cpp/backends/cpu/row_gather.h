// Row gathers on the CPU (backends/backend_ops.def: gather_rows, scatter_add_rows,
// scatter_extreme_rows): what an embedding lookup and its gradient are, and a segment max/min.
// They replace one-hot products whose cost and memory grew with ids x vocabulary (a
// 20,000-word vocabulary at 12,800 ids asked for 1 GB).
#pragma once

#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// out[i, :] = table[ids[i], :]: one row copy per id, rows split across threads.
void gather_rows(const TensorView& table, const TensorView& ids, const TensorView& out);

// table[ids[i], :] += rows[i, :] in order of i. Threads split the columns, never the ids, so
// every element is summed in the same order whatever the thread count (no races, no atomics).
void scatter_add_rows(const TensorView& rows, const TensorView& ids, const TensorView& table);

// table[ids[i], :] = max (is_max) or min of itself and rows[i, :], NaN winning; split as above.
void scatter_extreme_rows(const TensorView& rows, const TensorView& ids, const TensorView& table,
                          bool is_max);

}  // namespace gpuaccel::cpu
