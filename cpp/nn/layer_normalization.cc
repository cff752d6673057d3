// LayerNormalization (see layer_normalization.h) on the layer_norm op.
#include "nn/layer_normalization.h"

#include "ops/nn.h"

namespace gpuaccel::nn {

LayerNormalization::LayerNormalization(std::string name, int64_t axis, double epsilon, bool center,
                                       bool scale, const std::string& beta_initializer,
                                       const std::string& gamma_initializer)
    : Normalization(std::move(name), "LayerNormalization", axis, "the last axis", epsilon, center,
                    scale, beta_initializer, gamma_initializer, /*min_ndim=*/1) {}

Tensor LayerNormalization::call_on(const Tensor& x, bool training) {
  (void)training;  // the same in training and inference
  return layer_norm(x, gamma_or_ones(x), beta_or_zeros(x), epsilon());
}

}  // namespace gpuaccel::nn
