// Gradient all-reduce overlapped with the backward pass. As autograd finishes each weight's
// gradient (compute_gradients' on_ready hook), the gradient joins its bucket
// (distribute/gradient_buckets.h); a complete bucket is handed to this replica's communication
// thread, which sums it across replicas through the Collective while the calling thread goes on
// with the backward pass. The optimizer update waits for every bucket.
//
// One engine, one code path: the communication thread blocks in the engine (Gloo's TCP ring,
// the in-process reduction, or NCCL, which queues on its own communication stream and waits for
// it; backends/cuda/nccl_communicator.cc). On a GPU the bucket's moment matters: when a bucket
// becomes complete, the calling thread (the one that queued its gradient kernels) records an
// event of the device's Backend on its compute stream, before it queues the next layers'
// backward, and the engine orders the collective after that event. Recorded later, by the
// communication thread when it gets to the bucket, the event would make NCCL wait for kernels
// queued after the bucket as well, and the overlap would be lost. (On the CPU backend events
// are null and every call has run by then: nothing changes there.) Every
// engine call is bounded by the collective's timeout, so a dead peer makes the thread's call
// throw PeerUnavailableError, which the caller gets from the step: no hang.
//
// The result is the blocking path's (all_reduce_gradients) within float noise: the same
// weighted gradients are summed by the same engine, in buckets whose contents are fixed.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "backends/backend.h"
#include "distribute/collective.h"
#include "distribute/gradient_buckets.h"
#include "tensor/tensor.h"

namespace gpuaccel::distribute {

class OverlappedAllReduce {
 public:
  // `collective` must outlive this object; `bucket_bytes` > 0 (kDefaultBucketBytes).
  OverlappedAllReduce(Collective& collective, size_t bucket_bytes);
  ~OverlappedAllReduce();  // waits for the bucket in flight, if any
  OverlappedAllReduce(const OverlappedAllReduce&) = delete;
  OverlappedAllReduce& operator=(const OverlappedAllReduce&) = delete;

  // The gradients of `target` with respect to `params`, each weighted by `weight` and summed
  // across all replicas: the backward pass (compute_gradients) with buckets starting as their
  // gradients are final. A param that gets no gradient (unused) contributes zeros, as Keras
  // treats a None gradient in the all-reduce. Throws what the backward pass or the engine threw
  // (PeerUnavailableError when a peer died), after every bucket already started has finished.
  std::vector<Tensor> backward_and_all_reduce(const Tensor& target, const std::vector<Tensor>& params,
                                              double weight);

  // The same for gradients already computed (undefined entries: zeros): a replica with no
  // rows in the step still takes part in every bucket's call.
  std::vector<Tensor> all_reduce(const std::vector<Tensor>& grads, const std::vector<Tensor>& params,
                                 double weight);

  // Exposed pieces, for the GoogleTests and the autograd hook.
  // Starts a step over `params` (the bucket plan is made again when their shapes change).
  void begin(const std::vector<Tensor>& params, double weight);
  // params[index]'s gradient is final (undefined: none): weights it and starts the buckets it
  // completes.
  void gradient_ready(size_t index, const Tensor& grad);
  // Zeros for the gradients that never arrived, starts the remaining buckets, waits for all of
  // them and returns the summed gradients. Rethrows the communication thread's first error.
  std::vector<Tensor> finish();
  // After the step failed on this thread: starts nothing more and waits for the buckets in
  // flight (their errors are dropped: the step's own error is the one to report).
  void cancel() noexcept;

  const GradientBuckets* buckets() const { return buckets_.get(); }

 private:
  // A complete bucket: its gradients and the event recorded when they became final.
  struct ReadyBucket {
    std::vector<Tensor> tensors;
    Backend::EventHandle ready = nullptr;
  };

  void start(const std::vector<size_t>& buckets);
  void wait_idle();
  void comm_loop();
  // One event per bucket of the plan, made by the backend of the params' device (reused every
  // step: a bucket's event is recorded again only after the previous step's call returned).
  void make_ready_events(const std::vector<Tensor>& params);
  void destroy_ready_events() noexcept;

  Collective& collective_;
  const size_t bucket_bytes_;
  std::unique_ptr<GradientBuckets> buckets_;
  std::vector<Tensor> params_;
  std::vector<Tensor> grads_;  // this step's weighted gradients, then their sums
  double weight_ = 1.0;
  Backend* event_backend_ = nullptr;  // the backend that made ready_events_
  std::vector<Backend::EventHandle> ready_events_;

  std::mutex mutex_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<ReadyBucket> queue_;  // started buckets the thread has not taken yet
  bool busy_ = false;                      // the thread is inside the engine
  bool stopping_ = false;
  std::exception_ptr error_;  // the first engine error this step
  std::thread thread_;
};

}  // namespace gpuaccel::distribute
