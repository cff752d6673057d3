// The CPU backend: the Backend interface over the cpu:: kernels (element-wise loops and oneDNN).
// Every kernel and query of the op list (backends/backend_ops.def) runs the cpu:: function of
// its name and parameters; the composed ops are fused here where oneDNN can.
#include <cstring>

#include "backends/backend.h"
#include "backends/cpu/cpu_threads.h"
#include "backends/cpu/elementwise.h"
#include "backends/cpu/float64_matmul.h"
#include "backends/cpu/fused_relu_guard.h"
#include "backends/cpu/onednn_ops.h"
#include "backends/cpu/nonfinite_check.h"
#include "backends/cpu/optimizer_update.h"
#include "backends/cpu/row_gather.h"
#include "backends/cpu/small_matmul.h"
#include "backends/cpu/sort.h"
#include "tensor/tensor_view.h"

namespace gpuaccel {

namespace cpu {
namespace {

// The CPU's matmul: a product too small to repay oneDNN's call runs in small_matmul's loop;
// float64, which oneDNN lacks on the CPU, in float64_matmul's.
void matmul(const TensorView& a, const TensorView& b, const TensorView* bias, const TensorView& out) {
  if (out.dtype == DType::kFloat64) {
    float64_matmul(a, b, bias, out);
    return;
  }
  if (out.numel() > 0 && small_matmul_applies(a, b, out)) {
    small_matmul(a, b, bias, out);
    return;
  }
  onednn_matmul(a, b, bias, out);
}

}  // namespace
}  // namespace cpu

namespace {

class CpuBackend final : public Backend {
 public:
  const char* name() const override { return "cpu"; }

#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) \
  void NAME PARAMS override { cpu::NAME ARGS; }
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS) \
  TYPE NAME PARAMS override { return cpu::NAME ARGS; }
#define GPUACCEL_BACKEND_COMPOSED(NAME, PARAMS, ARGS, TRACE)  // below
#include "backends/backend_ops.def"

  void matmul_activation(const TensorView& a, const TensorView& b, const TensorView* bias,
                         PostActivation activation, const TensorView& out) override {
    // float64 has no oneDNN kernel; a product this small costs less than fusing saves; operands
    // that could make a NaN output need the separate relu, which keeps it (fused_relu_guard.h).
    if (out.dtype == DType::kFloat64 || (out.numel() > 0 && cpu::small_matmul_applies(a, b, out)) ||
        (activation == PostActivation::kRelu &&
         !cpu::fused_relu_is_exact(a, b, bias, a.shape[a.ndim - 1]))) {
      Backend::matmul_activation(a, b, bias, activation, out);
      return;
    }
    cpu::onednn_matmul(a, b, bias, out, activation);
  }
  void conv2d_forward_activation(const TensorView& x, const TensorView& w, const TensorView* bias,
                                 const Conv2dParams& p, PostActivation activation,
                                 const TensorView& y) override {
    // w (KH, KW, C, F): each output sums KH * KW * C products.
    if (activation == PostActivation::kRelu &&
        !cpu::fused_relu_is_exact(x, w, bias, w.shape[0] * w.shape[1] * w.shape[2])) {
      Backend::conv2d_forward_activation(x, w, bias, p, activation, y);
      return;
    }
    cpu::conv2d_forward(x, w, bias, p, y, activation);
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
