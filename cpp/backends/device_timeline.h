// The profiler's device plane for one GPU: each launch is bracketed with a pair of CUDA events
// from a pool (created once, recorded again and again on the device's stream), and at the
// session's stop the pairs become kDeviceKernel/kDeviceCopy intervals carrying the host op's
// correlation id. Written against CudaLibrary's event calls, so tests run it on a fake library.
#pragma once

#include <cstdint>
#include <mutex>
#include <vector>

#include "backends/backend_services.h"
#include "core/cuda_library.h"
#include "profiler/profiler.h"

namespace gpuaccel {

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
