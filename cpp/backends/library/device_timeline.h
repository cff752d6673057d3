// The profiler's device plane for one GPU: each launch is bracketed with a pair of CUDA events
// from a pool (created once, recorded again and again on the device's stream), and at the
// session's stop the pairs become kDeviceKernel/kDeviceCopy intervals carrying the host op's
// correlation id. Written against CudaLibrary's event calls, so tests run it on a fake library.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "backends/library/backend_services.h"
#include "core/cuda_loader/cuda_library.h"
#include "profiler/profiler.h"

namespace gpuaccel {

// A launch's device interval on the host clock, in nanoseconds.
struct DeviceIntervalNs {
  int64_t start;
  int64_t end;
};
// The interval of a launch that started `offset_ms` after the session's reference event (whose
// host time is `reference_host_ns`) and ran `duration_ms` (cudaEventElapsedTime of its own two
// events). The duration is taken on its own, not as the difference of two offsets: a float
// offset of 1000 s is only exact to 62.5 us, which would swallow a 20 us kernel, while its own
// elapsed time keeps the event resolution (about 0.5 us). A negative duration counts as 0.
DeviceIntervalNs device_interval_ns(int64_t reference_host_ns, float offset_ms, float duration_ms);

class DeviceTimeline {
 public:
  DeviceTimeline(CudaLibrary& library, int ordinal);
  ~DeviceTimeline();
  DeviceTimeline(const DeviceTimeline&) = delete;
  DeviceTimeline& operator=(const DeviceTimeline&) = delete;

  // Records the start event of a launch; returns it (null: untimed).
  void* begin();
  // Gives back the start event of a launch that failed.
  void cancel(void* start);
  // Records the end event and queues the pair (start from begin(); null is ignored).
  void end(void* start, LaunchKind kind, const char* fallback_name, int64_t bytes);

 private:
  struct Pending {
    void* start;
    void* end;
    const char* name;
    profiler::EventKind kind;
    int64_t correlation_id;
    int64_t bytes;
  };

  void* acquire();
  void release(void* e);
  bool ensure_reference();
  void flush();

  CudaLibrary& library_;
  const int ordinal_;
  int hooks_id_ = 0;
  std::mutex mutex_;  // free_ and pending_
  std::vector<void*> free_;
  std::vector<Pending> pending_;
  std::mutex reference_mutex_;
  void* reference_ = nullptr;
  int64_t reference_host_ns_ = 0;
};

}  // namespace gpuaccel
