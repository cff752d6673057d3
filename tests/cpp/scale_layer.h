// y = x * w with one trainable scalar weight (initially 1): the smallest layer that gives the
// training tests (training_test, step_capture_test) a graph, a gradient and an update.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "nn/layer.h"
#include "ops/elementwise.h"

namespace gpuaccel::test {

class ScaleLayer : public nn::Layer {
 public:
  explicit ScaleLayer(std::string name = "scale") : Layer(std::move(name)) {}
  const char* type() const override { return "Scale"; }
  Shape output_shape(const nn::ShapeList& shapes) const override { return shapes.at(0); }
  Tensor call(const std::vector<Tensor>& inputs, bool) override {
    return mul(cast_input(inputs.at(0)), read(weights()[0].value));
  }

 protected:
  void do_build(const nn::ShapeList&) override { add_weight("w", {1}, "ones"); }
};

}  // namespace gpuaccel::test
