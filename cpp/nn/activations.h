// Keras's activations by name ("relu", "softmax", None...), parsed when a layer is constructed
// (so a typo fails at Dense(..., activation='rleu'), not at the first batch) and applied in
// call() as compositions of op frontends, so their gradients come from autograd.
#pragma once

#include <string>
#include <vector>

#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel::nn {

enum class ActivationFn {
  kLinear, kRelu, kRelu6, kLeakyRelu, kSigmoid, kTanh, kGelu, kSoftmax, kLogSoftmax,
  kElu, kSelu, kSoftplus, kSoftsign, kSwish, kExponential,
};

// "" , "None", "linear" -> kLinear; "silu" is "swish". Unknown names: InvalidArgumentError
// (op `where`) listing the accepted names.
ActivationFn parse_activation(const std::string& name, const std::string& where);
// Keras's name for it ("linear", "relu", ...).
const char* activation_name(ActivationFn activation);
const std::vector<std::string>& activation_names();

// softmax/log_softmax act on the last axis; leaky_relu uses Keras's slope 0.2.
Tensor apply_activation(ActivationFn activation, const Tensor& x);

// The activations a convolution or matmul can run in its own pass (linear, relu), as the ops
// take them; false for the others, which a layer applies after its op.
bool fusable_activation(ActivationFn activation, PostActivation* fused);

}  // namespace gpuaccel::nn
