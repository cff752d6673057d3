// The oneDNN-backed CPU kernels: matmul, convolution, pooling, softmax and normalizations,
// forward and backward. Each call looks its primitive up in a cache keyed by shapes, strides,
// dtypes and attributes, so a training step that repeats shapes creates no primitive. Views are
// validated by the op frontends. Compute: float32, and bfloat16 with float32 accumulation
// (AVX512-BF16/AMX); float16 is storage only (oneDNN's CPU f16 kernels need AVX512-FP16), so
// f16 inputs are converted to f32, computed, and converted back (documented in docs/ops.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/conv_params.h"
#include "backends/op_kinds.h"
#include "backends/rnn_params.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cpu {

// out[b] = a[b] @ b[b] (+ bias). a: (..., M, K), b: (..., K, N), out: (..., M, N) with ndim 2
// or 3 (batch already broadcast by the frontend: a stride-0 batch dimension is allowed). Any
// strides on a and b (transposes are free); out contiguous. bias: nullptr or (N,) added to
// every row. a, b, out share a dtype. `activation` is applied to out in the same pass (a oneDNN
// post-op, which maps NaN to 0: see fused_relu_guard.h).
// (The CPU backend's matmul sends products too small for oneDNN to small_matmul.h first.)
void onednn_matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                   const TensorView& out, PostActivation activation = PostActivation::kNone);

using gpuaccel::Conv2dParams;

// x: (N, H, W, C) NHWC, w: (KH, KW, C, F) (Keras's kernel layout), bias: nullptr or (F,),
// y: (N, OH, OW, F). All contiguous. `activation` is applied to y in the same pass (a oneDNN
// post-op, which maps NaN to 0: see fused_relu_guard.h).
void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                    const Conv2dParams& p, const TensorView& y,
                    PostActivation activation = PostActivation::kNone);
// dx from dy and w.
void conv2d_backward_data(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                          const TensorView& dx);
// Which of oneDNN's implementations conv2d_backward_data runs, per shape (docs/benchmarks.md,
// "oneDNN 2.6 (Debian) vs 3.2 (PyPI)"): "measure" (the default) times the candidates on a
// shape's first call and keeps the fastest; "default" takes oneDNN's own first pick (the same on
// every run); an implementation name ("jit:avx512_core", as ONEDNN_VERBOSE prints it) forces it
// where it applies and falls back on oneDNN's pick elsewhere. Initially the value of
// GPUACCEL_ONEDNN_CONV_BWD_DATA, else "measure". Throws InvalidArgument for an empty setting.
void set_conv2d_backward_data_impl(const std::string& setting);
std::string conv2d_backward_data_impl_setting();
// The candidates "measure" times for these operands, oneDNN's order (the first is its pick).
std::vector<std::string> conv2d_backward_data_impls(const TensorView& dy, const TensorView& w,
                                                    const Conv2dParams& p, const TensorView& dx);
// The implementation conv2d_backward_data uses for these operands under the current setting;
// "" before their first call.
std::string conv2d_backward_data_impl_used(const TensorView& dy, const TensorView& w,
                                           const Conv2dParams& p, const TensorView& dx);
// Backward-data implementation choices made so far (one per new shape and setting).
int64_t onednn_conv2d_backward_data_choices();
// The transposed convolution (Keras's Conv2DTranspose) on oneDNN's deconvolution: x (N, H, W,
// C), w (KH, KW, F, C), bias nullptr or (F,), y (N, OH, OW, F), all contiguous; p is the
// convolution of y that gives x's size, so y = conv2d_backward_data(x, w, p) + bias.
void conv2d_transpose_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                              const Conv2dParams& p, const TensorView& y);
// dw (and dbias when not null) from x and dy.
void conv2d_backward_weights(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                             const TensorView& dw, const TensorView* dbias);
// The same choice for conv2d_backward_weights, with one more dimension: each implementation
// also as its one-thread variant (its descriptor and primitive made, and run, with the calling
// thread's OpenMP count at 1; named "<impl>@1thread", e.g. "jit:avx512_core@1thread"), offered
// when the caller has more than one thread (onednn_impl_choice.h says why that is sound).
// Initially GPUACCEL_ONEDNN_CONV_BWD_WEIGHTS, else "measure". Throws InvalidArgument for ''.
void set_conv2d_backward_weights_impl(const std::string& setting);
std::string conv2d_backward_weights_impl_setting();
// The candidates "measure" times for these operands, in the order it tries them.
std::vector<std::string> conv2d_backward_weights_impls(const TensorView& x, const TensorView& dy,
                                                       const Conv2dParams& p,
                                                       const TensorView& dw,
                                                       const TensorView* dbias);
// The candidate conv2d_backward_weights uses for these operands under the current setting; ""
// before their first call.
std::string conv2d_backward_weights_impl_used(const TensorView& x, const TensorView& dy,
                                              const Conv2dParams& p, const TensorView& dw,
                                              const TensorView* dbias);
// Backward-weights implementation choices made so far (one per new shape and setting).
int64_t onednn_conv2d_backward_weights_choices();

using gpuaccel::PoolKind;
using gpuaccel::Pool2dParams;
// x: (N, H, W, C), y: (N, OH, OW, C). `workspace` (max pooling, for the backward pass): bytes
// the caller allocates, of size pool2d_workspace_bytes(...); nullptr for average pooling or
// inference.
int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p, const TensorView& y);
void pool2d_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y, void* workspace);
// `x` (the forward's input) is not read: the workspace holds max pooling's argmax.
void pool2d_backward(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                     const TensorView& x, const TensorView& dx);
// pool2d_backward and relu's backward at the pooling's input x (dx * (x > 0)) in one pass, the
// same bits as the two in sequence; false (nothing written) where that pass does not apply
// (windows that can overlap, oneDNN's pooling, strided or float16 tensors): then run the two.
bool pool2d_backward_relu(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                          const TensorView& x, const TensorView& dx);

// Softmax / log-softmax along the last dimension (contiguous), forward and backward (from y).
void softmax_forward(const TensorView& x, bool log, const TensorView& y);
void softmax_backward(const TensorView& y, const TensorView& dy, bool log, const TensorView& dx);

// Batch normalization over all but the last dimension (NHWC or (N, C)); gamma/beta (C,) f32.
// Training: writes the batch mean and variance (biased, as Keras uses to normalize) to
// mean/var. Inference: reads them. epsilon as Keras's (1e-3 default, passed by the caller).
void batch_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                        const TensorView& mean, const TensorView& var, double epsilon,
                        bool training, const TensorView& y);
void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                         const TensorView& mean, const TensorView& var, double epsilon,
                         const TensorView& dx, const TensorView& dgamma, const TensorView& dbeta);

// Layer normalization over the last dimension; gamma/beta (C,) f32; mean/var (rows,) f32
// written by forward, read by backward.
void layer_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                        double epsilon, const TensorView& y, const TensorView& mean,
                        const TensorView& var);
void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                         const TensorView& mean, const TensorView& var, double epsilon,
                         const TensorView& dx, const TensorView& dgamma, const TensorView& dbeta);

// The fused recurrent layer (Backend::rnn_forward/rnn_backward, backends/rnn_params.h) on
// oneDNN's vanilla_rnn (tanh), lstm and lbr_gru primitives; float32.
int64_t rnn_workspace_bytes(const RnnParams& p, const TensorView& x,
                            const TensorView& recurrent_kernel);
void rnn_forward(const RnnParams& p, const TensorView& x, const TensorView& h0,
                 const TensorView& c0, const TensorView& kernel,
                 const TensorView& recurrent_kernel, const TensorView& bias, const TensorView& y,
                 const TensorView& h_last, const TensorView& c_last, void* workspace);
void rnn_backward(const RnnParams& p, const TensorView& x, const TensorView& h0,
                  const TensorView& c0, const TensorView& kernel,
                  const TensorView& recurrent_kernel, const TensorView& bias,
                  const TensorView& y, const TensorView& h_last, const TensorView& c_last,
                  const void* workspace, const TensorView& dy, const TensorView& dh_last,
                  const TensorView& dc_last, const TensorView& dx, const TensorView& dh0,
                  const TensorView& dc0, const TensorView& dkernel,
                  const TensorView& drecurrent_kernel, const TensorView& dbias);

// Reorders of convolution weights into a primitive's layout run so far (tests check that
// weights kept in that layout are not reordered again until they change).
int64_t conv_weights_reorders();

// Entries in the primitive cache (tests check a repeated step creates none).
int64_t onednn_primitive_cache_size();
int64_t onednn_primitives_created();

}  // namespace gpuaccel::cpu
