// Frontend of ops/finite_check.h: validates the flag and the tensors' devices, makes strided
// tensors contiguous, and hands the backend one list.
#include "ops/finite_check.h"

#include <string>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

namespace {
constexpr const char* kOp = "any_nonfinite";
}  // namespace

void any_nonfinite_into(const std::vector<Tensor>& tensors, const Tensor& flag) {
  check_defined(kOp, flag, "flag");
  if (flag.dtype() != DType::kFloat32 || flag.numel() != 1 || !flag.is_contiguous()) {
    throw_error(ErrorCode::kInvalidArgument, kOp,
                std::string("the flag must be a float32 tensor of one element, got ") +
                    dtype_name(flag.dtype()) + " of shape " + shape_to_string(flag.shape()));
  }
  GradModeGuard no_grad(false);
  std::vector<Tensor> kept;  // contiguous copies live until the backend has queued its work
  std::vector<TensorView> views;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (!t.defined() || !is_floating(t.dtype())) continue;
    if (t.device().type != flag.device().type || t.device().index != flag.device().index) {
      throw_error(ErrorCode::kInvalidArgument, kOp,
                  "tensor " + std::to_string(i) + " is on " + t.device().full_name() +
                      " but the flag is on " + flag.device().full_name() +
                      ": every tensor must be on the flag's device");
    }
    if (t.numel() == 0) continue;
    kept.push_back(t.is_contiguous() ? t : contiguous(t));
    views.push_back(kept.back().view());
  }
  backend_for_op(kOp, flag.device()).any_nonfinite(views, flag.view());
}

Tensor any_nonfinite(const std::vector<Tensor>& tensors, const LogicalDevice& device) {
  Tensor flag = Tensor::empty({}, DType::kFloat32, device, kOp);
  any_nonfinite_into(tensors, flag);
  return flag;
}

}  // namespace gpuaccel
