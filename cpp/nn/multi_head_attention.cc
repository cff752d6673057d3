// MultiHeadAttention (see multi_head_attention.h): the projections are `linear` ops on the
// kernels viewed as 2-D, the attention is scaled_dot_product_attention (or, with dropout in
// training, the same formula written out so dropout can act on the attention weights).
#include "nn/multi_head_attention.h"

#include <cmath>

#include "core/errors.h"
#include "nn/initializers.h"
#include "ops/elementwise.h"
#include "ops/linalg.h"
#include "ops/nn.h"
#include "ops/shape_ops.h"

namespace gpuaccel::nn {

MultiHeadAttention::MultiHeadAttention(std::string name, int64_t num_heads, int64_t key_dim,
                                       int64_t value_dim, double dropout, bool use_bias,
                                       int64_t output_dim, const std::string& kernel_initializer,
                                       const std::string& bias_initializer)
    : Layer(std::move(name)), num_heads_(num_heads), key_dim_(key_dim),
      value_dim_(value_dim > 0 ? value_dim : key_dim), output_dim_(output_dim), dropout_(dropout),
      use_bias_(use_bias) {
  const std::string where = std::string("MultiHeadAttention '") + this->name() + "'";
  if (num_heads <= 0) fail("`num_heads` must be a positive integer; received num_heads=" + std::to_string(num_heads));
  if (key_dim <= 0) fail("`key_dim` must be a positive integer; received key_dim=" + std::to_string(key_dim));
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    fail("`dropout` must be a float in [0, 1); received dropout=" + std::to_string(dropout));
  }
  kernel_init_ = canonical_initializer(kernel_initializer, where);
  bias_init_ = canonical_initializer(bias_initializer, where);
}

void MultiHeadAttention::check(const ShapeList& shapes) const {
  if (shapes.size() != 2 && shapes.size() != 3) {
    fail("layer '" + name() + "' expects inputs [query, value] or [query, value, key], but it received " +
         std::to_string(shapes.size()) + " input tensors");
  }
  static const char* kNames[] = {"query", "value", "key"};
  for (size_t i = 0; i < shapes.size(); ++i) {
    if (shapes[i].size() != 3) {
      fail("only inputs of shape (batch, sequence, features) are supported (no attention_axes); the " +
           std::string(kNames[i]) + " has shape " + shape_text(shapes[i]));
    }
    if (shapes[i][2] < 0) {
      fail(std::string("the last dimension of the ") + kNames[i] + " must be defined; received shape " +
           shape_text(shapes[i]));
    }
  }
  const Shape& key = shapes.size() == 3 ? shapes[2] : shapes[1];
  if (key[1] >= 0 && shapes[1][1] >= 0 && key[1] != shapes[1][1]) {
    fail("key and value must have the same sequence length; received key shape " + shape_text(key) +
         " and value shape " + shape_text(shapes[1]));
  }
  if (query_dim_ >= 0) {
    if (shapes[0][2] != query_dim_ || shapes[1][2] != value_in_dim_ || key[2] != key_in_dim_) {
      fail("the layer was built for query/value/key feature sizes " + std::to_string(query_dim_) + "/" +
           std::to_string(value_in_dim_) + "/" + std::to_string(key_in_dim_) + " but received shapes " +
           shape_text(shapes[0]) + ", " + shape_text(shapes[1]) + ", " + shape_text(key));
    }
  }
}

Shape MultiHeadAttention::output_shape(const ShapeList& input_shapes) const {
  check(input_shapes);
  const Shape& q = input_shapes[0];
  return {q[0], q[1], output_dim_ > 0 ? output_dim_ : q[2]};
}

void MultiHeadAttention::do_build(const ShapeList& input_shapes) {
  check(input_shapes);
  query_dim_ = input_shapes[0][2];
  value_in_dim_ = input_shapes[1][2];
  key_in_dim_ = input_shapes.size() == 3 ? input_shapes[2][2] : value_in_dim_;
  const int64_t out = output_dim_ > 0 ? output_dim_ : query_dim_;
  query_kernel_ = add_weight("query/kernel", {query_dim_, num_heads_, key_dim_}, kernel_init_);
  if (use_bias_) query_bias_ = add_weight("query/bias", {num_heads_, key_dim_}, bias_init_);
  key_kernel_ = add_weight("key/kernel", {key_in_dim_, num_heads_, key_dim_}, kernel_init_);
  if (use_bias_) key_bias_ = add_weight("key/bias", {num_heads_, key_dim_}, bias_init_);
  value_kernel_ = add_weight("value/kernel", {value_in_dim_, num_heads_, value_dim_}, kernel_init_);
  if (use_bias_) value_bias_ = add_weight("value/bias", {num_heads_, value_dim_}, bias_init_);
  out_kernel_ = add_weight("attention_output/kernel", {num_heads_, value_dim_, out}, kernel_init_);
  if (use_bias_) out_bias_ = add_weight("attention_output/bias", {out}, bias_init_);
}

Tensor MultiHeadAttention::project(const Tensor& x, const Tensor& kernel, const Tensor& bias,
                                   int64_t dim) const {
  const Tensor w = reshape(read(kernel), {kernel.dim(0), num_heads_ * dim});
  const Tensor b = bias.defined() ? reshape(read(bias), {num_heads_ * dim}) : Tensor();
  const Tensor y = linear(x, w, b);  // (B, T, heads * dim)
  return permute(reshape(y, {x.dim(0), x.dim(1), num_heads_, dim}), {0, 2, 1, 3});
}

Tensor MultiHeadAttention::call(const std::vector<Tensor>& inputs, bool training) {
  expect_built();
  ShapeList shapes;
  for (const Tensor& t : inputs) shapes.push_back(t.shape());
  check(shapes);
  const Tensor query = cast_input(inputs[0]);
  const Tensor value = cast_input(inputs[1]);
  const Tensor key = inputs.size() == 3 ? cast_input(inputs[2]) : value;
  const Tensor q = project(query, query_kernel_, query_bias_, key_dim_);  // (B, H, T, key_dim)
  const Tensor k = project(key, key_kernel_, key_bias_, key_dim_);        // (B, H, S, key_dim)
  const Tensor v = project(value, value_kernel_, value_bias_, value_dim_);  // (B, H, S, value_dim)
  Tensor attended;
  if (training && dropout_ > 0.0) {
    const Tensor scores = mul(matmul(q, transpose(k, -1, -2)), scalar_like(1.0 / std::sqrt(double(key_dim_)), q));
    attended = matmul(dropout(softmax(scores, -1, false), dropout_, true), v);
  } else {
    attended = scaled_dot_product_attention(q, k, v, Tensor());
  }
  // (B, H, T, value_dim) -> (B, T, H * value_dim) @ (H * value_dim, out) + bias.
  const int64_t batch = query.dim(0), steps = query.dim(1);
  const Tensor merged = reshape(contiguous(permute(attended, {0, 2, 1, 3})), {batch, steps, num_heads_ * value_dim_});
  const Tensor w = reshape(read(out_kernel_), {num_heads_ * value_dim_, out_kernel_.dim(2)});
  return linear(merged, w, use_bias_ ? read(out_bias_) : Tensor());
}

}  // namespace gpuaccel::nn
