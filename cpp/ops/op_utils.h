// Small helpers every op frontend uses: device and dtype checks with the op's name in the
// error, output allocation, broadcast views, the placement log, and the backend lookup.
#pragma once

#include <string>
#include <vector>

#include "backends/backend.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// InvalidArgumentError unless every tensor is on the same logical device; returns it.
const LogicalDevice& common_device(const std::string& op, const std::vector<Tensor>& tensors);
// InvalidArgumentError unless all share a dtype; returns it.
DType common_dtype(const std::string& op, const std::vector<Tensor>& tensors);
// InvalidArgumentError unless `t` is float32/float16/bfloat16.
void check_floating(const std::string& op, const Tensor& t, const char* what = "input");
// InvalidArgumentError naming `op` and the undefined argument.
void check_defined(const std::string& op, const Tensor& t, const char* what);

// Logs the op (when placement logging is on) and returns its backend.
Backend& backend_for_op(const std::string& op, const LogicalDevice& device);

// t's view as if broadcast to `shape` (leading dimensions added, stride 0 where t has 1).
TensorView broadcast_view(const Tensor& t, const Shape& shape);

}  // namespace gpuaccel
