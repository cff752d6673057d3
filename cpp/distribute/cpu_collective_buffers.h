// What the CPU engines (Gloo, MPI) share around their library calls: the checks of the tensors
// handed to a collective, and the grouping of an all-reduce's tensors by dtype, each group
// packed into one buffer so that one library call sums it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "tensor/tensor.h"

namespace gpuaccel::distribute {

// Throws InvalidArgument naming the tensor when one is not a contiguous CPU tensor; `engine`
// names the engine in the message.
void check_cpu_tensors(const char* op, const std::vector<Tensor>& tensors, const std::string& engine);

struct DtypeGroup {
  DType dtype;
  std::vector<const Tensor*> tensors;
  size_t bytes = 0;
};

// The tensors' groups, one per dtype, in the order dtypes first appear (the same on every rank,
// since every rank passes the same shapes and dtypes in the same order).
std::vector<DtypeGroup> group_by_dtype(const std::vector<Tensor>& tensors);

// Copies the group's tensors, in order, into `buffer` (group.bytes long), and back.
void pack(const DtypeGroup& group, char* buffer);
void unpack(const DtypeGroup& group, const char* buffer);

}  // namespace gpuaccel::distribute
