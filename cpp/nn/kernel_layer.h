// What Dense, Conv1D, Conv2D and Conv2DTranspose share: a kernel over (input features, output
// features) (the last two axes, in Conv2DTranspose's the other way round), an optional bias over
// the output features, an activation after the op, and an input whose last axis (its features)
// is fixed at build.
#pragma once

#include <string>

#include "nn/activations.h"
#include "nn/single_input_layer.h"

namespace gpuaccel::nn {

class KernelLayer : public SingleInputLayer {
 protected:
  KernelLayer(std::string name, int64_t outputs, bool use_bias);

  // Parses Keras's activation and initializer names; the layer's constructor calls it after
  // its own argument checks (Keras reports those first).
  void parse_activation_and_initializers(const std::string& activation,
                                         const std::string& kernel_initializer,
                                         const std::string& bias_initializer);

  // The kernel's shape for `in_features` input features; it ends with (in_features, outputs()),
  // but for Conv2DTranspose's (kh, kw, outputs(), in_features), Keras's transposed layout.
  virtual Shape kernel_shape(int64_t in_features) const = 0;
  // The kernel, then the bias (when the layer has one).
  void build_for(const Shape& input) override;

  int64_t outputs() const { return outputs_; }
  // The input's last axis, -1 until built.
  int64_t in_features() const { return in_features_; }
  ActivationFn activation() const { return activation_; }
  // The weights as the computation reads them; bias() is an empty tensor without a bias.
  Tensor kernel() const;
  Tensor bias() const;

  // The op followed by the activation: op(fused) where the activation fuses into it (linear,
  // relu), otherwise the activation applied to op(PostActivation::kNone).
  template <class Op>
  Tensor then_activation(const Op& op) const {
    PostActivation fused = PostActivation::kNone;
    if (fusable_activation(activation_, &fused)) return op(fused);
    return apply_activation(activation_, op(PostActivation::kNone));
  }

 private:
  int64_t outputs_;
  bool use_bias_;
  ActivationFn activation_ = ActivationFn::kLinear;
  std::string kernel_initializer_, bias_initializer_;
  int64_t in_features_ = -1;
  Tensor kernel_, bias_;
};

}  // namespace gpuaccel::nn
