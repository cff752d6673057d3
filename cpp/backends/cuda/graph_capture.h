// Stream capture of a whole training step into a CUDA graph, for one device's backend
// (docs/gpu_step.md). begin() starts capturing the device's compute stream (thread-local mode:
// other threads may keep calling CUDA) and routes this thread's allocations on the device to
// a new graph-private arena (memory/capture_arena.h, through BackendServices); end() stops
// both, instantiates the graph and returns it with the arena it keeps; launch() replays it on
// the stream; destroy() frees it and gives the arena back. A call that a capture cannot record
// (a copy to the host, a synchronize) is not made while capturing: the backend reports it with
// refuse() and end() throws naming it, after which the caller runs the step eagerly.
//
// The capture belongs to the thread that began it (backends/cuda/capture_owner.h). Another thread's
// op meanwhile runs through run_beside(): its compute-stream work goes to the device's side
// stream, which first waits for everything queued on the compute stream before the capture
// began; end() makes the compute stream wait for the side stream, so work after the capture
// (the graph's launches included) is ordered after it, as if it had been queued on the compute
// stream in the first place.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <functional>
#include <string>

#include "backends/library/backend_services.h"
#include "backends/cuda/capture_owner.h"

namespace gpuaccel::cuda {

class StreamCapture {
 public:
  StreamCapture(int device, BackendServices& services) : device_(device), services_(services) {}

  // What every op but begin/end holds (CaptureOwner::OpScope).
  CaptureOwner& owner() { return owner_; }
  bool captures_here() const { return owner_.captures_here(); }
  void begin();
  void refuse(const char* call);
  void* end();
  void launch(void* graph);
  void destroy(void* graph);
  // Runs an op of a thread that is not capturing while another thread captures (its
  // OpScope::beside_capture() is true): on the side stream, as described above.
  void run_beside(const std::function<void()>& body);

 private:
  const int device_;
  BackendServices& services_;
  CaptureOwner owner_;
  std::string refused_;  // the first call the capture could not record
  void* pending_memory_ = nullptr;  // the arena of the capture under way
  cudaEvent_t capture_began_ = nullptr;  // recorded on the compute stream just before a capture
  cudaEvent_t beside_done_ = nullptr;    // recorded on the side stream when a capture ends
  std::atomic<bool> side_used_{false};   // an op ran beside the capture under way
};

}  // namespace gpuaccel::cuda
