// A test decorator of the CPU backend that counts the calls that would stall a GPU step:
// device-to-host copies and synchronizations. Installed with ScopedCpuBackendInterposer, it sees
// every call the ops make on the CPU, so a test can prove a training step reads nothing back,
// or that an activation ran fused into its convolution or matmul rather than as its own op.
#pragma once

#include <cstdint>

#include "backends/backend_interposer.h"
#include "backends/forwarding_backend.h"

namespace gpuaccel::test {

class CountingBackend : public ForwardingBackend {
 public:
  CountingBackend() : ForwardingBackend(cpu_backend()) {}
  void copy_to_host(const TensorView& src, void* host) override {
    ++copies_to_host;
    ForwardingBackend::copy_to_host(src, host);
  }
  void synchronize() override {
    ++synchronizes;
    ForwardingBackend::synchronize();
  }
  // Which element-wise ops a step runs on their own, and which run fused into a product.
  void unary(UnaryOp op, const TensorView& x, const TensorView& y) override {
    ++unary_calls[static_cast<int>(op)];
    ForwardingBackend::unary(op, x, y);
  }
  void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y, const TensorView& dy,
                      const TensorView& dx) override {
    ++unary_backward_calls[static_cast<int>(op)];
    ForwardingBackend::unary_backward(op, x, y, dy, dx);
  }
  void conv2d_forward_activation(const TensorView& x, const TensorView& w, const TensorView* bias,
                                 const Conv2dParams& p, PostActivation activation,
                                 const TensorView& y) override {
    ++fused_conv2d_calls;
    ForwardingBackend::conv2d_forward_activation(x, w, bias, p, activation, y);
  }
  void matmul_activation(const TensorView& a, const TensorView& b, const TensorView* bias,
                         PostActivation activation, const TensorView& out) override {
    ++fused_matmul_calls;
    ForwardingBackend::matmul_activation(a, b, bias, activation, out);
  }
  int64_t copies_to_host = 0;
  int64_t synchronizes = 0;
  int64_t unary_calls[32] = {};           // by UnaryOp
  int64_t unary_backward_calls[32] = {};  // by UnaryOp
  int64_t fused_conv2d_calls = 0;
  int64_t fused_matmul_calls = 0;
};

}  // namespace gpuaccel::test
