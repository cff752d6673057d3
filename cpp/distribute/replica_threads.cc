// See replica_threads.h.
#include "distribute/replica_threads.h"

#include <string>

#include "core/errors.h"
#include "distribute/collective.h"

namespace gpuaccel::distribute {

namespace {

bool is_peer_unavailable(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const PeerUnavailableError&) {
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

ReplicaThreads::ReplicaThreads(int replicas) : replicas_(replicas), errors_(size_t(replicas)) {
  if (replicas < 1) {
    throw_error(ErrorCode::kInvalidArgument, "distribute",
                "a replica group needs at least 1 replica, got " + std::to_string(replicas));
  }
  for (int r = 1; r < replicas; ++r) threads_.emplace_back([this, r] { worker_loop(r); });
}

ReplicaThreads::~ReplicaThreads() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_cv_.notify_all();
  for (std::thread& t : threads_) t.join();
}

void ReplicaThreads::worker_loop(int rank) {
  long seen = 0;
  for (;;) {
    const std::function<void(int)>* work = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stopping_ || round_ != seen; });
      if (stopping_) return;
      seen = round_;
      work = work_;
    }
    std::exception_ptr error;
    try {
      (*work)(rank);
    } catch (...) {
      error = std::current_exception();
    }
    std::lock_guard<std::mutex> lock(mutex_);
    errors_[size_t(rank)] = error;
    if (--pending_ == 0) done_cv_.notify_all();
  }
}

void ReplicaThreads::run(const std::function<void(int)>& work) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    work_ = &work;
    pending_ = replicas_ - 1;
    for (std::exception_ptr& e : errors_) e = nullptr;
    ++round_;
  }
  start_cv_.notify_all();
  std::exception_ptr own;
  try {
    work(0);
  } catch (...) {
    own = std::current_exception();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  work_ = nullptr;
  errors_[0] = own;
  // A replica that failed on its own is the news; the others then failed waiting for it.
  std::exception_ptr first;
  for (const std::exception_ptr& e : errors_) {
    if (!e) continue;
    if (!first) first = e;
    if (!is_peer_unavailable(e)) std::rethrow_exception(e);
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace gpuaccel::distribute
