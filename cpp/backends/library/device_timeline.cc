// The profiler's device timeline (see device_timeline.h). The first bracketed launch of a
// session aligns the clocks: after a synchronize, one reference event is recorded and waited
// for, and the host clock read right then is the reference's host time. At stop every pair is
// placed by its start's elapsed time from the reference and sized by its own elapsed time
// (device_interval_ns). Failures of the timing calls never fail an op: the launch just goes
// untimed.
#include "backends/library/device_timeline.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuaccel {

namespace {
constexpr size_t kMaxPending = size_t{1} << 20;
}

DeviceIntervalNs device_interval_ns(int64_t reference_host_ns, float offset_ms, float duration_ms) {
  const int64_t start = reference_host_ns + std::llround(double(offset_ms) * 1e6);
  return {start, start + std::max<int64_t>(0, std::llround(double(duration_ms) * 1e6))};
}

DeviceTimeline::DeviceTimeline(CudaLibrary& library, int ordinal)
    : library_(library), ordinal_(ordinal) {
  hooks_id_ = profiler::add_session_hooks({nullptr, [this] { flush(); }});
}

DeviceTimeline::~DeviceTimeline() {
  profiler::remove_session_hooks(hooks_id_);
  // Give the pooled events back to the driver (a backend can outlive a session, not the other
  // way round: the hooks are gone, so nothing refills the pool now).
  for (const Pending& p : pending_) {
    library_.destroy_event(p.start);
    library_.destroy_event(p.end);
  }
  for (void* e : free_) library_.destroy_event(e);
  if (reference_ != nullptr) library_.destroy_event(reference_);
}

void* DeviceTimeline::begin() {
  if (!ensure_reference()) return nullptr;
  void* e = acquire();
  if (e != nullptr && !library_.record_event(ordinal_, e)) {
    release(e);
    return nullptr;
  }
  return e;
}

void DeviceTimeline::cancel(void* start) {
  if (start != nullptr) release(start);
}

void DeviceTimeline::end(void* start, LaunchKind kind, const char* fallback_name, int64_t bytes) {
  if (start == nullptr) return;
  void* e = acquire();
  if (e == nullptr || !library_.record_event(ordinal_, e)) {
    release(start);
    if (e != nullptr) release(e);
    return;
  }
  const char* name = profiler::current_scope_name();
  Pending p{start, e, name != nullptr ? name : fallback_name,
            kind == LaunchKind::kCopy ? profiler::EventKind::kDeviceCopy
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

void* DeviceTimeline::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      void* e = free_.back();
      free_.pop_back();
      return e;
    }
  }
  void* e = nullptr;
  if (!library_.create_event(ordinal_, &e)) return nullptr;
  return e;
}

void DeviceTimeline::release(void* e) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(e);
}

// The session's clock reference on this device, made on the first timed launch.
bool DeviceTimeline::ensure_reference() {
  std::lock_guard<std::mutex> lock(reference_mutex_);
  if (reference_ != nullptr) return true;
  std::string error;
  if (library_.synchronize(ordinal_, &error) != CudaStatus::kOk) return false;
  void* ref = acquire();
  if (ref == nullptr) return false;
  float ms = 0;
  if (!library_.record_event(ordinal_, ref) || !library_.elapsed_ms(ref, ref, &ms)) {
    release(ref);
    return false;
  }
  reference_host_ns_ = profiler::now_ns();  // right after the event synchronize
  reference_ = ref;
  return true;
}

// Session stop: converts the queued pairs into device intervals and returns every event to the
// pool; the next session makes a new reference.
void DeviceTimeline::flush() {
  std::vector<Pending> pending;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending.swap(pending_);
  }
  std::lock_guard<std::mutex> ref_lock(reference_mutex_);
  for (const Pending& p : pending) {
    float offset_ms = 0, duration_ms = 0;
    if (reference_ != nullptr && library_.elapsed_ms(reference_, p.start, &offset_ms) &&
        library_.elapsed_ms(p.start, p.end, &duration_ms)) {
      profiler::EventArgs args;
      args.device = ordinal_;
      args.stream = 0;  // the device's stream: every op of the backend runs on it
      args.correlation_id = p.correlation_id;
      args.value = p.kind == profiler::EventKind::kDeviceCopy ? p.bytes : 0;
      const DeviceIntervalNs ns = device_interval_ns(reference_host_ns_, offset_ms, duration_ms);
      profiler::record_device_interval(p.kind, p.name, ns.start, ns.end, args);
    }
    release(p.start);
    release(p.end);
  }
  if (reference_ != nullptr) {
    release(reference_);
    reference_ = nullptr;
  }
}

}  // namespace gpuaccel
