// What BatchNormalization and LayerNormalization share: Keras's axis (-1 only) and epsilon
// checks, the optional gamma (scale) and beta (center) over the last axis, and the rule for
// their input (a defined last axis, the size it was built with).
#pragma once

#include <string>

#include "nn/single_input_layer.h"

namespace gpuaccel::nn {

class Normalization : public SingleInputLayer {
 protected:
  // `type_name` names the layer in errors (type() cannot be called yet); `last_axis_meaning`
  // says what axis=-1 is to it ("channels last"); inputs need at least `min_ndim` dimensions.
  Normalization(std::string name, const char* type_name, int64_t axis,
                const char* last_axis_meaning, double epsilon, bool center, bool scale,
                const std::string& beta_initializer, const std::string& gamma_initializer,
                int min_ndim);

  void check(const Shape& input) const override;
  Shape output_shape_of(const Shape& input) const override { return input; }
  // gamma and beta, those the layer has (scale, center).
  void build_for(const Shape& input) override;

  // The op's gamma and beta for x: the weights, or the constants 1 and 0 where the layer has
  // no scale or no center (the ops always take both).
  Tensor gamma_or_ones(const Tensor& x) const;
  Tensor beta_or_zeros(const Tensor& x) const;

  double epsilon() const { return epsilon_; }
  // The last axis's size, -1 until built.
  int64_t channels() const { return channels_; }

 private:
  double epsilon_;
  int64_t channels_ = -1;
  bool center_, scale_;
  int min_ndim_;
  std::string beta_init_, gamma_init_;
  Tensor gamma_, beta_;
};

}  // namespace gpuaccel::nn
