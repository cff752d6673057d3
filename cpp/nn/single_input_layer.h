// The frame shared by the layers of one input whose shape is checked the same way wherever it
// is seen (output_shape, build, call): Dense, Conv1D, Conv2D and the normalizations. A layer
// says only what differs: its check, its output shape, its weights and its computation.
#pragma once

#include <vector>

#include "nn/layer.h"

namespace gpuaccel::nn {

class SingleInputLayer : public Layer {
 public:
  using Layer::Layer;
  Shape output_shape(const ShapeList& input_shapes) const final;
  Tensor call(const std::vector<Tensor>& inputs, bool training) final;

 protected:
  void do_build(const ShapeList& input_shapes) final;

  // Fails with Keras's text unless the layer takes `input` (once built: as built).
  virtual void check(const Shape& input) const = 0;
  // The output shape for a checked input shape.
  virtual Shape output_shape_of(const Shape& input) const = 0;
  // Creates the weights for a checked input shape.
  virtual void build_for(const Shape& input) = 0;
  // The forward pass on the checked input, already cast to the compute dtype.
  virtual Tensor call_on(const Tensor& x, bool training) = 0;
};

}  // namespace gpuaccel::nn
