// The backend interface: what op frontends (cpp/ops) call to run a kernel on a device. The CPU
// backend forwards to cpu::* (OpenMP loops over cpp/kernels functors, oneDNN primitives); the
// CUDA backend is made by the dlopen'ed CUDA library (core/cuda_loader/cuda_library.h). Frontends
// never include a backend's own headers, so adding a device touches only this folder.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/conv_params.h"
#include "backends/op_kinds.h"
#include "backends/rnn_params.h"
#include "core/device_registry.h"
#include "kernels/optimizer_functors.h"  // OptimizerUpdate (plain data)
#include "tensor/tensor_view.h"

// For op-list includers that pass an op's arguments after their own: (x, y) -> x, y.
#define GPUACCEL_UNPARENTHESIZE(...) __VA_ARGS__

namespace gpuaccel {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // The ops, declared once in backends/backend_ops.def. A kernel or query is pure; a composed
  // op runs its default composition (below the class) unless a backend fuses it.
#define GPUACCEL_BACKEND_KERNEL(NAME, PARAMS, ARGS, TRACE) virtual void NAME PARAMS = 0;
#define GPUACCEL_BACKEND_COMPOSED(NAME, PARAMS, ARGS, TRACE) virtual void NAME PARAMS;
#define GPUACCEL_BACKEND_QUERY(TYPE, NAME, PARAMS, ARGS) virtual TYPE NAME PARAMS = 0;
#include "backends/backend_ops.def"

  // Host <-> device transfers of contiguous views (the CPU backend copies memory). On a GPU,
  // copy_from_host is queued on the device's stream: from pageable memory it returns once the
  // data is staged, from pinned memory (the pinned host pool) before the copy ran, so such a
  // buffer must stay unchanged until a later copy_to_host or synchronize. copy_to_host returns
  // when the data is in `host`.
  virtual void copy_from_host(const void* host, const TensorView& dst) = 0;
  virtual void copy_to_host(const TensorView& src, void* host) = 0;
  virtual void synchronize() = 0;

  // Streams and events (docs/gpu.md, "Streams"). A device queues work on streams named by their
  // role: every call above goes to kCompute; kCopy carries batch uploads beside it, so the copy
  // of the next batch runs while the current step computes. (NCCL communicators keep a stream
  // each, cuda/nccl_communicator.cc: an aborted one takes its stream with it.) An event marks a
  // point in one stream's queue: another stream waits for it without the host (stream_wait_event), or the host does (host_wait_event).
  // Events are made once and recorded many times; a wait on an event never recorded returns
  // at once. The CPU backend runs every call to completion in order, so these defaults are
  // its whole implementation: no events, nothing to wait for.
  enum class Stream : int { kCompute = 0, kCopy = 1 };
  using EventHandle = void*;
  virtual EventHandle create_event() { return nullptr; }
  virtual void destroy_event(EventHandle) {}
  // Marks the point behind everything queued on `stream` so far.
  virtual void record_event(EventHandle, Stream) {}
  // Work queued on `waiter` after this call runs after the work before `event`'s last record.
  virtual void stream_wait_event(Stream, EventHandle) {}
  virtual void host_wait_event(EventHandle) {}
  virtual bool event_completed(EventHandle) { return true; }
  // copy_from_host queued on `stream`. `host` must be pinned memory (the pinned host pool) that
  // stays unchanged until an event recorded on `stream` after this call has completed.
  virtual void copy_from_host_on(Stream, const void* host, const TensorView& dst) {
    copy_from_host(host, dst);
  }

  // Graph capture of a whole training step (docs/gpu_step.md; train/step_capture_policy.h
  // decides when). Between begin_capture() and end_capture() the backend records its launches
  // instead of running them; end_capture() returns the instantiated graph, replay() launches
  // it (asynchronously, like any launch), destroy_graph() frees it. A call the backend cannot
  // record (a copy to the host, a synchronize, a query that needs the host) makes
  // end_capture() throw, and the caller runs the step eagerly. The defaults say "unsupported"
  // (the CPU backend has nothing to gain: its launches are function calls).
  using GraphHandle = void*;
  virtual bool supports_graph_capture() const { return false; }
  virtual void begin_capture() { throw_capture_unsupported("begin_capture"); }
  virtual GraphHandle end_capture() { throw_capture_unsupported("end_capture"); }
  virtual void replay(GraphHandle) { throw_capture_unsupported("replay"); }
  virtual void destroy_graph(GraphHandle) {}

  // Gives back the device memory the backend keeps between calls (library workspaces), so that
  // the pools of a runtime reset can free their regions; the next call that needs a workspace
  // takes it again from the pool of that time. Called with no op in flight and no graph alive.
  virtual void release_cached_memory() {}

 private:
  // A standard exception, not the core's typed error: the CUDA library compiles these defaults
  // too and links nothing of the core. Callers ask supports_graph_capture() first, so this only
  // reports a caller's mistake.
  [[noreturn]] void throw_capture_unsupported(const char* call) const {
    throw std::logic_error(std::string("[") + call + "] the " + name() +
                           " backend cannot capture graphs");
  }
};

// The composed ops' defaults: the op, then the activation, so that every backend computes the
// same thing whether or not it fuses them.
inline void Backend::matmul_activation(const TensorView& a, const TensorView& b,
                                       const TensorView* bias, PostActivation activation,
                                       const TensorView& out) {
  matmul(a, b, bias, out);
  if (activation == PostActivation::kRelu) unary(UnaryOp::kRelu, out, out);
}
inline void Backend::conv2d_forward_activation(const TensorView& x, const TensorView& w,
                                               const TensorView* bias, const Conv2dParams& p,
                                               PostActivation activation, const TensorView& y) {
  conv2d_forward(x, w, bias, p, y);
  if (activation == PostActivation::kRelu) unary(UnaryOp::kRelu, y, y);
}
inline void Backend::pool2d_backward_activation(const TensorView& dy, const Pool2dParams& p,
                                                const void* workspace, const TensorView& x,
                                                PostActivation activation, const TensorView& dx) {
  pool2d_backward(dy, p, workspace, x, dx);
  if (activation == PostActivation::kRelu) unary_backward(UnaryOp::kRelu, x, x, dx, dx);
}

// The backend that runs ops on `device` (FailedPreconditionError when its library is missing).
Backend& backend_for(const LogicalDevice& device);

}  // namespace gpuaccel
