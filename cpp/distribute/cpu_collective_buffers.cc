// CPU collectives' tensor checks and dtype groups (see cpu_collective_buffers.h).
#include "distribute/cpu_collective_buffers.h"

#include <algorithm>
#include <cstring>

#include "core/errors.h"

namespace gpuaccel::distribute {

void check_cpu_tensors(const char* op, const std::vector<Tensor>& tensors, const std::string& engine) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.is_cpu())
      throw_error(ErrorCode::kInvalidArgument, op,
                  "tensor " + std::to_string(i) + " is on " + t.device().name() + "; the " + engine +
                      " engine takes CPU tensors (NCCL takes GPU ones)");
    if (!t.is_contiguous())
      throw_error(ErrorCode::kInvalidArgument, op,
                  "tensor " + std::to_string(i) + " is not contiguous; expected contiguous tensors");
  }
}

std::vector<DtypeGroup> group_by_dtype(const std::vector<Tensor>& tensors) {
  std::vector<DtypeGroup> groups;
  for (const Tensor& t : tensors) {
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](const DtypeGroup& g) { return g.dtype == t.dtype(); });
    if (group == groups.end()) group = groups.insert(groups.end(), DtypeGroup{t.dtype(), {}, 0});
    group->tensors.push_back(&t);
    group->bytes += static_cast<size_t>(t.numel()) * dtype_size(t.dtype());
  }
  return groups;
}

void pack(const DtypeGroup& group, char* buffer) {
  for (const Tensor* t : group.tensors) {
    size_t n = static_cast<size_t>(t->numel()) * dtype_size(group.dtype);
    std::memcpy(buffer, t->data(), n);
    buffer += n;
  }
}

void unpack(const DtypeGroup& group, const char* buffer) {
  for (const Tensor* t : group.tensors) {
    size_t n = static_cast<size_t>(t->numel()) * dtype_size(group.dtype);
    std::memcpy(t->data(), buffer, n);
    buffer += n;
  }
}

}  // namespace gpuaccel::distribute
