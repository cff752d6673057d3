// Which thread captures a device's compute stream into a graph. A capture belongs to the thread
// that began it: only that thread's calls are recorded (or refused, when a capture cannot record
// them), while every other thread's calls keep running eagerly, on a stream that is not being
// captured (docs/gpu_step.md, "Other threads during a capture"). A capture cannot begin or end
// while another thread's op is in flight on the device, so no op straddles a capture's edge:
// each of its launches is either all before the capture, all beside it, or all after it.
// CUDA-free, so the tests' fake CUDA library follows the very same rules
// (tests/cpp/fake_cuda_library.cc, tests/cpp/capture_threads_test.cc).
#pragma once

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <stdexcept>
#include <thread>

namespace gpuaccel {

class CaptureOwner {
 public:
  // One op of any thread but the capture's edges (begin and end). For the capturing thread it
  // changes nothing. For another thread it holds the capture's begin and end off until the op
  // is done, and says whether a capture is under way meanwhile: then the op must not touch the
  // captured stream.
  class OpScope {
   public:
    explicit OpScope(CaptureOwner& owner) {
      if (owner.captures_here()) return;
      lock_ = std::shared_lock<std::shared_mutex>(owner.edges_);
      beside_capture_ = owner.owner_.load(std::memory_order_acquire) != std::thread::id();
    }
    bool beside_capture() const { return beside_capture_; }

   private:
    std::shared_lock<std::shared_mutex> lock_;
    bool beside_capture_ = false;
  };

  // Whether the calling thread is capturing.
  bool captures_here() const { return owner_.load(std::memory_order_acquire) == std::this_thread::get_id(); }

  // Makes the calling thread the capturer once other threads' ops in flight are done; `start`
  // (which begins the stream capture) runs first, and when it throws no capture is under way.
  // Throws std::logic_error when a capture is already under way on the device.
  template <typename Start>
  void begin(Start&& start) {
    std::unique_lock<std::shared_mutex> lock(edges_);
    if (owner_.load(std::memory_order_acquire) != std::thread::id()) {
      throw std::logic_error(captures_here() ? "this thread is already capturing on this device"
                                             : "another thread is capturing on this device");
    }
    start();
    owner_.store(std::this_thread::get_id(), std::memory_order_release);
  }

  // Ends the calling thread's capture once other threads' ops in flight are done, then runs
  // `finish` (which ends the stream capture and orders what ran beside it) before any other
  // thread's op can start. Throws std::logic_error when this thread has no capture under way.
  template <typename Finish>
  void end(Finish&& finish) {
    if (!captures_here()) throw std::logic_error("this thread has no capture under way on this device");
    std::unique_lock<std::shared_mutex> lock(edges_);
    owner_.store(std::thread::id(), std::memory_order_release);
    finish();
  }

 private:
  std::shared_mutex edges_;  // shared: an op of a non-capturing thread; exclusive: begin or end
  std::atomic<std::thread::id> owner_{};
};

}  // namespace gpuaccel
