// See in_process_collective.h.
#include "distribute/in_process_collective.h"

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>

#include "backends/backend.h"
#include "core/errors.h"

namespace gpuaccel::distribute {

namespace {

// What the ranks of one group share: a reusable barrier with a timeout, and where each rank
// published the tensors of the collective in progress.
class Group {
 public:
  Group(int world_size, std::chrono::milliseconds timeout)
      : world_size_(world_size), timeout_(timeout), published_(size_t(world_size)) {}

  int world_size() const { return world_size_; }
  std::chrono::milliseconds timeout() const { return timeout_; }

  void publish(int rank, const std::vector<Tensor>* tensors) { published_[size_t(rank)] = tensors; }
  const std::vector<Tensor>& published(int rank) const { return *published_[size_t(rank)]; }

  // Blocks until every rank has arrived at this barrier; throws PeerUnavailableError past the
  // timeout or once a rank aborted.
  void arrive_and_wait(int rank, const char* what) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (!aborted_.empty()) throw PeerUnavailableError(aborted_);
    const long generation = generation_;
    if (++arrived_ == world_size_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    const bool done = cv_.wait_for(lock, timeout_, [&] {
      return generation_ != generation || !aborted_.empty();
    });
    if (generation_ != generation) return;
    if (aborted_.empty()) {
      aborted_ = "[in_process] rank " + std::to_string(rank) + " waited " +
                 std::to_string(timeout_.count()) + " ms in " + what + " for " +
                 std::to_string(world_size_ - arrived_) + " of " + std::to_string(world_size_) +
                 " replicas that never arrived";
      cv_.notify_all();
    }
    (void)done;
    throw PeerUnavailableError(aborted_);
  }

  void reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    aborted_.clear();
    arrived_ = 0;
    ++generation_;
  }

  void abort(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (aborted_.empty()) aborted_ = why;
    cv_.notify_all();
  }

 private:
  const int world_size_;
  const std::chrono::milliseconds timeout_;
  std::vector<const std::vector<Tensor>*> published_;
  std::mutex mutex_;
  std::condition_variable cv_;
  int arrived_ = 0;
  long generation_ = 0;
  std::string aborted_;  // non-empty: the reason every later wait throws
};

void sum_slice(const std::vector<Tensor*>& ranks_tensors, int64_t begin, int64_t end) {
  const size_t world = ranks_tensors.size();
  for (int64_t k = begin; k < end; ++k) {
    float total = static_cast<const float*>(ranks_tensors[0]->data())[k];
    for (size_t r = 1; r < world; ++r) total += static_cast<const float*>(ranks_tensors[r]->data())[k];
    for (size_t r = 0; r < world; ++r) static_cast<float*>(ranks_tensors[r]->data())[k] = total;
  }
}

// Replicas on logical GPUs split from one physical GPU cannot be NCCL ranks (NCCL refuses two
// ranks on one device: "Duplicate GPU detected"). Their tensors are staged through host memory
// instead: each rank copies its own tensors to the host and writes the result back, on its own
// thread and its device's stream, and the host copies are reduced like CPU replicas' (TF's
// ReductionToOneDevice for virtual GPUs, with the host as the one device). Host tensors are
// used as they are.
std::vector<Tensor> staged_on_host(const std::vector<Tensor>& tensors) {
  std::vector<Tensor> host;
  host.reserve(tensors.size());
  for (const Tensor& t : tensors) {
    if (t.is_cpu()) {
      host.push_back(t);
      continue;
    }
    Tensor copy = Tensor::empty(t.shape(), t.dtype(), LogicalDevice{}, "in_process");
    backend_for(t.device()).copy_to_host(t.view(), copy.data());  // waits for the stream
    host.push_back(copy);
  }
  return host;
}

void write_back_from_host(const std::vector<Tensor>& host, const std::vector<Tensor>& tensors) {
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (tensors[i].is_cpu()) continue;
    // From pageable memory: returns once staged, so `host` may go right after.
    backend_for(tensors[i].device()).copy_from_host(host[i].data(), tensors[i].view());
  }
}

class InProcessCollective final : public Collective {
 public:
  InProcessCollective(std::shared_ptr<Group> group, int rank) : group_(std::move(group)), rank_(rank) {}

  int rank() const override { return rank_; }
  int world_size() const override { return group_->world_size(); }
  std::string engine() const override { return "in_process"; }
  std::chrono::milliseconds timeout() const override { return group_->timeout(); }
  Group& group() { return *group_; }

  void all_reduce_sum(const std::vector<Tensor>& tensors) override {
    for (const Tensor& t : tensors) check_reducible(t);
    const std::vector<Tensor>& host = on_host(tensors, /*copy_values=*/true);
    reduce_on_host(host);
    if (&host != &tensors) write_back_from_host(host, tensors);
  }

  void broadcast(const std::vector<Tensor>& tensors, int root) override {
    if (root < 0 || root >= world_size()) {
      throw_error(ErrorCode::kInvalidArgument, "broadcast",
                  "root " + std::to_string(root) + " is not a rank of a group of " +
                      std::to_string(world_size()));
    }
    for (const Tensor& t : tensors) check_reducible(t);
    const std::vector<Tensor>& host = on_host(tensors, /*copy_values=*/rank_ == root);
    broadcast_on_host(host, root);
    if (&host != &tensors && rank_ != root) write_back_from_host(host, tensors);
  }

  void barrier() override { group_->arrive_and_wait(rank_, "barrier"); }

 private:
  // What this rank publishes: `tensors` themselves when all are in host memory, else host
  // copies (their values when `copy_values`, else buffers to receive into) kept in staged_.
  // staged_ outlives the call: a rank that throws after publishing must not free what the
  // others may still be reading.
  const std::vector<Tensor>& on_host(const std::vector<Tensor>& tensors, bool copy_values) {
    bool all_on_host = true;
    for (const Tensor& t : tensors) all_on_host = all_on_host && t.is_cpu();
    if (all_on_host) return tensors;
    if (copy_values) {
      staged_ = staged_on_host(tensors);
    } else {
      staged_.clear();
      for (const Tensor& t : tensors) {
        staged_.push_back(t.is_cpu() ? t : Tensor::empty(t.shape(), t.dtype(), LogicalDevice{}, "in_process"));
      }
    }
    return staged_;
  }

  void reduce_on_host(const std::vector<Tensor>& tensors) {
    group_->publish(rank_, &tensors);
    group_->arrive_and_wait(rank_, "all_reduce_sum");
    const int world = world_size();
    std::vector<Tensor*> column(size_t(world), nullptr);
    for (size_t i = 0; i < tensors.size(); ++i) {
      for (int r = 0; r < world; ++r) {
        const std::vector<Tensor>& theirs = group_->published(r);
        check_matches(theirs, tensors, i, r);
        column[size_t(r)] = const_cast<Tensor*>(&theirs[i]);
      }
      // This rank owns elements [n*rank/world, n*(rank+1)/world) of every tensor.
      const int64_t n = tensors[i].numel();
      const int64_t begin = n * rank_ / world, end = n * (rank_ + 1) / world;
      sum_slice(column, begin, end);
    }
    // Nobody returns (and touches its tensors again) before every slice is written.
    group_->arrive_and_wait(rank_, "all_reduce_sum");
  }

  void broadcast_on_host(const std::vector<Tensor>& tensors, int root) {
    group_->publish(rank_, &tensors);
    group_->arrive_and_wait(rank_, "broadcast");
    if (rank_ != root) {
      const std::vector<Tensor>& source = group_->published(root);
      for (size_t i = 0; i < tensors.size(); ++i) {
        check_matches(source, tensors, i, root);
        std::memcpy(tensors[i].data(), source[i].data(),
                    size_t(tensors[i].numel()) * dtype_size(tensors[i].dtype()));
      }
    }
    group_->arrive_and_wait(rank_, "broadcast");
  }

  static void check_reducible(const Tensor& t) {
    if (!t.defined() || !t.is_contiguous() || t.dtype() != DType::kFloat32) {
      throw_error(ErrorCode::kInvalidArgument, "in_process",
                  "the in-process engine reduces contiguous float32 tensors (in host memory, "
                  "device tensors staged through it); got " +
                      (t.defined() ? t.describe() : std::string("an undefined tensor")));
    }
  }

  void check_matches(const std::vector<Tensor>& theirs, const std::vector<Tensor>& mine, size_t i,
                     int their_rank) const {
    if (theirs.size() != mine.size() || theirs[i].shape() != mine[i].shape() ||
        theirs[i].dtype() != mine[i].dtype()) {
      const std::string what =
          "[in_process] rank " + std::to_string(rank_) + " and rank " + std::to_string(their_rank) +
          " passed different tensor lists (tensor " + std::to_string(i) + ": " + mine[i].describe() +
          " vs " + (i < theirs.size() ? theirs[i].describe() : std::string("none")) + ")";
      group_->abort(what);
      throw_error(ErrorCode::kInvalidArgument, "in_process", what);
    }
  }

  std::shared_ptr<Group> group_;
  int rank_;
  std::vector<Tensor> staged_;  // this rank's host copies of device tensors (see on_host)
};

}  // namespace

std::vector<std::shared_ptr<Collective>> make_in_process_group(int world_size,
                                                               std::chrono::milliseconds timeout) {
  if (world_size < 1) {
    throw_error(ErrorCode::kInvalidArgument, "in_process",
                "world_size must be >= 1, got " + std::to_string(world_size));
  }
  if (timeout.count() <= 0) {
    throw_error(ErrorCode::kInvalidArgument, "in_process",
                "timeout must be positive, got " + std::to_string(timeout.count()) + " ms");
  }
  auto group = std::make_shared<Group>(world_size, timeout);
  std::vector<std::shared_ptr<Collective>> members;
  for (int r = 0; r < world_size; ++r) members.push_back(std::make_shared<InProcessCollective>(group, r));
  return members;
}

void abort_in_process_group(Collective& member, const std::string& why) {
  auto* in_process = dynamic_cast<InProcessCollective*>(&member);
  if (in_process != nullptr) in_process->group().abort(why);
}

void reset_in_process_group(Collective& member) {
  auto* in_process = dynamic_cast<InProcessCollective*>(&member);
  if (in_process != nullptr) in_process->group().reset();
}

}  // namespace gpuaccel::distribute
