// Shared checks and helpers of the op frontends (see op_utils.h).
#include "ops/op_utils.h"

#include "core/errors.h"

namespace gpuaccel {

const LogicalDevice& common_device(const std::string& op, const std::vector<Tensor>& tensors) {
  const LogicalDevice& first = tensors.at(0).device();
  for (const Tensor& t : tensors) {
    const LogicalDevice& d = t.device();
    if (d.type != first.type || d.index != first.index) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  "expected all tensors on the same device, got " + first.full_name() + " and " +
                      d.full_name() + "; move one with .to(device)");
    }
  }
  return first;
}

DType common_dtype(const std::string& op, const std::vector<Tensor>& tensors) {
  const DType first = tensors.at(0).dtype();
  for (const Tensor& t : tensors) {
    if (t.dtype() != first) {
      throw_error(ErrorCode::kInvalidArgument, op,
                  std::string("expected tensors of one dtype, got ") + dtype_name(first) + " and " +
                      dtype_name(t.dtype()) + "; convert one with .to(" + dtype_name(first) + ")");
    }
  }
  return first;
}

void check_floating(const std::string& op, const Tensor& t, const char* what) {
  if (!is_floating(t.dtype())) {
    throw_error(ErrorCode::kInvalidArgument, op,
                std::string(what) + " must be float32, float16 or bfloat16, got " +
                    dtype_name(t.dtype()));
  }
}

void check_defined(const std::string& op, const Tensor& t, const char* what) {
  if (!t.defined()) throw_error(ErrorCode::kInvalidArgument, op, std::string(what) + " is missing");
}

Backend& backend_for_op(const std::string& op, const LogicalDevice& device) {
  DeviceRegistry::instance().log_execution(op, device);
  return backend_for(device);
}

TensorView broadcast_view(const Tensor& t, const Shape& shape) {
  TensorView v = t.view();
  const int lead = static_cast<int>(shape.size()) - t.ndim();
  TensorView out;
  out.data = v.data;
  out.dtype = v.dtype;
  out.ndim = static_cast<int>(shape.size());
  for (int d = 0; d < out.ndim; ++d) {
    out.shape[d] = shape[d];
    const int src = d - lead;
    out.strides[d] = (src < 0 || t.shape()[src] == 1) ? 0 : t.strides()[src];
  }
  return out;
}

}  // namespace gpuaccel
