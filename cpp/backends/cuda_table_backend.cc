// The CUDA backend as a Backend: forwards each call to the function table of the dlopen'ed
// CUDA library (core/cuda_backend_abi.h) for one physical GPU, turning its status codes into
// typed errors. One instance per physical device, made on first use. While a profiler session
// records, each launch is bracketed with a pair of pooled CUDA events on the device's stream;
// at the session's stop the pairs become device-plane intervals (DeviceTimeline below).
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "core/cuda_backend_loader.h"
#include "core/errors.h"
#include "profiler/profiler.h"

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

// What a launch is on the device timeline.
enum class DeviceWork { kNone, kKernel, kCopy };

// The device-plane recorder of one GPU. Launches are bracketed with events from a pool (ABI 4);
// the first bracketed launch of a session aligns the clocks: after a synchronize, one reference
// event is recorded and waited for, and the host clock read right then is the reference's host
// time. At stop every pair is converted with elapsed times from the reference and recorded as a
// kDeviceKernel/kDeviceCopy interval carrying the host op's correlation id. Failures of the
// timing calls never fail an op: the launch just goes untimed.
class DeviceTimeline {
 public:
  DeviceTimeline(const gpuaccel_cuda_backend& table, int ordinal) : t_(table), ordinal_(ordinal) {
    hooks_id_ = profiler::add_session_hooks({nullptr, [this] { flush(); }});
  }
  ~DeviceTimeline() {
    profiler::remove_session_hooks(hooks_id_);
    // Give the pooled events back to the driver (a backend can outlive a session, not the
    // other way round: the hooks are gone, so nothing refills the pool now).
    if (t_.destroy_event == nullptr) return;
    char err[kErr] = {0};
    for (const Pending& p : pending_) {
      t_.destroy_event(p.start, err, kErr);
      t_.destroy_event(p.end, err, kErr);
    }
    for (void* e : free_) t_.destroy_event(e, err, kErr);
    if (reference_ != nullptr) t_.destroy_event(reference_, err, kErr);
  }
  DeviceTimeline(const DeviceTimeline&) = delete;
  DeviceTimeline& operator=(const DeviceTimeline&) = delete;

  // Records the start event of a launch; returns it (null: untimed).
  void* begin() {
    if (!ensure_reference()) return nullptr;
    void* e = acquire();
    if (e != nullptr && !record(e)) {
      release(e);
      return nullptr;
    }
    return e;
  }

  // Gives back the start event of a launch that failed.
  void cancel(void* start) {
    if (start != nullptr) release(start);
  }

  // Records the end event and queues the pair (start from begin(); null is ignored).
  void end(void* start, DeviceWork work, const char* fallback_name, int64_t bytes) {
    if (start == nullptr) return;
    void* e = acquire();
    if (e == nullptr || !record(e)) {
      release(start);
      if (e != nullptr) release(e);
      return;
    }
    const char* name = profiler::current_scope_name();
    Pending p{start, e, name != nullptr ? name : fallback_name,
              work == DeviceWork::kCopy ? profiler::EventKind::kDeviceCopy
                                        : profiler::EventKind::kDeviceKernel,
              profiler::current_correlation_id(), bytes};
    std::lock_guard<std::mutex> lock(mutex_);
    if (pending_.size() >= kMaxPending) {
      free_.push_back(p.start);
      free_.push_back(p.end);
      return;
    }
    pending_.push_back(p);
  }

 private:
  static constexpr size_t kMaxPending = size_t{1} << 20;
  static constexpr size_t kErr = 512;

  struct Pending {
    void* start;
    void* end;
    const char* name;
    profiler::EventKind kind;
    int64_t correlation_id;
    int64_t bytes;
  };

  bool record(void* e) {
    char err[kErr] = {0};
    return t_.record_existing_event(ordinal_, e, err, kErr) == GPUACCEL_CUDA_OK;
  }

  void* acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        void* e = free_.back();
        free_.pop_back();
        return e;
      }
    }
    char err[kErr] = {0};
    void* e = nullptr;
    if (t_.create_event(ordinal_, &e, err, kErr) != GPUACCEL_CUDA_OK) return nullptr;
    return e;
  }

  void release(void* e) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(e);
  }

  // The session's clock reference on this device, made on the first timed launch.
  bool ensure_reference() {
    std::lock_guard<std::mutex> lock(reference_mutex_);
    if (reference_ != nullptr) return true;
    char err[kErr] = {0};
    if (t_.synchronize(ordinal_, err, kErr) != GPUACCEL_CUDA_OK) return false;
    void* ref = acquire();
    if (ref == nullptr) return false;
    float ms = 0;
    if (!record(ref) || t_.elapsed_ms(ref, ref, &ms, err, kErr) != GPUACCEL_CUDA_OK) {
      release(ref);
      return false;
    }
    reference_host_ns_ = profiler::now_ns();  // right after the event synchronize
    reference_ = ref;
    return true;
  }

  // Session stop: converts the queued pairs into device intervals and returns every event to
  // the pool; the next session makes a new reference.
  void flush() {
    std::vector<Pending> pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending.swap(pending_);
    }
    std::lock_guard<std::mutex> ref_lock(reference_mutex_);
    char err[kErr] = {0};
    for (const Pending& p : pending) {
      float start_ms = 0, end_ms = 0;
      if (reference_ != nullptr &&
          t_.elapsed_ms(reference_, p.start, &start_ms, err, kErr) == GPUACCEL_CUDA_OK &&
          t_.elapsed_ms(reference_, p.end, &end_ms, err, kErr) == GPUACCEL_CUDA_OK) {
        profiler::EventArgs args;
        args.device = ordinal_;
        args.stream = 0;  // the device's stream (ABI: every entry runs on it)
        args.correlation_id = p.correlation_id;
        args.value = p.kind == profiler::EventKind::kDeviceCopy ? p.bytes : 0;
        const int64_t start_ns = reference_host_ns_ + static_cast<int64_t>(double(start_ms) * 1e6);
        const int64_t end_ns = reference_host_ns_ + static_cast<int64_t>(double(end_ms) * 1e6);
        profiler::record_device_interval(p.kind, p.name, start_ns, std::max(start_ns, end_ns), args);
      }
      release(p.start);
      release(p.end);
    }
    if (reference_ != nullptr) {
      release(reference_);
      reference_ = nullptr;
    }
  }

  const gpuaccel_cuda_backend& t_;
  const int ordinal_;
  int hooks_id_ = 0;
  std::mutex mutex_;  // free_ and pending_
  std::vector<void*> free_;
  std::vector<Pending> pending_;
  std::mutex reference_mutex_;
  void* reference_ = nullptr;
  int64_t reference_host_ns_ = 0;
};

class CudaTableBackend final : public Backend {
 public:
  CudaTableBackend(const gpuaccel_cuda_backend& table, int ordinal)
      : t_(table), ordinal_(ordinal), timeline_(table, ordinal) {}
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
    call("pool2d", [&](char* e) { return t_.pool2d_workspace_bytes(ordinal_, &x, &params, &y, &bytes, e, kErrLen); },
         DeviceWork::kNone);
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
    call("copy_to_device", [&](char* e) { return t_.copy_to_device(ordinal_, dst.data, host, bytes, e, kErrLen); },
         DeviceWork::kCopy, int64_t(bytes));
  }
  void copy_to_host(const TensorView& src, void* host) override {
    const size_t bytes = size_t(src.numel()) * dtype_size(src.dtype);
    call("copy_to_host", [&](char* e) { return t_.copy_to_host(ordinal_, host, src.data, bytes, e, kErrLen); },
         DeviceWork::kCopy, int64_t(bytes));
  }
  void synchronize() override {
    call("synchronize", [&](char* e) { return t_.synchronize(ordinal_, e, kErrLen); }, DeviceWork::kNone);
  }

 private:
  // Runs one table entry; `work` says whether (and how) the profiler times it on the device.
  template <typename F>
  void call(const char* op, F&& f, DeviceWork work = DeviceWork::kKernel, int64_t bytes = 0) {
    char err[kErrLen] = {0};
    int status;
    if (profiler::enabled() && work != DeviceWork::kNone) {
      void* start = timeline_.begin();
      status = f(err);
      if (status == GPUACCEL_CUDA_OK) {
        timeline_.end(start, work, op, bytes);
      } else {
        timeline_.cancel(start);
      }
    } else {
      status = f(err);
    }
    if (status == GPUACCEL_CUDA_OK) return;
    const ErrorCode code = status == GPUACCEL_CUDA_OUT_OF_MEMORY   ? ErrorCode::kResourceExhausted
                           : status == GPUACCEL_CUDA_UNIMPLEMENTED ? ErrorCode::kUnimplemented
                           : status == GPUACCEL_CUDA_INVALID_ARGUMENT ? ErrorCode::kInvalidArgument
                                                                      : ErrorCode::kInternal;
    throw_error(code, op, err);
  }

  const gpuaccel_cuda_backend& t_;
  int ordinal_;
  DeviceTimeline timeline_;
};

}  // namespace

// The table backend over any table; tests give it a fake table to run the device timeline on
// the CPU.
std::unique_ptr<Backend> make_cuda_table_backend(const gpuaccel_cuda_backend& table, int ordinal) {
  return std::make_unique<CudaTableBackend>(table, ordinal);
}

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
