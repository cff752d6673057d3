// Embedding (see embedding.h) on the embedding op (which checks the id range).
#include "nn/embedding.h"

#include "nn/initializers.h"
#include "ops/nn.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {

Embedding::Embedding(std::string name, int64_t input_dim, int64_t output_dim,
                     const std::string& embeddings_initializer)
    : Layer(std::move(name)), input_dim_(input_dim), output_dim_(output_dim) {
  if (input_dim <= 0 || output_dim <= 0) {
    fail("Both `input_dim` and `output_dim` should be positive, Received input_dim = " +
         std::to_string(input_dim) + " and output_dim = " + std::to_string(output_dim));
  }
  initializer_ = canonical_initializer(embeddings_initializer, std::string("Embedding '") + this->name() + "'");
}

Shape Embedding::output_shape(const ShapeList& input_shapes) const {
  expect_inputs(input_shapes.size(), 1);
  Shape out = input_shapes[0];
  out.push_back(output_dim_);
  return out;
}

void Embedding::do_build(const ShapeList& input_shapes) {
  expect_inputs(input_shapes.size(), 1);
  embeddings_ = add_weight("embeddings", {input_dim_, output_dim_}, initializer_);
}

Tensor Embedding::call(const std::vector<Tensor>& inputs, bool training) {
  (void)training;
  expect_built();
  expect_inputs(inputs.size(), 1);
  Tensor ids = inputs[0];
  if (ids.dtype() != DType::kInt32 && ids.dtype() != DType::kInt64) ids = cast(ids, DType::kInt32);
  return embedding(ids, read(embeddings_));
}

}  // namespace gpuaccel::nn
