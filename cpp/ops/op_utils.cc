// Shared checks and helpers of the op frontends (see op_utils.h).
#include "ops/op_utils.h"

#include "core/errors.h"

namespace gpuaccel {

namespace {

void check_same_device(std::string_view op, const Tensor& first, const Tensor& t) {
  const LogicalDevice& a = first.device();
  const LogicalDevice& b = t.device();
  if (a.type != b.type || a.index != b.index) {
    throw_error(ErrorCode::kInvalidArgument, std::string(op),
                "expected all tensors on the same device, got " + a.full_name() + " and " +
                    b.full_name() + "; move one with .to(device)");
  }
}

void check_same_dtype(std::string_view op, const Tensor& first, const Tensor& t) {
  const DType a = first.dtype();
  if (t.dtype() != a) {
    throw_error(ErrorCode::kInvalidArgument, std::string(op),
                std::string("expected tensors of one dtype, got ") + dtype_name(a) + " and " +
                    dtype_name(t.dtype()) + "; convert one with .to(" + dtype_name(a) + ")");
  }
}

}  // namespace

const LogicalDevice& common_device(std::string_view op, const std::vector<Tensor>& tensors) {
  const Tensor& first = tensors.at(0);
  for (const Tensor& t : tensors) check_same_device(op, first, t);
  return first.device();
}

const LogicalDevice& common_device(std::string_view op, const Tensor& a, const Tensor& b) {
  check_same_device(op, a, b);
  return a.device();
}

DType common_dtype(std::string_view op, const std::vector<Tensor>& tensors) {
  const Tensor& first = tensors.at(0);
  for (const Tensor& t : tensors) check_same_dtype(op, first, t);
  return first.dtype();
}

DType common_dtype(std::string_view op, const Tensor& a, const Tensor& b) {
  check_same_dtype(op, a, b);
  return a.dtype();
}

void check_floating(std::string_view op, const Tensor& t, const char* what) {
  if (!is_floating(t.dtype())) {
    throw_error(ErrorCode::kInvalidArgument, std::string(op),
                std::string(what) + " must be float32, float16, bfloat16 or float64, got " +
                    dtype_name(t.dtype()));
  }
}

void check_kernel_floating(std::string_view op, const Tensor& t, const char* what) {
  if (t.dtype() == DType::kFloat64) {
    throw_error(ErrorCode::kInvalidArgument, std::string(op),
                std::string(what) + " is float64, which " + std::string(op) +
                    " does not support (oneDNN and cuDNN have no float64 kernel for it): cast "
                    "it to float32 first (x.float() / tf.cast(x, tf.float32))");
  }
  if (!is_floating(t.dtype())) {
    throw_error(ErrorCode::kInvalidArgument, std::string(op),
                std::string(what) + " must be float32, float16 or bfloat16, got " +
                    dtype_name(t.dtype()));
  }
}

void check_defined(std::string_view op, const Tensor& t, const char* what) {
  if (!t.defined()) {
    throw_error(ErrorCode::kInvalidArgument, std::string(op), std::string(what) + " is missing");
  }
}

Backend& backend_for_op(std::string_view op, const LogicalDevice& device) {
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
