// The profiler's view of op execution: while a session records, backend_for() hands out this
// decorator around the real backend, so every kernel launch and copy from every op frontend
// (and every direct backend user) becomes one trace scope without touching the frontends.
// When profiling is off, backend_for() pays one relaxed atomic load and never gets here.
#include "backends/tracing_backend.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "core/dtype.h"
#include "profiler/profiler.h"

namespace gpuaccel {

namespace {

using profiler::EventKind;
using profiler::TraceScope;

const char* unary_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg";
    case UnaryOp::kExp: return "exp";
    case UnaryOp::kLog: return "log";
    case UnaryOp::kSqrt: return "sqrt";
    case UnaryOp::kRsqrt: return "rsqrt";
    case UnaryOp::kAbs: return "abs";
    case UnaryOp::kSquare: return "square";
    case UnaryOp::kReciprocal: return "reciprocal";
    case UnaryOp::kRelu: return "relu";
    case UnaryOp::kSigmoid: return "sigmoid";
    case UnaryOp::kTanh: return "tanh";
    case UnaryOp::kGelu: return "gelu";
  }
  return "unary";
}

const char* unary_backward_name(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNeg: return "neg_backward";
    case UnaryOp::kExp: return "exp_backward";
    case UnaryOp::kLog: return "log_backward";
    case UnaryOp::kSqrt: return "sqrt_backward";
    case UnaryOp::kRsqrt: return "rsqrt_backward";
    case UnaryOp::kAbs: return "abs_backward";
    case UnaryOp::kSquare: return "square_backward";
    case UnaryOp::kReciprocal: return "reciprocal_backward";
    case UnaryOp::kRelu: return "relu_backward";
    case UnaryOp::kSigmoid: return "sigmoid_backward";
    case UnaryOp::kTanh: return "tanh_backward";
    case UnaryOp::kGelu: return "gelu_backward";
  }
  return "unary_backward";
}

const char* binary_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::kAdd: return "add";
    case BinaryOp::kSub: return "sub";
    case BinaryOp::kMul: return "mul";
    case BinaryOp::kDiv: return "div";
    case BinaryOp::kPow: return "pow";
    case BinaryOp::kMaximum: return "maximum";
    case BinaryOp::kMinimum: return "minimum";
    case BinaryOp::kEqual: return "equal";
    case BinaryOp::kGreater: return "greater";
    case BinaryOp::kLess: return "less";
  }
  return "binary";
}

const char* reduce_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return "reduce_sum";
    case ReduceOp::kMean: return "reduce_mean";
    case ReduceOp::kMax: return "reduce_max";
    case ReduceOp::kMin: return "reduce_min";
    case ReduceOp::kArgMax: return "argmax";
    case ReduceOp::kArgMin: return "argmin";
  }
  return "reduce";
}

int64_t view_bytes(const TensorView& v) {
  return v.numel() * static_cast<int64_t>(dtype_size(v.dtype));
}

class TracingBackend final : public Backend {
 public:
  // device: -1 for the CPU backend, the physical GPU index otherwise.
  TracingBackend(Backend& inner, int32_t device) : inner_(inner), device_(device) {}
  const char* name() const override { return inner_.name(); }

  void unary(UnaryOp op, const TensorView& x, const TensorView& y) override {
    Scope s(*this, unary_name(op));
    inner_.unary(op, x, y);
  }
  void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y, const TensorView& dy,
                      const TensorView& dx) override {
    Scope s(*this, unary_backward_name(op));
    inner_.unary_backward(op, x, y, dy, dx);
  }
  void binary(BinaryOp op, const TensorView& a, const TensorView& b, const TensorView& out) override {
    Scope s(*this, binary_name(op));
    inner_.binary(op, a, b, out);
  }
  void copy(const TensorView& src, const TensorView& dst) override {
    Scope s(*this, "copy");
    inner_.copy(src, dst);
  }
  void fill(const TensorView& dst, double value) override {
    Scope s(*this, "fill");
    inner_.fill(dst, value);
  }
  void arange(const TensorView& dst, double start, double step) override {
    Scope s(*this, "arange");
    inner_.arange(dst, start, step);
  }
  void random(RandomDistribution distribution, uint64_t seed, uint64_t offset,
              const TensorView& dst) override {
    Scope s(*this, distribution == RandomDistribution::kNormal ? "random_normal" : "random_uniform");
    inner_.random(distribution, seed, offset, dst);
  }
  void reduce(ReduceOp op, const TensorView& x, uint32_t axes_mask, const TensorView& out) override {
    Scope s(*this, reduce_name(op));
    inner_.reduce(op, x, axes_mask, out);
  }
  void dropout(const TensorView& x, double rate, uint64_t seed, uint64_t offset,
               const TensorView& y, const TensorView& mask) override {
    Scope s(*this, "dropout");
    inner_.dropout(x, rate, seed, offset, y, mask);
  }
  void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
              const TensorView& out) override {
    Scope s(*this, "matmul");
    inner_.matmul(a, b, bias, out);
  }
  void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                      const Conv2dParams& p, const TensorView& y) override {
    Scope s(*this, "conv2d_forward");
    inner_.conv2d_forward(x, w, bias, p, y);
  }
  void conv2d_forward_activation(const TensorView& x, const TensorView& w, const TensorView* bias,
                                 const Conv2dParams& p, PostActivation activation,
                                 const TensorView& y) override {
    Scope s(*this, activation == PostActivation::kRelu ? "conv2d_forward+relu" : "conv2d_forward");
    inner_.conv2d_forward_activation(x, w, bias, p, activation, y);
  }
  void matmul_activation(const TensorView& a, const TensorView& b, const TensorView* bias,
                         PostActivation activation, const TensorView& out) override {
    Scope s(*this, activation == PostActivation::kRelu ? "matmul+relu" : "matmul");
    inner_.matmul_activation(a, b, bias, activation, out);
  }
  void conv2d_backward_data(const TensorView& dy, const TensorView& w, const Conv2dParams& p,
                            const TensorView& dx) override {
    Scope s(*this, "conv2d_backward_data");
    inner_.conv2d_backward_data(dy, w, p, dx);
  }
  void conv2d_backward_weights(const TensorView& x, const TensorView& dy, const Conv2dParams& p,
                               const TensorView& dw, const TensorView* dbias) override {
    Scope s(*this, "conv2d_backward_weights");
    inner_.conv2d_backward_weights(x, dy, p, dw, dbias);
  }
  int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p,
                                 const TensorView& y) override {
    return inner_.pool2d_workspace_bytes(x, p, y);  // a query, not an op
  }
  void pool2d_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                      void* workspace) override {
    Scope s(*this, p.kind == PoolKind::kMax ? "max_pool2d_forward" : "avg_pool2d_forward");
    inner_.pool2d_forward(x, p, y, workspace);
  }
  void pool2d_backward(const TensorView& dy, const Pool2dParams& p, const void* workspace,
                       const TensorView& x, const TensorView& dx) override {
    Scope s(*this, p.kind == PoolKind::kMax ? "max_pool2d_backward" : "avg_pool2d_backward");
    inner_.pool2d_backward(dy, p, workspace, x, dx);
  }
  void pool2d_backward_activation(const TensorView& dy, const Pool2dParams& p,
                                  const void* workspace, const TensorView& x,
                                  PostActivation activation, const TensorView& dx) override {
    const bool relu = activation == PostActivation::kRelu;
    Scope s(*this, p.kind == PoolKind::kMax ? (relu ? "max_pool2d_backward+relu" : "max_pool2d_backward")
                                            : (relu ? "avg_pool2d_backward+relu" : "avg_pool2d_backward"));
    inner_.pool2d_backward_activation(dy, p, workspace, x, activation, dx);
  }
  void softmax_forward(const TensorView& x, bool log, const TensorView& y) override {
    Scope s(*this, log ? "log_softmax_forward" : "softmax_forward");
    inner_.softmax_forward(x, log, y);
  }
  void softmax_backward(const TensorView& y, const TensorView& dy, bool log,
                        const TensorView& dx) override {
    Scope s(*this, log ? "log_softmax_backward" : "softmax_backward");
    inner_.softmax_backward(y, dy, log, dx);
  }
  void batch_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          const TensorView& mean, const TensorView& var, double epsilon,
                          bool training, const TensorView& y) override {
    Scope s(*this, "batch_norm_forward");
    inner_.batch_norm_forward(x, gamma, beta, mean, var, epsilon, training, y);
  }
  void batch_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    Scope s(*this, "batch_norm_backward");
    inner_.batch_norm_backward(x, dy, gamma, mean, var, epsilon, dx, dgamma, dbeta);
  }
  void layer_norm_forward(const TensorView& x, const TensorView& gamma, const TensorView& beta,
                          double epsilon, const TensorView& y, const TensorView& mean,
                          const TensorView& var) override {
    Scope s(*this, "layer_norm_forward");
    inner_.layer_norm_forward(x, gamma, beta, epsilon, y, mean, var);
  }
  void layer_norm_backward(const TensorView& x, const TensorView& dy, const TensorView& gamma,
                           const TensorView& mean, const TensorView& var, double epsilon,
                           const TensorView& dx, const TensorView& dgamma,
                           const TensorView& dbeta) override {
    Scope s(*this, "layer_norm_backward");
    inner_.layer_norm_backward(x, dy, gamma, mean, var, epsilon, dx, dgamma, dbeta);
  }
  void optimizer_update(const OptimizerUpdate& u, const TensorView& param, const TensorView& grad,
                        const TensorView& slot0, const TensorView& slot1,
                        const TensorView& slot2) override {
    Scope s(*this, "optimizer_update_kernel");
    inner_.optimizer_update(u, param, grad, slot0, slot1, slot2);
  }
  void any_nonfinite(const std::vector<TensorView>& tensors, const TensorView& flag) override {
    Scope s(*this, "any_nonfinite");
    inner_.any_nonfinite(tensors, flag);
  }
  void copy_from_host(const void* host, const TensorView& dst) override {
    const bool gpu = device_ >= 0;
    Scope s(*this, gpu ? "copy_host_to_device" : "copy_host_to_host",
            gpu ? EventKind::kCopyHostToDevice : EventKind::kOp);
    if (s.recording()) s.set_value(view_bytes(dst));
    inner_.copy_from_host(host, dst);
  }
  void copy_to_host(const TensorView& src, void* host) override {
    const bool gpu = device_ >= 0;
    Scope s(*this, gpu ? "copy_device_to_host" : "copy_host_to_host",
            gpu ? EventKind::kCopyDeviceToHost : EventKind::kOp);
    if (s.recording()) s.set_value(view_bytes(src));
    inner_.copy_to_host(src, host);
  }
  void synchronize() override {
    Scope s(*this, "synchronize", EventKind::kSynchronize);
    inner_.synchronize();
  }
  // Events and stream waits are bookkeeping, not launches: forwarded untraced. An upload on
  // another stream is traced as a copy.
  EventHandle create_event() override { return inner_.create_event(); }
  void destroy_event(EventHandle event) override { inner_.destroy_event(event); }
  void record_event(EventHandle event, Stream stream) override { inner_.record_event(event, stream); }
  void stream_wait_event(Stream waiter, EventHandle event) override {
    inner_.stream_wait_event(waiter, event);
  }
  void host_wait_event(EventHandle event) override {
    Scope s(*this, "host_wait_event", EventKind::kSynchronize);
    inner_.host_wait_event(event);
  }
  bool event_completed(EventHandle event) override { return inner_.event_completed(event); }
  void copy_from_host_on(Stream stream, const void* host, const TensorView& dst) override {
    Scope s(*this, "copy_host_to_device", EventKind::kCopyHostToDevice);
    if (s.recording()) s.set_value(view_bytes(dst));
    inner_.copy_from_host_on(stream, host, dst);
  }

 private:
  // One host event per backend call, on the backend's device, with a correlation id on GPUs
  // (the CUDA side tags its device-plane interval with the same id).
  struct Scope : TraceScope {
    Scope(const TracingBackend& b, const char* name, EventKind kind = EventKind::kOp)
        : TraceScope(kind, name) {
      if (!recording()) return;
      set_device(b.device_);
      if (b.device_ >= 0) {
        const int64_t id = profiler::next_correlation_id();
        set_correlation_id(id);
        previous_correlation_ = profiler::exchange_current_correlation_id(id);
        correlated_ = true;
      }
    }
    ~Scope() {
      if (correlated_) profiler::exchange_current_correlation_id(previous_correlation_);
    }
    int64_t previous_correlation_ = 0;
    bool correlated_ = false;
  };

  Backend& inner_;
  const int32_t device_;
};

constexpr int kMaxSlots = 65;  // the CPU and up to 64 GPUs
std::array<std::atomic<Backend*>, kMaxSlots> g_slots{};
std::mutex g_slots_mutex;

}  // namespace

Backend& tracing_backend(Backend& inner, int32_t device) {
  const int slot = device + 1;
  if (slot < 0 || slot >= kMaxSlots) return inner;
  Backend* b = g_slots[slot].load(std::memory_order_acquire);
  if (b != nullptr) return *b;
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  b = g_slots[slot].load(std::memory_order_relaxed);
  if (b == nullptr) {
    b = new TracingBackend(inner, device);  // lives for the process, like the backends
    g_slots[slot].store(b, std::memory_order_release);
  }
  return *b;
}

std::unique_ptr<Backend> make_tracing_backend(Backend& inner, int32_t device) {
  return std::make_unique<TracingBackend>(inner, device);
}

}  // namespace gpuaccel
