// What the CUDA backend library offers data-parallel training on GPUs: NCCL communicators whose
// collectives run on the backend's per-device stream (backends/cuda/nccl_communicator.cc). The
// core wraps them as a distribute::Collective (distribute/nccl_collective.h). Like CudaLibrary,
// calls report a status and a message and never throw across the library boundary. NCCL itself
// is opened with dlopen on first use, so the backend loads (and every single-GPU program runs)
// on machines without libnccl.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/dtype.h"

namespace gpuaccel {

enum class NcclStatus {
  kOk = 0,
  kUnavailable = 1,      // a peer died, failed, or the timeout passed (communicator aborted)
  kInvalidArgument = 2,  // bad rank, id, dtype or buffer
  kNotInstalled = 3,     // libnccl could not be opened (the message says where it looked)
  kError = 4,            // anything else; see the message
};

// One buffer of a collective call: `count` elements of `dtype` on the communicator's device.
struct NcclBuffer {
  void* data = nullptr;
  size_t count = 0;
  DType dtype = DType::kFloat32;
};

class NcclLibrary {
 public:
  // NCCL's version code (22809 for 2.28.9), or 0 with *error saying why it cannot be opened.
  virtual int version(std::string* error) = 0;
  // A new communicator id (ncclUniqueId's bytes); rank 0 makes it, every rank needs it.
  virtual NcclStatus unique_id(std::string* id, std::string* error) = 0;
  // Joins communicator `id` as `rank` of `world_size` on `device`; returns once every rank has
  // joined, or kUnavailable after `timeout_ms`. *communicator is freed with destroy().
  virtual NcclStatus init_rank(int device, int world_size, int rank, const std::string& id,
                               int64_t timeout_ms, void** communicator, std::string* error) = 0;
  // Sums every buffer across ranks, in place, as one NCCL group on the communicator's stream,
  // and waits (up to `timeout_ms`) for it to finish; past the timeout or on a peer's failure the
  // communicator is aborted and every later call returns kUnavailable. The group runs after
  // `ready_event` (a cudaEvent_t of the device's Backend, recorded on its compute stream when
  // the buffers were final) or, when it is null, after everything queued on the compute stream
  // by the time of the call.
  virtual NcclStatus all_reduce_sum(void* communicator, const NcclBuffer* buffers, size_t count,
                                    void* ready_event, int64_t timeout_ms, std::string* error) = 0;
  // Copies root's buffers into every rank's, in place; waits as all_reduce_sum does.
  virtual NcclStatus broadcast(void* communicator, const NcclBuffer* buffers, size_t count,
                               int root, int64_t timeout_ms, std::string* error) = 0;
  virtual void destroy(void* communicator) = 0;

 protected:
  ~NcclLibrary() = default;  // the library owns its one instance
};

}  // namespace gpuaccel
