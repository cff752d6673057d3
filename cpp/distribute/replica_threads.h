// The threads data-parallel replicas run on: one long-lived thread per replica beyond the first
// (the caller runs replica 0), so per-thread caches (oneDNN scratch buffers, OpenMP teams, the
// profiler's buffers) survive from step to step instead of being rebuilt by fresh threads.
#pragma once

#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace gpuaccel::distribute {

class ReplicaThreads {
 public:
  explicit ReplicaThreads(int replicas);
  ~ReplicaThreads();
  ReplicaThreads(const ReplicaThreads&) = delete;
  ReplicaThreads& operator=(const ReplicaThreads&) = delete;

  int replicas() const { return replicas_; }
  // Runs work(r) for every replica r concurrently (r = 0 on the calling thread) and returns
  // when all are done. If any threw, rethrows the lowest rank's exception that is not a
  // PeerUnavailableError (the replica that failed, not the ones that then stopped waiting for
  // it), else the lowest rank's.
  void run(const std::function<void(int)>& work);

 private:
  void worker_loop(int rank);

  const int replicas_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(int)>* work_ = nullptr;
  long round_ = 0;
  int pending_ = 0;
  bool stopping_ = false;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace gpuaccel::distribute
