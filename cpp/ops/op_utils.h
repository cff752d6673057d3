// Small helpers every op frontend uses: device and dtype checks with the op's name in the
// error, output allocation, broadcast views, the placement log, and the backend lookup.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// Op names are string_views so a frontend's `const char*` name costs no std::string per call
// (these run on every op; a 1-element add is dominated by such overheads).

// InvalidArgumentError unless every tensor is on the same logical device; returns it.
const LogicalDevice& common_device(std::string_view op, const std::vector<Tensor>& tensors);
const LogicalDevice& common_device(std::string_view op, const Tensor& a, const Tensor& b);
// InvalidArgumentError unless all share a dtype; returns it.
DType common_dtype(std::string_view op, const std::vector<Tensor>& tensors);
DType common_dtype(std::string_view op, const Tensor& a, const Tensor& b);
// InvalidArgumentError unless `t` is float32/float16/bfloat16/float64.
void check_floating(std::string_view op, const Tensor& t, const char* what = "input");
// InvalidArgumentError unless `t` is float32/float16/bfloat16: the ops whose kernels are
// oneDNN's and cuDNN's (convolution, pooling, normalization, RNNs), which have no float64.
void check_kernel_floating(std::string_view op, const Tensor& t, const char* what = "input");
// InvalidArgumentError naming `op` and the undefined argument.
void check_defined(std::string_view op, const Tensor& t, const char* what);

// Logs the op (when placement logging is on) and returns its backend.
Backend& backend_for_op(std::string_view op, const LogicalDevice& device);

// t's view as if broadcast to `shape` (leading dimensions added, stride 0 where t has 1).
TensorView broadcast_view(const Tensor& t, const Shape& shape);

}  // namespace gpuaccel
