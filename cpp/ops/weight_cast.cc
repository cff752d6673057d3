// See weight_cast.h.
#include "ops/weight_cast.h"

#include <memory>
#include <string>

#include "memory/capture_arena.h"
#include "ops/autograd.h"
#include "ops/shape_ops.h"
#include "tensor/derived_copies.h"

namespace gpuaccel {

Tensor cast_weight(const Tensor& weight, DType dtype) {
  if (weight.dtype() == dtype) return weight;
  const TensorView view = weight.view();
  if (view.derived == nullptr || !view.derived->is_source(view) || !is_floating(weight.dtype()) || !is_floating(dtype) ||
      routed_capture_arena(weight.device()) != nullptr) {
    return cast(weight, dtype);
  }
  const std::string key =
      std::string("cast:") + dtype_name(dtype) + ":" + shape_to_string(weight.shape());
  const std::shared_ptr<void> held = view.derived->get_or_make(key, [&]() -> std::shared_ptr<void> {
    GradModeGuard no_grad(false);
    const Tensor copy = cast(weight, dtype);
    return std::shared_ptr<void>(copy.storage(), copy.storage().get());
  });
  // A fresh tensor over the cached memory, so this read gets its own autograd node.
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::static_pointer_cast<Storage>(held);
  impl->shape = weight.shape();
  impl->strides = contiguous_strides(weight.shape());
  impl->dtype = dtype;
  Tensor out(std::move(impl));
  const DType master_dtype = weight.dtype();
  record("Cast", {weight}, {out}, [master_dtype](const std::vector<Tensor>& g) {
    return std::vector<Tensor>{cast(g[0], master_dtype)};
  });
  return out;
}

}  // namespace gpuaccel
