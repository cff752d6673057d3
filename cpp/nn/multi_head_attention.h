// Keras's MultiHeadAttention on (batch, seq, features) inputs [query, value, key]: per-head
// projections, scaled dot-product attention per head, and an output projection back to the
// query's feature size (or output_shape). Weights in Keras's order and shapes: query/kernel
// (d_q, heads, key_dim), query/bias (heads, key_dim), key/..., value/kernel (d_v, heads,
// value_dim), value/bias, attention_output/kernel (heads, value_dim, out), attention_output/bias.
#pragma once

#include "nn/layer.h"

namespace gpuaccel::nn {

class MultiHeadAttention : public Layer {
 public:
  // value_dim <= 0: key_dim; output_dim <= 0: the query's last dimension.
  MultiHeadAttention(std::string name, int64_t num_heads, int64_t key_dim, int64_t value_dim = 0,
                     double dropout = 0.0, bool use_bias = true, int64_t output_dim = 0,
                     const std::string& kernel_initializer = "glorot_uniform",
                     const std::string& bias_initializer = "zeros");
  const char* type() const override { return "MultiHeadAttention"; }
  Shape output_shape(const ShapeList& input_shapes) const override;
  // inputs: [query, value] or [query, value, key] (key defaults to value).
  Tensor call(const std::vector<Tensor>& inputs, bool training) override;

 protected:
  void do_build(const ShapeList& input_shapes) override;

 private:
  void check(const ShapeList& shapes) const;
  // x (B, T, d) @ kernel (d, heads, dim) + bias -> (B, heads, T, dim).
  Tensor project(const Tensor& x, const Tensor& kernel, const Tensor& bias, int64_t dim) const;

  int64_t num_heads_, key_dim_, value_dim_, output_dim_;
  double dropout_;
  bool use_bias_;
  std::string kernel_init_, bias_init_;
  int64_t query_dim_ = -1, key_in_dim_ = -1, value_in_dim_ = -1;
  Tensor query_kernel_, query_bias_, key_kernel_, key_bias_, value_kernel_, value_bias_,
      out_kernel_, out_bias_;
};

}  // namespace gpuaccel::nn
