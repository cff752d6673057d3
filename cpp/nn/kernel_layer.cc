// KernelLayer (see kernel_layer.h).
#include "nn/kernel_layer.h"

#include "nn/initializers.h"

namespace gpuaccel::nn {

KernelLayer::KernelLayer(std::string name, int64_t outputs, bool use_bias)
    : SingleInputLayer(std::move(name)), outputs_(outputs), use_bias_(use_bias) {}

void KernelLayer::parse_activation_and_initializers(const std::string& activation,
                                                    const std::string& kernel_initializer,
                                                    const std::string& bias_initializer) {
  const std::string where = std::string(type()) + " '" + name() + "'";
  activation_ = parse_activation(activation, where);
  kernel_initializer_ = canonical_initializer(kernel_initializer, where);
  bias_initializer_ = canonical_initializer(bias_initializer, where);
}

void KernelLayer::build_for(const Shape& input) {
  in_features_ = input.back();
  kernel_ = add_weight("kernel", kernel_shape(in_features_), kernel_initializer_);
  if (use_bias_) bias_ = add_weight("bias", {outputs_}, bias_initializer_);
}

Tensor KernelLayer::kernel() const { return read(kernel_); }

Tensor KernelLayer::bias() const { return use_bias_ ? read(bias_) : Tensor(); }

}  // namespace gpuaccel::nn
