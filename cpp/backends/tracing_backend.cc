// The profiler's view of op execution: while a session records, backend_for() hands out this
// decorator around the real backend, so every kernel launch and copy from every op frontend
// (and every direct backend user) becomes one trace scope without touching the frontends.
// When profiling is off, backend_for() pays one relaxed atomic load and never gets here.
#include "backends/tracing_backend.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>

#include "backends/op_names.h"
#include "core/dtype.h"
#include "profiler/profiler.h"

namespace gpuaccel {

namespace {

using profiler::EventKind;
using profiler::TraceScope;

int64_t view_bytes(const TensorView& v) {
  return v.numel() * static_cast<int64_t>(dtype_size(v.dtype));
}

class TracingBackend final : public Backend {
 public:
  // device: -1 for the CPU backend, the physical GPU index otherwise.
  TracingBackend(Backend& inner, int32_t device) : inner_(inner), device_(device) {}
  const char* name() const override { return inner_.name(); }

  // Every op is one scope named by the op list's profiler name; queries are not traced.
#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) \
  void NAME PARAMS override {                                \
    Scope s(*this, TRACE);                                   \
    inner_.NAME ARGS;                                        \
  }
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS) \
  TYPE NAME PARAMS override { return inner_.NAME ARGS; }
#include "backends/backend_ops.def"

  // The device runtime: transfers and waits are traced with their own kinds.
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
