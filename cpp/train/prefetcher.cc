// The bounded producer/consumer queue behind input prefetching (see prefetcher.h).
#include "train/prefetcher.h"

#include <cxxabi.h>

#include <string>

#include "core/errors.h"
#include "profiler/profiler.h"

namespace gpuaccel {

Prefetcher::Prefetcher(Producer producer, std::size_t capacity)
    : capacity_(capacity), producer_(std::move(producer)) {
  if (capacity_ < 1) {
    throw_value_error("Prefetcher", "capacity must be at least 1, got " + std::to_string(capacity));
  }
  if (!producer_) throw_value_error("Prefetcher", "the producer function is empty");
  thread_ = std::thread([this] { run(); });
}

Prefetcher::~Prefetcher() { close(); }

void Prefetcher::run() {
  profiler::set_current_thread_name("gpuaccel_prefetch");
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      not_full_.wait(lock, [this] { return stop_ || queue_.size() < capacity_; });
      if (stop_) return;
    }
    std::optional<Batch> batch;
    std::exception_ptr error;
    try {
      profiler::TraceScope scope(profiler::EventKind::kInputProduce, "prefetch_produce");
      batch = producer_();
    } catch (abi::__forced_unwind&) {
      // Thread cancellation (e.g. an interpreter tearing the thread down) must keep unwinding.
      std::lock_guard<std::mutex> lock(mutex_);
      finished_ = true;
      not_empty_.notify_all();
      throw;
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) return;
    if (error || !batch) {
      error_ = error;
      finished_ = true;
      not_empty_.notify_all();
      return;
    }
    queue_.push_back(std::move(*batch));
    not_empty_.notify_one();
  }
}

std::optional<Prefetcher::Batch> Prefetcher::next() {
  std::unique_lock<std::mutex> lock(mutex_);
  {
    profiler::TraceScope scope(profiler::EventKind::kInputWait, "prefetch_wait");
    not_empty_.wait(lock, [this] { return stop_ || finished_ || !queue_.empty(); });
  }
  if (!queue_.empty()) {
    Batch batch = std::move(queue_.front());
    queue_.pop_front();
    not_full_.notify_one();
    return batch;
  }
  if (error_) {
    std::exception_ptr error = error_;
    error_ = nullptr;  // delivered once
    std::rethrow_exception(error);
  }
  return std::nullopt;
}

void Prefetcher::close() {
  std::deque<Batch> dropped;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    dropped.swap(queue_);
  }
  not_full_.notify_all();
  not_empty_.notify_all();
  {
    std::lock_guard<std::mutex> join_lock(join_mutex_);
    if (thread_.joinable()) thread_.join();
  }
  // `dropped` is released here, outside the queue lock.
}

bool Prefetcher::stop_requested() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stop_;
}

std::size_t Prefetcher::buffered() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return queue_.size();
}

}  // namespace gpuaccel
