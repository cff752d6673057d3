// The contract between data-parallel training and the engines that move gradients between
// replicas. The trainer only sees this interface; the engines behind it are real libraries
// (Gloo over TCP for CPU workers, NCCL for GPUs) or, for replicas that share one process, an
// in-process reduction. One Collective object belongs to one replica (one rank).
#pragma once

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "tensor/tensor.h"

namespace gpuaccel::distribute {

// A peer died, never arrived, or did not answer within the collective's timeout. The message
// names the rank(s) and the timeout. Python sees gpuaccel.errors.UnavailableError (as TF does).
class PeerUnavailableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Collective {
 public:
  virtual ~Collective() = default;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // "gloo", "nccl", "in_process": what the profile and the docs call the engine.
  virtual std::string engine() const = 0;

  // Sums each tensor element-wise across all ranks, in place. Every rank passes tensors of the
  // same shapes and dtypes in the same order; each tensor is contiguous and lives on this
  // replica's device. Blocks until done (or, for stream-ordered engines, until enqueued on the
  // replica's stream). Throws PeerUnavailableError past the timeout.
  virtual void all_reduce_sum(const std::vector<Tensor>& tensors) = 0;
  // The same, for tensors that were final at `ready`: an event of the replica's device backend
  // (Backend::create_event) recorded on its compute stream by the thread that queued them, at
  // the moment they became final (null: no event, as all_reduce_sum). A stream-ordered engine
  // (NCCL) called from another thread waits for that event, not for everything the compute
  // stream holds by the time of the call: work queued after it (the next layers' backward)
  // keeps running beside the collective. Engines that block (Gloo, in-process) ignore it: on
  // the CPU backend every call ran to completion before the tensors were handed over.
  virtual void all_reduce_sum_after(const std::vector<Tensor>& tensors, Backend::EventHandle ready) {
    (void)ready;
    all_reduce_sum(tensors);
  }

  // Copies root's tensors into every other rank's tensors, in place (initial weights).
  virtual void broadcast(const std::vector<Tensor>& tensors, int root) = 0;

  virtual void barrier() = 0;

  virtual std::chrono::milliseconds timeout() const = 0;
};

}  // namespace gpuaccel::distribute
