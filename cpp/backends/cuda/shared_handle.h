// A library handle (cuDNN's, cuBLASLt's) that one device's threads share, used by one thread at
// a time. cuDNN is thread-safe only "so long as the threads do not share the same cuDNN handle
// simultaneously" (cuDNN developer guide, Odds and Ends: Thread Safety), and a training thread,
// a predict thread and a data pipeline may all run ops on one GPU. One handle per device, bound
// to the device's one stream, keeps every launch in that stream's order; a lease holds the
// handle's lock for as long as its calls run, so two threads never use it at once. The lock is
// recursive: a thread that already holds a lease may take another (nested calls), which cannot
// race with itself. The handle is made by the first lease, under the same lock. CUDA-free so
// that the CPU tests check it (tests/cpp/cuda_shared_handle_test.cc).
#pragma once

#include <mutex>
#include <utility>

namespace gpuaccel::cuda {

template <typename Handle>
class SharedHandle {
 public:
  // The handle, locked for this thread until the lease is destroyed.
  class Lease {
   public:
    Handle get() const { return handle_; }

   private:
    friend class SharedHandle;
    Lease(std::unique_lock<std::recursive_mutex> lock, Handle handle) : lock_(std::move(lock)), handle_(handle) {}
    std::unique_lock<std::recursive_mutex> lock_;
    Handle handle_;
  };

  // `make()` creates the handle on the first lease; if it throws, nothing is kept and the next
  // lease tries again.
  template <typename Make>
  Lease lease(Make&& make) {
    std::unique_lock<std::recursive_mutex> lock(mutex_);
    if (!made_) {
      handle_ = make();
      made_ = true;
    }
    return Lease(std::move(lock), handle_);
  }

 private:
  std::recursive_mutex mutex_;
  Handle handle_{};
  bool made_ = false;
};

}  // namespace gpuaccel::cuda
