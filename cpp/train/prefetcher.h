// Overlaps producing input batches with consuming them: a background thread calls a producer
// and keeps up to `capacity` batches ready in a bounded queue while the training step runs.
// The producer's exceptions reach the consumer (same type, via std::exception_ptr), and
// closing or destroying the prefetcher stops the thread without draining it, so an epoch that
// ends early (an error, a `break`) never hangs and never leaks a thread.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "tensor/tensor.h"

namespace gpuaccel {

class Prefetcher {
 public:
  using Batch = std::vector<Tensor>;
  // Returns the next batch, or nullopt when the stream has ended. May throw; the exception
  // is delivered to the consumer after the batches produced before it.
  using Producer = std::function<std::optional<Batch>()>;

  // Starts the background thread at once. capacity >= 1 (ValueError otherwise).
  Prefetcher(Producer producer, std::size_t capacity);
  ~Prefetcher();  // close()
  Prefetcher(const Prefetcher&) = delete;
  Prefetcher& operator=(const Prefetcher&) = delete;

  // Blocks until a batch is ready; nullopt at the end of the stream (and after close()).
  // Rethrows the producer's exception once the batches before it have been taken; later
  // calls return nullopt.
  std::optional<Batch> next();

  // Stops the thread and drops buffered batches. Waits only for a producer call already in
  // progress; idempotent; safe to call from any thread except the producer's own.
  void close();

  // True once close() was called: a slow producer may poll it to return early.
  bool stop_requested() const;

  std::size_t capacity() const { return capacity_; }
  // Batches produced and not yet taken (for tests and the profiler).
  std::size_t buffered() const;

 private:
  void run();

  const std::size_t capacity_;
  Producer producer_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;   // the producer waits here when capacity_ batches wait
  std::condition_variable not_empty_;  // the consumer waits here for a batch or the end
  std::deque<Batch> queue_;
  std::exception_ptr error_;  // set once, after the last good batch
  bool finished_ = false;     // the producer returned nullopt or threw
  bool stop_ = false;         // close() was called
  std::thread thread_;
  std::mutex join_mutex_;     // serializes concurrent close() calls around join()
};

}  // namespace gpuaccel
