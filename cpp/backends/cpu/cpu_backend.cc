// The CPU backend: the Backend interface over the cpu:: kernels (element-wise loops and oneDNN).
#include <cstring>

#include "backends/backend.h"
#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/elementwise.h"
#include "backends/cpu/fused_relu_guard.h"
#include "backends/cpu/onednn_ops.h"
#include "backends/cpu/nonfinite_check.h"
#include "backends/cpu/optimizer_update.h"
#include "backends/cpu/small_matmul.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {

namespace {

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }
  void unary(UnaryOp op, const TensorView& x, const TensorView& y) override { cpu::unary(op, x, y); }
  void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y, const TensorView& dy,
                      const TensorView& dx) override {
    cpu::unary_backward(op, x, y, dy, dx);
  }
  void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) override {
    cpu::binary(op, a, b, out);
  }
  void copy(const TensorView& src, const TensorView& dst) override { cpu::copy(src, dst); }
  void fill(const TensorView& dst, double value) override { cpu::fill(dst, value); }
  void arange(const TensorView& dst, double start, double step) override {
    cpu::arange(dst, start, step);
  }
  void random(RandomDistribution d, uint64_t seed, uint64_t offset, const TensorView& dst) override {
    cpu::random(d, seed, offset, dst);
  }
  void reduce(ReduceOp op, const TensorView& x, uint32_t axes, const TensorView& out) override {
    cpu::reduce(op, x, axes, out);
  }
  void dropout(const TensorView& x, double rate, uint64_t seed, uint64_t offset,
               const TensorView& y, const TensorView& mask) override {
    cpu::dropout(x, rate, seed, offset, y, mask);
  }
  void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
              const TensorView& out) override {
    if (out.numel() > 0 && cpu::small_matmul_applies(a, b, out)) {
      cpu::small_matmul(a, b, bias, out);
      return;
    }
    cpu::matmul(a, b, bias, out);
  }
  void matmul_activation(const TensorView& a, const TensorView& b, const TensorView* bias,
                         PostActivation activation, const TensorView& out) override {
    // A product this small costs less than fusing saves; operands that could make a NaN
    // output need the separate relu, which keeps it (fused_relu_guard.h).
    if ((out.numel() > 0 && cpu::small_matmul_applies(a, b, out)) ||
        (activation == PostActivation::kRelu &&
         !cpu::fused_relu_is_exact(a, b, bias, a.shape[a.ndim - 1]))) {
      matmul(a, b, bias, out);
      if (activation == PostActivation::kRelu) cpu::unary(UnaryOp::kRelu, out, out);
      return;
    }
    cpu::matmul(a, b, bias, out, activation);
  }
  void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                      const Conv2dParams& p, const TensorView& y) override {
    cpu::conv2d_forward(x, w, bias, p, y);
  }
  void conv2d_forward_activation(const TensorView& x, const TensorView& w, const TensorView* bias,
                                 const Conv2dParams& p, PostActivation activation,
                                 const TensorView& y) override {
    // w (KH, KW, C, F): each output sums KH * KW * C products.
    if (activation == PostActivation::kRelu &&
        !cpu::fused_relu_is_exact(x, w, bias, w.shape[0] * w.shape[1] * w.shape[2])) {
      cpu::conv2d_forward(x, w, bias, p, y);
      cpu::unary(UnaryOp::kRelu, y, y);
      return;
    }
    cpu::conv2d_forward(x, w, bias, p, y, activation);
  }
  void conv2d_backward_data(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                            const TensorView& dx) override {
    cpu::conv2d_backward_data(dy, w, p, dx);
  }
  void conv2d_backward_weights(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                               const TensorView& dw, const TensorView* dbias) override {
    cpu::conv2d_backward_weights(x, dy, p, dw, dbias);
  }
  int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p,
                                 const TensorView& y) override {
    return cpu::pool2d_workspace_bytes(x, p, y);
  }
  void pool2d_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                      void* workspace) override {
    cpu::pool2d_forward(x, p, y, workspace);
  }
  void pool2d_backward(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                       const TensorView& /*x: oneDNN's workspace holds the argmax*/,
                       const TensorView& dx) override {
    cpu::pool2d_backward(dy, p, workspace, dx);
  }
  void pool2d_backward_activation(const TensorView& dy, const Pool2dParams& p,
                                  const void* workspace, const TensorView& x,
                                  PostActivation activation, const TensorView& dx) override {
    if (activation == PostActivation::kRelu &&
        cpu::pool2d_backward_relu(dy, p, workspace, x, dx)) {
      return;
    }
    Backend::pool2d_backward_activation(dy, p, workspace, x, activation, dx);
  }
  void softmax_forward(const TensorView& x, bool log, const TensorView& y) override {
    cpu::softmax_forward(x, log, y);
  }
  void softmax_backward(const TensorView& y, const TensorView& dy, bool log,
                        const TensorView& dx) override {
    cpu::softmax_backward(y, dy, log, dx);
  }
  void batch_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          const TensorView& mean, const TensorView& var, double epsilon,
                          bool training, const TensorView& y) override {
    cpu::batch_norm_forward(x, gamma, beta, mean, var, epsilon, training, y);
  }
  void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    cpu::batch_norm_backward(x, dy, gamma, mean, var, epsilon, dx, dgamma, dbeta);
  }
  void layer_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          double epsilon, const TensorView& y, const TensorView& mean,
                          const TensorView& var) override {
    cpu::layer_norm_forward(x, gamma, beta, epsilon, y, mean, var);
  }
  void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    cpu::layer_norm_backward(x, dy, gamma, mean, var, epsilon, dx, dgamma, dbeta);
  }
  void optimizer_update(const OptimizerUpdate& u, const TensorView& param, const TensorView& grad,
                        const TensorView& slot0, const TensorView& slot1,
                        const TensorView& slot2) override {
    cpu::optimizer_update(u, param, grad, slot0, slot1, slot2);
  }
  void any_nonfinite(const std::vector<TensorView>& tensors, const TensorView& flag) override {
    cpu::any_nonfinite(tensors, flag);
  }
  void copy_from_host(const void* host, const TensorView& dst) override {
    std::memcpy(dst.data, host, size_t(dst.numel()) * dtype_size(dst.dtype));
  }
  void copy_to_host(const TensorView& src, void* host) override {
    std::memcpy(host, src.data, size_t(src.numel()) * dtype_size(src.dtype));
  }
  void synchronize() override {}
};

}  // namespace

Backend& cpu_backend() {
  static CpuBackend backend;
  cpu::follow_intra_op_threads();  // every op on the CPU asks for its backend here
  return backend;
}

}  // namespace gpuaccel
