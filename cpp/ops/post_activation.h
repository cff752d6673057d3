// The backward of an activation fused into the op that produced it (conv2d and linear with a
// PostActivation): those ops keep only their activated output, so the gradient is computed from
// it. For relu the mask of the output equals the mask of the input (relu(z) > 0 iff z > 0).
#pragma once

#include <string>

#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel {

// The gradient with respect to the pre-activation value, contiguous, from the activated output
// `y` and the gradient `g` of y (same shape and dtype): g for kNone (y may then be undefined),
// g * (y > 0) for kRelu.
Tensor post_activation_backward(PostActivation activation, const Tensor& y, const Tensor& g);

// "linear" (or "", "none") -> kNone, "relu" -> kRelu; anything else a ValueError naming `op`.
PostActivation parse_post_activation(const std::string& text, const std::string& op);

}  // namespace gpuaccel
