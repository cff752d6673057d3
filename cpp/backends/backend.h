// The backend interface: what op frontends (cpp/ops) call to run a kernel on a device. The CPU
// backend forwards to cpu::* (OpenMP loops over cpp/kernels functors, oneDNN primitives); the
// CUDA backend is made by the dlopen'ed CUDA library (core/cuda_library.h). Frontends never include a
// backend's own headers, so adding a device touches only this folder.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/conv_params.h"
#include "backends/op_kinds.h"
#include "core/device_registry.h"
#include "kernels/optimizer_functors.h"  // OptimizerUpdate (plain data)
#include "tensor/tensor_view.h"

namespace gpuaccel {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // Element-wise, copies and generators (semantics: backends/cpu/elementwise.h).
  virtual void unary(UnaryOp op, const TensorView& x, const TensorView& y) = 0;
  virtual void unary_backward(UnaryOp op, const TensorView& x, const TensorView& y,
                              const TensorView& dy, const TensorView& dx) = 0;
  virtual void binary(BinaryOp op, const TensorView& a, const TensorView& b,
                      const TensorView& out) = 0;
  virtual void copy(const TensorView& src, const TensorView& dst) = 0;
  virtual void fill(const TensorView& dst, double value) = 0;
  virtual void arange(const TensorView& dst, double start, double step) = 0;
  virtual void random(RandomDistribution distribution, uint64_t seed, uint64_t offset,
                      const TensorView& dst) = 0;
  virtual void reduce(ReduceOp op, const TensorView& x, uint32_t axes_mask,
                      const TensorView& out) = 0;
  virtual void dropout(const TensorView& x, double rate, uint64_t seed, uint64_t offset,
                       const TensorView& y, const TensorView& mask) = 0;

  // Dense ops (semantics: backends/cpu/onednn_ops.h).
  virtual void matmul(const TensorView& a, const TensorView& b, const TensorView* bias,
                      const TensorView& out) = 0;
  virtual void conv2d_forward(const TensorView& x, const TensorView& w, const TensorView* bias,
                              const Conv2dParams& p, const TensorView& y) = 0;
  virtual void conv2d_backward_data(const TensorView& dy, const TensorView& w,
                                    const Conv2dParams& p, const TensorView& dx) = 0;
  virtual void conv2d_backward_weights(const TensorView& x, const TensorView& dy,
                                       const Conv2dParams& p, const TensorView& dw,
                                       const TensorView* dbias) = 0;
  // conv2d_forward / matmul followed by `activation` applied to the output in place. A backend
  // that can fuse the activation into the op's own pass (oneDNN's post-ops) overrides these;
  // the defaults run the op and then the activation, so every backend computes the same thing.
  virtual void conv2d_forward_activation(const TensorView& x, const TensorView& w,
                                         const TensorView* bias, const Conv2dParams& p,
                                         PostActivation activation, const TensorView& y) {
    conv2d_forward(x, w, bias, p, y);
    apply_post_activation(activation, y);
  }
  virtual void matmul_activation(const TensorView& a, const TensorView& b, const TensorView* bias,
                                 PostActivation activation, const TensorView& out) {
    matmul(a, b, bias, out);
    apply_post_activation(activation, out);
  }
  virtual int64_t pool2d_workspace_bytes(const TensorView& x, const Pool2dParams& p,
                                         const TensorView& y) = 0;
  virtual void pool2d_forward(const TensorView& x, const Pool2dParams& p, const TensorView& y,
                              void* workspace) = 0;
  // `x` is the forward's input, unchanged since (the frontend keeps it for the backward), so a
  // backend need not copy it into the workspace (cuDNN's max-pooling backward reads x and y).
  virtual void pool2d_backward(const TensorView& dy, const Pool2dParams& p,
                               const void* workspace, const TensorView& x,
                               const TensorView& dx) = 0;
  // The pooling's backward followed by `activation`'s backward at the pooling's input x, the
  // activated output of the op before it (relu: dx * (x > 0)). A backend may do both in one
  // pass; this default runs them one after the other (correct, not fused).
  virtual void pool2d_backward_activation(const TensorView& dy, const Pool2dParams& p,
                                          const void* workspace, const TensorView& x,
                                          PostActivation activation, const TensorView& dx) {
    pool2d_backward(dy, p, workspace, x, dx);
    if (activation == PostActivation::kRelu) unary_backward(UnaryOp::kRelu, x, x, dx, dx);
  }
  virtual void softmax_forward(const TensorView& x, bool log, const TensorView& y) = 0;
  virtual void softmax_backward(const TensorView& y, const TensorView& dy, bool log,
                                const TensorView& dx) = 0;
  virtual void batch_norm_forward(const TensorView& x, const TensorView& gamma,
                                  const TensorView& beta, const TensorView& mean,
                                  const TensorView& var, double epsilon, bool training,
                                  const TensorView& y) = 0;
  virtual void batch_norm_backward(const TensorView& x, const TensorView& dy,
                                   const TensorView& gamma, const TensorView& mean,
                                   const TensorView& var, double epsilon, const TensorView& dx,
                                   const TensorView& dgamma, const TensorView& dbeta) = 0;
  virtual void layer_norm_forward(const TensorView& x, const TensorView& gamma,
                                  const TensorView& beta, double epsilon, const TensorView& y,
                                  const TensorView& mean, const TensorView& var) = 0;
  virtual void layer_norm_backward(const TensorView& x, const TensorView& dy,
                                   const TensorView& gamma, const TensorView& mean,
                                   const TensorView& var, double epsilon, const TensorView& dx,
                                   const TensorView& dgamma, const TensorView& dbeta) = 0;

  // One fused optimizer step over a parameter (semantics: kernels/optimizer_functors.h).
  // param and the used slots are contiguous float32 of one shape; grad is contiguous float32,
  // float16 or bfloat16 of that shape; a slot the configuration does not use is an empty view.
  virtual void optimizer_update(const OptimizerUpdate& u, const TensorView& param,
                                const TensorView& grad, const TensorView& slot0,
                                const TensorView& slot1, const TensorView& slot2) = 0;

  // The finite check of dynamic loss scaling in one pass over all of `tensors` (contiguous
  // float32, float16 or bfloat16 views on this device; empty ones allowed): writes 1 into `flag`
  // (a float32 scalar) when any element of any of them is inf or NaN, else 0. One launch on a GPU
  // (kernels/nonfinite_functor.h), never read by the host, so a captured step can hold it.
  virtual void any_nonfinite(const std::vector<TensorView>& tensors, const TensorView& flag) = 0;

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
  void apply_post_activation(PostActivation activation, const TensorView& y) {
    if (activation == PostActivation::kRelu) unary(UnaryOp::kRelu, y, y);
  }
  // A standard exception, not the core's typed error: the CUDA library compiles these defaults
  // too and links nothing of the core. Callers ask supports_graph_capture() first, so this only
  // reports a caller's mistake.
  [[noreturn]] void throw_capture_unsupported(const char* call) const {
    throw std::logic_error(std::string("[") + call + "] the " + name() +
                           " backend cannot capture graphs");
  }
};

// The backend that runs ops on `device` (FailedPreconditionError when its library is missing).
Backend& backend_for(const LogicalDevice& device);

}  // namespace gpuaccel
