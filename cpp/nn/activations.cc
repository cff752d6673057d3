// Keras's activations (see activations.h) written with the element-wise ops; the piecewise
// ones (elu, selu, leaky_relu) use relu/minimum so no select op is needed.
#include "nn/activations.h"

#include "core/errors.h"
#include "ops/elementwise.h"
#include "ops/nn.h"

namespace gpuaccel::nn {

namespace {

struct Entry {
  const char* name;
  ActivationFn activation;
};
constexpr Entry kEntries[] = {
    {"linear", ActivationFn::kLinear},       {"relu", ActivationFn::kRelu},
    {"relu6", ActivationFn::kRelu6},         {"leaky_relu", ActivationFn::kLeakyRelu},
    {"sigmoid", ActivationFn::kSigmoid},     {"tanh", ActivationFn::kTanh},
    {"gelu", ActivationFn::kGelu},           {"softmax", ActivationFn::kSoftmax},
    {"log_softmax", ActivationFn::kLogSoftmax}, {"elu", ActivationFn::kElu},
    {"selu", ActivationFn::kSelu},           {"softplus", ActivationFn::kSoftplus},
    {"softsign", ActivationFn::kSoftsign},   {"swish", ActivationFn::kSwish},
    {"silu", ActivationFn::kSwish},          {"exponential", ActivationFn::kExponential},
};

// SELU's constants (Klambauer et al.), as Keras uses them.
constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
constexpr double kSeluScale = 1.0507009873554804934193349852946;
constexpr double kLeakyReluSlope = 0.2;

Tensor c(double value, const Tensor& like) { return scalar_like(value, like); }

// exp(min(x, 0)) - 1: the negative branch of elu, 0 for x >= 0.
Tensor elu_negative_part(const Tensor& x) {
  return sub(unary(UnaryOp::kExp, binary(BinaryOp::kMinimum, x, c(0.0, x))), c(1.0, x));
}

}  // namespace

const std::vector<std::string>& activation_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const Entry& e : kEntries) names.push_back(e.name);
    return names;
  }();
  return kNames;
}

ActivationFn parse_activation(const std::string& name, const std::string& where) {
  if (name.empty() || name == "None") return ActivationFn::kLinear;
  for (const Entry& e : kEntries) {
    if (name == e.name) return e.activation;
  }
  std::string list;
  for (const Entry& e : kEntries) list += (list.empty() ? "'" : ", '") + std::string(e.name) + "'";
  throw_error(ErrorCode::kInvalidArgument, where,
              "Could not interpret activation function identifier: '" + name +
                  "'. Accepted names: None, " + list);
}

const char* activation_name(ActivationFn activation) {
  for (const Entry& e : kEntries) {
    if (e.activation == activation) return e.name;
  }
  return "linear";
}

Tensor apply_activation(ActivationFn activation, const Tensor& x) {
  switch (activation) {
    case ActivationFn::kLinear: return x;
    case ActivationFn::kRelu: return unary(UnaryOp::kRelu, x);
    case ActivationFn::kRelu6: return binary(BinaryOp::kMinimum, unary(UnaryOp::kRelu, x), c(6.0, x));
    case ActivationFn::kLeakyRelu:
      // relu(x) + slope * min(x, 0)
      return add(unary(UnaryOp::kRelu, x), mul(binary(BinaryOp::kMinimum, x, c(0.0, x)), c(kLeakyReluSlope, x)));
    case ActivationFn::kSigmoid: return unary(UnaryOp::kSigmoid, x);
    case ActivationFn::kTanh: return unary(UnaryOp::kTanh, x);
    case ActivationFn::kGelu: return unary(UnaryOp::kGelu, x);
    case ActivationFn::kSoftmax: return softmax(x, -1, false);
    case ActivationFn::kLogSoftmax: return softmax(x, -1, true);
    case ActivationFn::kElu: return add(unary(UnaryOp::kRelu, x), elu_negative_part(x));
    case ActivationFn::kSelu:
      return mul(add(unary(UnaryOp::kRelu, x), mul(elu_negative_part(x), c(kSeluAlpha, x))), c(kSeluScale, x));
    case ActivationFn::kSoftplus:
      // relu(x) + log(1 + exp(-|x|)): no overflow for large |x|.
      return add(unary(UnaryOp::kRelu, x),
                 unary(UnaryOp::kLog, add(c(1.0, x), unary(UnaryOp::kExp, neg(unary(UnaryOp::kAbs, x))))));
    case ActivationFn::kSoftsign: return div(x, add(c(1.0, x), unary(UnaryOp::kAbs, x)));
    case ActivationFn::kSwish: return mul(x, unary(UnaryOp::kSigmoid, x));
    case ActivationFn::kExponential: return unary(UnaryOp::kExp, x);
  }
  return x;
}

bool fusable_activation(ActivationFn activation, PostActivation* fused) {
  switch (activation) {
    case ActivationFn::kLinear: *fused = PostActivation::kNone; return true;
    case ActivationFn::kRelu: *fused = PostActivation::kRelu; return true;
    default: return false;
  }
}

}  // namespace gpuaccel::nn
