// The op kernels of the CUDA backend as plain C++ functions (they throw BackendError); the
// device's Backend in cuda_backend.cc runs each at the library boundary with a DeviceGuard. Same meaning as the CPU kernels
// of the same names (backends/cpu/elementwise.h, backends/cpu/onednn_ops.h). Every function
// queues its work on device_stream(device) and returns without waiting.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/op_kinds.h"
#include "backends/conv_params.h"
#include "backends/cuda/rnn_weight_layout.h"
#include "backends/rnn_params.h"
#include "kernels/optimizer_functors.h"
#include "tensor/tensor_view.h"

namespace gpuaccel::cuda {

// elementwise.cu, binary.cu, copy.cu, random.cu, reduce.cu: grid-stride launches of the
// functors in cpp/kernels.
void unary(int device, UnaryOp op, const TensorView& x, const TensorView& y);
void unary_backward(int device, UnaryOp op, const TensorView& x, const TensorView& y,
                    const TensorView& dy, const TensorView& dx);
void binary(int device, BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out);
void copy(int device, const TensorView& src, const TensorView& dst);
void fill(int device, const TensorView& dst, double value);
void arange(int device, const TensorView& dst, double start, double step);
void random(int device, RandomDistribution distribution, uint64_t seed, uint64_t offset,
            const TensorView& dst);
void dropout(int device, const TensorView& x, double rate, uint64_t seed, uint64_t offset,
             const TensorView& y, const TensorView& mask);
void reduce(int device, ReduceOp op, const TensorView& x, uint32_t axes_mask, const TensorView& out);

// bitwise.cu: and/or/xor/shifts (kernels/bitwise_functors.h).
void bitwise(int device, BitwiseOp op, const TensorView& a, const TensorView& b,
             const TensorView& out);
// where.cu, sort.cu: selection and ordering (backends/backend_ops.def).
void where(int device, const TensorView& cond, const TensorView& a, const TensorView& b,
           const TensorView& out);
int64_t sort_workspace_bytes(int device, const TensorView& x);
void sort(int device, const TensorView& x, bool descending, const TensorView& values,
          const TensorView& indices, void* workspace);
void take_along_last_axis(int device, const TensorView& x, const TensorView& indices,
                          const TensorView& out);
// row_gather.cu: embedding lookups, their gradient and the segment reductions.
void gather_rows(int device, const TensorView& table, const TensorView& ids, const TensorView& out);
void scatter_rows(int device, const TensorView& rows, const TensorView& ids,
                  const TensorView& table, RowCombine combine);

// matmul.cc: cuBLASLt.
void matmul(int device, const TensorView& a, const TensorView& b, const TensorView* bias,
            const TensorView& out);

// The workspaces kept between calls, back to the device's pool (Backend::release_cached_memory):
// cuBLASLt's (matmul.cc) and the convolutions' arena (cudnn_ops.cc). The next call allocates anew.
void release_matmul_workspace(int device);
void release_conv_workspace(int device);

// cudnn_ops.cc: cuDNN (and the element kernels above for layouts and padding). Pooling with
// asymmetric padding: max pools a -inf padded copy through cuDNN, average goes to avg_pool.cu.
void conv2d_forward(int device, const TensorView& x, const TensorView& w, const TensorView* bias,
                    const Conv2dParams& p, const TensorView& y);
void conv2d_backward_data(int device, const TensorView& dy, const TensorView& w,
                          const Conv2dParams& p, const TensorView& dx);
void conv2d_backward_weights(int device, const TensorView& x, const TensorView& dy,
                             const Conv2dParams& p, const TensorView& dw,
                             const TensorView* dbias);
// Keras's Conv2DTranspose: conv2d_backward_data(x, w, p, y), then the bias (F,) added.
void conv2d_transpose_forward(int device, const TensorView& x, const TensorView& w,
                              const TensorView* bias, const Conv2dParams& p, const TensorView& y);
int64_t pool2d_workspace_bytes(int device, const TensorView& x, const Pool2dParams& p,
                               const TensorView& y);
void pool2d_forward(int device, const TensorView& x, const Pool2dParams& p,
                    const TensorView& y, void* workspace);
void pool2d_backward(int device, const TensorView& dy, const Pool2dParams& p,
                     const void* workspace, const TensorView& x, const TensorView& dx);
void softmax_forward(int device, const TensorView& x, bool log, const TensorView& y);
void softmax_backward(int device, const TensorView& y, const TensorView& dy, bool log,
                      const TensorView& dx);
void batch_norm_forward(int device, const TensorView& x, const TensorView& gamma,
                        const TensorView& beta, const TensorView& mean, const TensorView& var,
                        double epsilon, bool training, const TensorView& y);
void batch_norm_backward(int device, const TensorView& x, const TensorView& dy,
                         const TensorView& gamma, const TensorView& mean, const TensorView& var,
                         double epsilon, const TensorView& dx, const TensorView& dgamma,
                         const TensorView& dbeta);

// layer_norm.cu: row kernels (cuDNN's legacy API has no layer norm).
void layer_norm_forward(int device, const TensorView& x, const TensorView& gamma,
                        const TensorView& beta, double epsilon, const TensorView& y,
                        const TensorView& mean, const TensorView& var);
void layer_norm_backward(int device, const TensorView& x, const TensorView& dy,
                         const TensorView& gamma, const TensorView& mean, const TensorView& var,
                         double epsilon, const TensorView& dx, const TensorView& dgamma,
                         const TensorView& dbeta);

// avg_pool.cu: average pooling with asymmetric padding, divisor excluding the padding (Keras);
// called by pool2d_forward/pool2d_backward, which cuDNN serves when the padding is symmetric.
void avg_pool2d_forward_direct(int device, const TensorView& x, const Pool2dParams& p,
                               const TensorView& y);
void avg_pool2d_backward_direct(int device, const TensorView& dy, const Pool2dParams& p,
                                const TensorView& dx);

// cudnn_rnn.cc: cuDNN's RNN (cudnnRNNForward, cudnnRNNBackwardData_v8,
// cudnnRNNBackwardWeights_v8), the weights converted from Keras's layouts (rnn_weight_layout.h).
int64_t rnn_workspace_bytes(int device, const RnnParams& p, const TensorView& x,
                            const TensorView& recurrent_kernel);
void rnn_forward(int device, const RnnParams& p, const TensorView& x, const TensorView& h0,
                 const TensorView& c0, const TensorView& kernel,
                 const TensorView& recurrent_kernel, const TensorView& bias, const TensorView& y,
                 const TensorView& h_last, const TensorView& c_last, void* workspace);
void rnn_backward(int device, const RnnParams& p, const TensorView& x, const TensorView& h0,
                  const TensorView& c0, const TensorView& kernel,
                  const TensorView& recurrent_kernel, const TensorView& bias,
                  const TensorView& y, const TensorView& h_last, const TensorView& c_last,
                  const void* workspace, const TensorView& dy, const TensorView& dh_last,
                  const TensorView& dc_last, const TensorView& dx, const TensorView& dh0,
                  const TensorView& dc0, const TensorView& dkernel,
                  const TensorView& drecurrent_kernel, const TensorView& dbias);
// rnn_weights.cu: one RnnBlockCopy (rnn_weight_layout.h) from src to dst on the device's stream.
void run_rnn_block_copy(int device, const RnnBlockCopy& copy, const float* src, float* dst);

// nonfinite_check.cu: the loss-scale finite check, one launch over all `tensors` (Backend::any_nonfinite).
void any_nonfinite(int device, const std::vector<TensorView>& tensors, const TensorView& flag);

// optimizer_update.cu: the fused optimizer step (kernels/optimizer_functors.h); empty views
// (no data) for the slots the configuration does not use.
void optimizer_update(int device, const OptimizerUpdate& u, const TensorView& param,
                      const TensorView& grad, const TensorView& slot0, const TensorView& slot1,
                      const TensorView& slot2);

}  // namespace gpuaccel::cuda
