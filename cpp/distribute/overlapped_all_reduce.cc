// See overlapped_all_reduce.h.
#include "distribute/overlapped_all_reduce.h"

#include <string>

#include "core/errors.h"
#include "core/thread_config.h"
#include "distribute/gradient_all_reduce.h"
#include "ops/autograd.h"
#include "profiler/profiler.h"

namespace gpuaccel::distribute {

OverlappedAllReduce::OverlappedAllReduce(Collective& collective, size_t bucket_bytes)
    : collective_(collective), bucket_bytes_(bucket_bytes) {
  if (bucket_bytes == 0) throw_value_error("overlapped_all_reduce", "bucket_bytes must be > 0, got 0");
  thread_ = std::thread([this] { comm_loop(); });
}

OverlappedAllReduce::~OverlappedAllReduce() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    queue_.clear();
  }
  work_cv_.notify_all();
  thread_.join();  // an engine call in flight ends by the collective's timeout at the latest
  destroy_ready_events();
}

std::vector<Tensor> OverlappedAllReduce::backward_and_all_reduce(const Tensor& target,
                                                                 const std::vector<Tensor>& params,
                                                                 double weight) {
  GradModeGuard grad_off(false);
  begin(params, weight);
  try {
    compute_gradients({target}, {Tensor()}, params,
                      [this](size_t index, const Tensor& grad) { gradient_ready(index, grad); });
    return finish();
  } catch (...) {
    cancel();
    throw;
  }
}

std::vector<Tensor> OverlappedAllReduce::all_reduce(const std::vector<Tensor>& grads,
                                                    const std::vector<Tensor>& params, double weight) {
  GradModeGuard grad_off(false);
  begin(params, weight);
  try {
    // Last weight first, as the backward pass delivers them: buckets start as they fill.
    for (size_t i = params.size(); i-- > 0;) gradient_ready(i, i < grads.size() ? grads[i] : Tensor());
    return finish();
  } catch (...) {
    cancel();
    throw;
  }
}

void OverlappedAllReduce::begin(const std::vector<Tensor>& params, double weight) {
  if (!buckets_ || !buckets_->matches(params)) {
    buckets_ = std::make_unique<GradientBuckets>(params, bucket_bytes_);
    destroy_ready_events();
  } else {
    buckets_->reset();
  }
  make_ready_events(params);
  params_ = params;
  grads_.assign(params.size(), Tensor());
  weight_ = weight;
  std::lock_guard<std::mutex> lock(mutex_);
  error_ = nullptr;
}

void OverlappedAllReduce::gradient_ready(size_t index, const Tensor& grad) {
  const std::vector<size_t> startable = buckets_->mark_ready(index);  // checks the index
  grads_[index] = weighted_gradient(grad, params_[index], weight_, /*fresh=*/true);
  start(startable);
}

std::vector<Tensor> OverlappedAllReduce::finish() {
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!buckets_->ready(i)) grads_[i] = weighted_gradient(Tensor(), params_[i], weight_, /*fresh=*/true);
  }
  start(buckets_->mark_rest_ready());
  {
    profiler::TraceScope scope(profiler::EventKind::kCollective, kAllReduceWaitTraceName);
    wait_idle();
  }
  std::exception_ptr error;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::swap(error, error_);
  }
  params_.clear();
  std::vector<Tensor> out = std::move(grads_);
  grads_.clear();
  if (error) std::rethrow_exception(error);
  return out;
}

void OverlappedAllReduce::cancel() noexcept {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.clear();
  }
  wait_idle();
  std::lock_guard<std::mutex> lock(mutex_);
  error_ = nullptr;
  params_.clear();
  grads_.clear();
}

void OverlappedAllReduce::start(const std::vector<size_t>& buckets) {
  if (buckets.empty()) return;
  std::vector<ReadyBucket> ready;
  for (size_t b : buckets) {
    ReadyBucket bucket;
    for (size_t param : buckets_->bucket(b)) bucket.tensors.push_back(grads_[param]);
    // Now, on this thread: behind the kernels that made (and weighted) these gradients and
    // before the kernels of the layers the backward pass reaches next.
    bucket.ready = ready_events_.at(b);
    if (bucket.ready != nullptr) event_backend_->record_event(bucket.ready, Backend::Stream::kCompute);
    ready.push_back(std::move(bucket));
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (ReadyBucket& bucket : ready) queue_.push_back(std::move(bucket));
  }
  work_cv_.notify_one();
}

void OverlappedAllReduce::make_ready_events(const std::vector<Tensor>& params) {
  Backend* backend = params.empty() ? nullptr : &backend_for(params.front().device());
  if (backend != event_backend_) destroy_ready_events();
  event_backend_ = backend;
  while (backend != nullptr && ready_events_.size() < buckets_->bucket_count()) {
    ready_events_.push_back(backend->create_event());  // null on the CPU backend
  }
}

void OverlappedAllReduce::destroy_ready_events() noexcept {
  for (Backend::EventHandle event : ready_events_) {
    if (event == nullptr) continue;
    try {
      event_backend_->destroy_event(event);
    } catch (...) {  // a device being lost: nothing left to order
    }
  }
  ready_events_.clear();
}

void OverlappedAllReduce::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_cv_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

void OverlappedAllReduce::comm_loop() {
  profiler::set_current_thread_name("all-reduce, rank " + std::to_string(collective_.rank()));
  // Engines that reduce on this thread (the in-process one) must not start a team of threads
  // competing with the replicas' compute.
  thread_config::ThreadTeamOverride team(1);
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    work_cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping
    ReadyBucket bucket = std::move(queue_.front());
    queue_.pop_front();
    // After a failed call the engine is broken (or the step is lost): the rest are dropped.
    const bool skip = error_ != nullptr;
    busy_ = true;
    lock.unlock();
    std::exception_ptr error;
    if (!skip) {
      try {
        profiler::TraceScope scope(profiler::EventKind::kCollective, kAllReduceTraceName);
        collective_.all_reduce_sum_after(bucket.tensors, bucket.ready);
        for (const Tensor& g : bucket.tensors) g.bump_version();  // written in place
      } catch (...) {
        error = std::current_exception();
      }
    }
    bucket.tensors.clear();  // before reporting idle: the step owns its gradients again
    lock.lock();
    if (error && !error_) error_ = error;
    busy_ = false;
    if (queue_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace gpuaccel::distribute
