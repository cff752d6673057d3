// The CUDA backend as a Backend: forwards each call to the function table of the dlopen'ed
// CUDA library (core/cuda_backend_abi.h) for one physical GPU, turning its status codes into
// typed errors. One instance per physical device, made on first use.
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "backends/backend.h"
#include "core/cuda_backend_loader.h"
#include "core/errors.h"

namespace gpuaccel {

namespace {

constexpr size_t kErrLen = 1024;

gpuaccel_conv2d_params to_abi(const Conv2dParams& p) {
  return {p.stride_h, p.stride_w, p.dilation_h, p.dilation_w,
          p.pad_top, p.pad_bottom, p.pad_left, p.pad_right};
}

gpuaccel_pool2d_params to_abi(const Pool2dParams& p) {
  return {p.kind == PoolKind::kMax ? GPUACCEL_POOL_MAX : GPUACCEL_POOL_AVERAGE,
          p.window_h, p.window_w, p.stride_h, p.stride_w,
          p.pad_top, p.pad_bottom, p.pad_left, p.pad_right};
}

class CudaTableBackend final : public Backend {
 public:
  CudaTableBackend(const gpuaccel_cuda_backend& table, int ordinal) : t_(table), ordinal_(ordinal) {}
  const char* name() const override { return "cuda"; }

  void unary(UnaryOp op, const TensorView& x, const TensorView& y) override {
    call("unary", [&](char* e) { return t_.unary(ordinal_, op, &x, &y, e, kErrLen); });
  }
  void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y, const TensorView& dy,
                      const TensorView& dx) override {
    call("unary_backward", [&](char* e) { return t_.unary_backward(ordinal_, op, &x, &y, &dy, &dx, e, kErrLen); });
  }
  void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) override {
    call("binary", [&](char* e) { return t_.binary(ordinal_, op, &a, &b, &out, e, kErrLen); });
  }
  void copy(const TensorView& src, const TensorView& dst) override {
    call("copy", [&](char* e) { return t_.copy(ordinal_, &src, &dst, e, kErrLen); });
  }
  void fill(const TensorView& dst, double value) override {
    call("fill", [&](char* e) { return t_.fill(ordinal_, &dst, value, e, kErrLen); });
  }
  void arange(const TensorView& dst, double start, double step) override {
    call("arange", [&](char* e) { return t_.arange(ordinal_, &dst, start, step, e, kErrLen); });
  }
  void random(RandomDistribution d, uint64_t seed, uint64_t offset, const TensorView& dst) override {
    call("random", [&](char* e) { return t_.random(ordinal_, d, seed, offset, &dst, e, kErrLen); });
  }
  void reduce(ReduceOp op, const TensorView& x, uint32_t axes, const TensorView& out) override {
    call("reduce", [&](char* e) { return t_.reduce(ordinal_, op, &x, axes, &out, e, kErrLen); });
  }
  void dropout(const TensorView& x, double rate, uint64_t seed, uint64_t offset,
               const TensorView& y, const TensorView& mask) override {
    call("dropout", [&](char* e) { return t_.dropout(ordinal_, &x, rate, seed, offset, &y, &mask, e, kErrLen); });
  }
  void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
              const TensorView& out) override {
    call("matmul", [&](char* e) { return t_.matmul(ordinal_, &a, &b, bias, &out, e, kErrLen); });
  }
  void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                      const Conv2dParams& p, const TensorView& y) override {
    const auto params = to_abi(p);
    call("conv2d", [&](char* e) { return t_.conv2d_forward(ordinal_, &x, &w, bias, &params, &y, e, kErrLen); });
  }
  void conv2d_backward_data(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                            const TensorView& dx) override {
    const auto params = to_abi(p);
    call("conv2d_backward_data", [&](char* e) {
      return t_.conv2d_backward_data(ordinal_, &dy, &w, &params, &dx, e, kErrLen);
    });
  }
  void conv2d_backward_weights(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                               const TensorView& dw, const TensorView* dbias) override {
    const auto params = to_abi(p);
    call("conv2d_backward_weights", [&](char* e) {
      return t_.conv2d_backward_weights(ordinal_, &x, &dy, &params, &dw, dbias, e, kErrLen);
    });
  }
  int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p,
                                 const TensorView& y) override {
    const auto params = to_abi(p);
    int64_t bytes = 0;
    call("pool2d", [&](char* e) { return t_.pool2d_workspace_bytes(ordinal_, &x, &params, &y, &bytes, e, kErrLen); });
    return bytes;
  }
  void pool2d_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                      void* workspace) override {
    const auto params = to_abi(p);
    call("pool2d", [&](char* e) { return t_.pool2d_forward(ordinal_, &x, &params, &y, workspace, e, kErrLen); });
  }
  void pool2d_backward(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                       const TensorView& dx) override {
    const auto params = to_abi(p);
    call("pool2d_backward", [&](char* e) {
      return t_.pool2d_backward(ordinal_, &dy, &params, workspace, &dx, e, kErrLen);
    });
  }
  void softmax_forward(const TensorView& x, bool log, const TensorView& y) override {
    call("softmax", [&](char* e) { return t_.softmax_forward(ordinal_, &x, log, &y, e, kErrLen); });
  }
  void softmax_backward(const TensorView& y, const TensorView& dy, bool log,
                        const TensorView& dx) override {
    call("softmax_backward", [&](char* e) { return t_.softmax_backward(ordinal_, &y, &dy, log, &dx, e, kErrLen); });
  }
  void batch_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          const TensorView& mean, const TensorView& var, double epsilon,
                          bool training, const TensorView& y) override {
    call("batch_norm", [&](char* e) {
      return t_.batch_norm_forward(ordinal_, &x, &gamma, &beta, &mean, &var, epsilon, training, &y, e, kErrLen);
    });
  }
  void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    call("batch_norm_backward", [&](char* e) {
      return t_.batch_norm_backward(ordinal_, &x, &dy, &gamma, &mean, &var, epsilon, &dx, &dgamma, &dbeta, e, kErrLen);
    });
  }
  void layer_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          double epsilon, const TensorView& y, const TensorView& mean,
                          const TensorView& var) override {
    call("layer_norm", [&](char* e) {
      return t_.layer_norm_forward(ordinal_, &x, &gamma, &beta, epsilon, &y, &mean, &var, e, kErrLen);
    });
  }
  void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    call("layer_norm_backward", [&](char* e) {
      return t_.layer_norm_backward(ordinal_, &x, &dy, &gamma, &mean, &var, epsilon, &dx, &dgamma, &dbeta, e, kErrLen);
    });
  }
  void optimizer_update(const OptimizerUpdate& u, const TensorView& param, const TensorView& grad,
                        const TensorView& slot0, const TensorView& slot1,
                        const TensorView& slot2) override {
    call("optimizer_update", [&](char* e) {
      return t_.optimizer_update(ordinal_, &u, &param, &grad, &slot0, &slot1, &slot2, e, kErrLen);
    });
  }
  void copy_from_host(const void* host, const TensorView& dst) override {
    const size_t bytes = size_t(dst.numel()) * dtype_size(dst.dtype);
    call("copy_to_device", [&](char* e) { return t_.copy_to_device(ordinal_, dst.data, host, bytes, e, kErrLen); });
  }
  void copy_to_host(const TensorView& src, void* host) override {
    const size_t bytes = size_t(src.numel()) * dtype_size(src.dtype);
    call("copy_to_host", [&](char* e) { return t_.copy_to_host(ordinal_, host, src.data, bytes, e, kErrLen); });
  }
  void synchronize() override {
    call("synchronize", [&](char* e) { return t_.synchronize(ordinal_, e, kErrLen); });
  }

 private:
  template <typename F>
  void call(const char* op, F&& f) {
    char err[kErrLen] = {0};
    const int status = f(err);
    if (status == GPUACCEL_CUDA_OK) return;
    const ErrorCode code = status == GPUACCEL_CUDA_OUT_OF_MEMORY   ? ErrorCode::kResourceExhausted
                           : status == GPUACCEL_CUDA_UNIMPLEMENTED ? ErrorCode::kUnimplemented
                           : status == GPUACCEL_CUDA_INVALID_ARGUMENT ? ErrorCode::kInvalidArgument
                                                                      : ErrorCode::kInternal;
    throw_error(code, op, err);
  }

  const gpuaccel_cuda_backend& t_;
  int ordinal_;
};

}  // namespace

Backend* cuda_backend_ops(int ordinal) {
  const gpuaccel_cuda_backend* table = cuda_backend();
  if (table == nullptr) return nullptr;
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<CudaTableBackend>> backends;
  std::lock_guard<std::mutex> lock(mutex);
  auto& slot = backends[ordinal];
  if (!slot) slot = std::make_unique<CudaTableBackend>(*table, ordinal);
  return slot.get();
}

}  // namespace gpuaccel
