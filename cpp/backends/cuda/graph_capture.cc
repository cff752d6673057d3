// StreamCapture (graph_capture.h): cudaStreamBeginCapture / EndCapture, instantiate, launch.
#include "backends/cuda/graph_capture.h"

#include <cuda_runtime_api.h>

#include <stdexcept>

#include "backends/cuda/context.h"
#include "backends/cuda/cuda_check.h"

namespace gpuaccel::cuda {

namespace {

// One captured step: what cudaGraphLaunch replays, and the arena its addresses live in.
struct CapturedGraph {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  void* memory = nullptr;  // BackendServices::begin_capture_memory's handle
};

}  // namespace

void StreamCapture::begin() {
  void* memory = nullptr;
  try {
    owner_.begin([&] {
      const cudaStream_t compute = device_stream(device_);
      if (capture_began_ == nullptr) {
        GA_CUDA_CHECK(cudaEventCreateWithFlags(&capture_began_, cudaEventDisableTiming));
        GA_CUDA_CHECK(cudaEventCreateWithFlags(&beside_done_, cudaEventDisableTiming));
      }
      // What the side stream waits for before another thread's op runs beside the capture.
      GA_CUDA_CHECK(cudaEventRecord(capture_began_, compute));
      side_used_.store(false);  // here: other threads' ops may run beside as soon as this returns
      memory = services_.begin_capture_memory();
      try {
        GA_CUDA_CHECK(cudaStreamBeginCapture(compute, cudaStreamCaptureModeThreadLocal));
      } catch (...) {
        services_.end_capture_memory();
        services_.release_capture_memory(memory);
        throw;
      }
    });
  } catch (const std::logic_error& e) {
    throw BackendError(CudaStatus::kInvalidArgument, std::string("begin_capture: ") + e.what());
  }
  refused_.clear();
  pending_memory_ = memory;
}

void StreamCapture::run_beside(const std::function<void()>& body) {
  const cudaStream_t side = capture_side_stream(device_);
  GA_CUDA_CHECK(cudaStreamWaitEvent(side, capture_began_, 0));
  side_used_.store(true);
  const ComputeStreamRoute route(device_, side);
  body();
}

void StreamCapture::refuse(const char* call) {
  if (refused_.empty()) refused_ = call;
}

void* StreamCapture::end() {
  GA_CUDA_REQUIRE(owner_.captures_here(), "end_capture: this thread has no capture under way on this device");
  auto* captured = new CapturedGraph;
  captured->memory = pending_memory_;
  pending_memory_ = nullptr;
  cudaError_t ended = cudaSuccess;
  cudaError_t joined = cudaSuccess;
  owner_.end([&] {
    services_.end_capture_memory();
    const cudaStream_t compute = device_stream(device_);
    ended = cudaStreamEndCapture(compute, &captured->graph);
    // Whatever other threads queued beside the capture comes before the compute stream's next work.
    if (side_used_.exchange(false)) {
      joined = cudaEventRecord(beside_done_, capture_side_stream(device_));
      if (joined == cudaSuccess) joined = cudaStreamWaitEvent(compute, beside_done_, 0);
    }
  });
  try {
    GA_CUDA_CHECK(joined);
    if (!refused_.empty()) {
      throw BackendError(CudaStatus::kUnimplemented,
                         refused_ + " cannot be captured into a CUDA graph (the step waits for the "
                                    "device or reads its memory)");
    }
    GA_CUDA_CHECK(ended);  // cudaErrorStreamCaptureInvalidated and the like, named
    GA_CUDA_REQUIRE(captured->graph != nullptr, "cudaStreamEndCapture returned no graph");
    // AutoFreeOnLaunch: a library that allocates with cudaMallocAsync inside the step (cuBLAS
    // 12.2+ may, for its own workspace) leaves an allocation node without a free in the graph,
    // and relaunching such a graph fails unless this flag frees it first. Without such nodes the
    // flag changes nothing.
    GA_CUDA_CHECK(cudaGraphInstantiateWithFlags(&captured->exec, captured->graph,
                                                cudaGraphInstantiateFlagAutoFreeOnLaunch));
  } catch (...) {
    try {
      destroy(captured);
    } catch (...) {
      // The capture's own failure is the one to report.
    }
    throw;
  }
  return captured;
}

void StreamCapture::launch(void* graph) {
  GA_CUDA_REQUIRE(graph != nullptr, "replay: null graph");
  GA_CUDA_CHECK(cudaGraphLaunch(static_cast<CapturedGraph*>(graph)->exec, device_stream(device_)));
}

// The arena goes back to the device's pool at once: pool memory is reused in stream order, so
// whatever gets it next is queued after the graph's last launch.
void StreamCapture::destroy(void* graph) {
  auto* captured = static_cast<CapturedGraph*>(graph);
  if (captured == nullptr) return;
  const cudaError_t exec_freed = captured->exec != nullptr ? cudaGraphExecDestroy(captured->exec) : cudaSuccess;
  const cudaError_t graph_freed = captured->graph != nullptr ? cudaGraphDestroy(captured->graph) : cudaSuccess;
  if (captured->memory != nullptr) services_.release_capture_memory(captured->memory);
  delete captured;
  GA_CUDA_CHECK(exec_freed);
  GA_CUDA_CHECK(graph_freed);
}

}  // namespace gpuaccel::cuda
