// Neural-network op frontends with Keras/TF conventions (NHWC images, HWIO kernels, 'valid'
// and 'same' padding resolved as TF does) and their gradients: convolution, pooling,
// softmax/log-softmax, dropout, batch and layer normalization, embedding lookup, scaled
// dot-product attention, and the losses (softmax cross-entropy with sparse or dense labels,
// mean squared error). Composite ops (attention, the losses) are built from other ops, so
// their gradients come from autograd; embedding and the segment sum are the row-gather kernels
// (gather_rows, scatter_rows adding), each the other's gradient.
#pragma once

#include <cstdint>
#include <string>

#include "backends/conv_params.h"
#include "backends/op_kinds.h"
#include "tensor/tensor.h"

namespace gpuaccel {

enum class Padding { kValid, kSame };
Padding parse_padding(const std::string& text, const std::string& op);

// activation(conv(x, w) + bias): x (N, H, W, C), w (KH, KW, C / groups, F), bias (F,) or
// undefined. The activation runs in the convolution's own pass where the backend can fuse it,
// and its backward is computed from the output (one autograd node for the three). groups > 1
// is the grouped convolution (Conv2dParams::groups; groups == C with w (KH, KW, 1, C * M) is
// the depthwise convolution of depth multiplier M).
Tensor conv2d(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t stride_h,
              int64_t stride_w, Padding padding, int64_t dilation_h, int64_t dilation_w,
              PostActivation activation = PostActivation::kNone, int64_t groups = 1);

// A transposed convolution's geometry: the spatial size of its output y, and the convolution of
// y that gives its input's size (strides, dilations, explicit padding), which the kernels run
// backwards. Keras's and TF's 'valid'/'same' and torch's symmetric padding all resolve into it.
struct Conv2dTransposeGeometry {
  int64_t out_h = 0, out_w = 0;
  Conv2dParams params;
};

// Keras's Conv2DTranspose output length along one axis; output_padding < 0 means none given.
int64_t conv2d_transpose_output_length(int64_t in, int64_t kernel, int64_t stride,
                                       int64_t dilation, Padding padding,
                                       int64_t output_padding);

// TF's geometry (tf.nn.conv2d_transpose, and Keras's layer through it): y's size given, its
// 'valid'/'same' padding resolved as TF resolves the convolution of y, which must give x's size
// (an InvalidArgumentError naming both sizes otherwise).
Conv2dTransposeGeometry conv2d_transpose_geometry(int64_t in_h, int64_t in_w, int64_t kernel_h,
                                                  int64_t kernel_w, int64_t out_h, int64_t out_w,
                                                  int64_t stride_h, int64_t stride_w,
                                                  Padding padding, int64_t dilation_h,
                                                  int64_t dilation_w);

// y = conv2d_transpose(x, w) + bias, the gradient of conv2d with respect to its input: x (N, H,
// W, C), w (KH, KW, F, C) (Keras's Conv2DTranspose kernel), bias (F,) or undefined, y (N,
// g.out_h, g.out_w, F). Differentiable in x, w and bias.
Tensor conv2d_transpose(const Tensor& x, const Tensor& w, const Tensor& bias,
                        const Conv2dTransposeGeometry& g);
// The same with TF's geometry for an output of (out_h, out_w) (conv2d_transpose_geometry).
Tensor conv2d_transpose(const Tensor& x, const Tensor& w, const Tensor& bias, int64_t out_h,
                        int64_t out_w, int64_t stride_h, int64_t stride_w, Padding padding,
                        int64_t dilation_h, int64_t dilation_w);

// x (N, H, W, C); max or average (Keras: padding excluded from the average).
Tensor pool2d(const Tensor& x, bool max, int64_t window_h, int64_t window_w, int64_t stride_h,
              int64_t stride_w, Padding padding);

Tensor softmax(const Tensor& x, int64_t axis, bool log);

// Inverted dropout; the identity when !training or rate == 0.
Tensor dropout(const Tensor& x, double rate, bool training);

// Batch normalization over every axis but the last (Keras's axis=-1). Training normalizes with
// the batch statistics and updates moving_mean/moving_var in place (Keras's momentum rule:
// moving = moving * momentum + batch * (1 - momentum)); inference uses the moving statistics.
Tensor batch_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                  const Tensor& moving_mean, const Tensor& moving_var, double momentum,
                  double epsilon, bool training);
// Layer normalization over the last axis.
Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double epsilon);

// table (V, D), ids integer (...) -> (..., D). Out-of-range ids are an InvalidArgumentError.
Tensor embedding(const Tensor& ids, const Tensor& table);
// Unsorted segment sum over the first axis: out[s, :] = the sum of rows[i, :] with ids[i] == s,
// added in order of i; rows (N, D) floating, int32 or int64 (integer sums wrap), ids integer
// (N), out (num_segments, D). Ids outside [0, num_segments) are dropped (TF drops negative
// ones). Its gradient (floating rows) gathers.
Tensor segment_sum_rows(const Tensor& rows, const Tensor& ids, int64_t num_segments);
// Unsorted segment max (is_max) or min, shaped and bounded as segment_sum_rows. An empty
// segment holds the dtype's lowest (max) or highest (min) finite value, as TF's; a NaN in a
// segment makes its result NaN. The gradient (floating rows) goes to the rows equal to their
// segment's result, split evenly between ties (TF's rule).
Tensor segment_extreme_rows(const Tensor& rows, const Tensor& ids, int64_t num_segments,
                            bool is_max);
// Unsorted segment product, shaped and bounded as segment_sum_rows; an empty segment holds 1.
// The gradient (floating rows) is the product of each entry's segment-mates, zeros included
// (TF's and PyTorch's rule).
Tensor segment_prod_rows(const Tensor& rows, const Tensor& ids, int64_t num_segments);

// softmax(Q K^T / sqrt(d_k) + mask) V; a float mask (broadcastable to the scores) is added (use
// large negative values to hide positions); a bool mask keeps the True positions (Keras, torch);
// or undefined.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const Tensor& mask);

// Per-example losses (no reduction): labels int (N,) for sparse, (N, C) probabilities for dense.
Tensor sparse_softmax_cross_entropy(const Tensor& labels, const Tensor& logits);
Tensor softmax_cross_entropy(const Tensor& labels, const Tensor& logits);
// mean over the last axis of (y_pred - y_true)^2, as Keras's MeanSquaredError per example.
Tensor mean_squared_error(const Tensor& y_true, const Tensor& y_pred);
// 1 where labels == c (int labels), in `dtype`; shape (..., num_classes).
Tensor one_hot(const Tensor& labels, int64_t num_classes, DType dtype);

}  // namespace gpuaccel
