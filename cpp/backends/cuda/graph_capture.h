// Stream capture of a whole training step into a CUDA graph, for one device's backend
// (docs/gpu_step.md). begin() starts capturing the device's stream (thread-local mode: the data
// pipeline's thread may keep calling CUDA) and routes this thread's allocations on the device to
// a new graph-private arena (memory/capture_arena.h, through BackendServices); end() stops
// both, instantiates the graph and returns it with the arena it keeps; launch() replays it on
// the stream; destroy() frees it and gives the arena back. A call that a capture cannot record
// (a copy to the host, a synchronize) is not made while capturing: the backend reports it with
// refuse() and end() throws naming it, after which the caller runs the step eagerly.
#pragma once

#include <string>

#include "backends/backend_services.h"

namespace gpuaccel::cuda {

class StreamCapture {
 public:
  StreamCapture(int device, BackendServices& services) : device_(device), services_(services) {}

  bool active() const { return active_; }
  void begin();
  void refuse(const char* call);
  void* end();
  void launch(void* graph);
  void destroy(void* graph);

 private:
  const int device_;
  BackendServices& services_;
  bool active_ = false;
  std::string refused_;  // the first call the capture could not record
  void* pending_memory_ = nullptr;  // the arena of the capture under way
};

}  // namespace gpuaccel::cuda
