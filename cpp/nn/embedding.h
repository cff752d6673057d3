// Keras's Embedding: integer ids (...) -> vectors (..., output_dim) looked up in the weight
// `embeddings` (input_dim, output_dim); float ids are cast to int32 first, as Keras does.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class Embedding : public Layer {
 public:
  Embedding(std::string name, int64_t input_dim, int64_t output_dim,
            const std::string& embeddings_initializer = "uniform");
  const char* type() const override { return "Embedding"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override;

 private:
  int64_t input_dim_, output_dim_;
  std::string initializer_;
  Tensor embeddings_;
};

}  // namespace gpuaccel::nn
