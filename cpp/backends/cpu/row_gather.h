// Row gathers on the CPU (backends/backend_ops.def: gather_rows, scatter_rows): what an
// embedding lookup and its gradient are, and the segment sums, max/min and products.
// They replace one-hot products whose cost and memory grew with ids x vocabulary (a
// 20,000-word vocabulary at 12,800 ids asked for 1 GB).
#pragma once

#include "backends/op_kinds.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// out[i, :] = table[ids[i], :]: one row copy per id, rows split across threads.
void gather_rows(const TensorView& table, const TensorView& ids, const TensorView& out);

// table[ids[i], :] = combine(table[ids[i], :], rows[i, :]) in order of i (backend_ops.def says
// what each combine means). Threads split the columns, never the ids, so every element is
// combined in the same order whatever the thread count (no races, no atomics).
void scatter_rows(const TensorView& rows, const TensorView& ids, const TensorView& table,
                  RowCombine combine);

}  // namespace gpuaccel::cpu
