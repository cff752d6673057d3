// Backward of fused activations (see post_activation.h).
#include "ops/post_activation.h"

#include "core/errors.h"
#include "ops/op_utils.h"
#include "ops/shape_ops.h"

namespace gpuaccel {

Tensor post_activation_backward(PostActivation activation, const Tensor& y, const Tensor& g) {
  const Tensor gc = contiguous(g);
  if (activation == PostActivation::kNone) return gc;
  const Tensor yc = contiguous(y);
  Tensor dz = Tensor::empty(yc.shape(), yc.dtype(), yc.device(), "ReluGrad");
  // The relu kernels' backward reads the sign of their first operand; y's sign is the input's.
  if (dz.numel() > 0) {
    backend_for(yc.device()).unary_backward(UnaryOp::kRelu, yc.view(), yc.view(), gc.view(), dz.view());
  }
  return dz;
}

PostActivation parse_post_activation(const std::string& text, const std::string& op) {
  if (text.empty() || text == "linear" || text == "none" || text == "None") return PostActivation::kNone;
  if (text == "relu") return PostActivation::kRelu;
  throw_error(ErrorCode::kValue, op,
              "activation must be 'linear' or 'relu' (the ones fused into the op), got '" + text + "'");
}

}  // namespace gpuaccel
