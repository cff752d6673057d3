// See replicated_trainer.h.
#include "train/replicated_trainer.h"

#include <exception>

#include "backends/backend.h"
#include "core/errors.h"
#include "core/thread_config.h"
#include "distribute/gradient_all_reduce.h"
#include "distribute/in_process_collective.h"
#include "ops/autograd.h"
#include "ops/creation.h"
#include "ops/shape_ops.h"

namespace gpuaccel::train {

namespace {

// Rows [begin, end) of `t` along the batch axis, a view.
Tensor rows_of(const Tensor& t, int64_t begin, int64_t end) {
  std::vector<SliceSpec> spec(size_t(t.ndim()));
  spec[0] = SliceSpec{begin, end, 1};
  for (int d = 1; d < t.ndim(); ++d) spec[size_t(d)] = SliceSpec{0, t.dim(d), 1};
  return slice(t, spec);
}

std::vector<Tensor> all_weights(const nn::LayerGraph& graph) {
  std::vector<Tensor> out;
  for (const nn::LayerPtr& layer : graph.layers()) {
    for (const nn::Weight& w : layer->weights()) out.push_back(w.value);
  }
  return out;
}

[[noreturn]] void fail(const std::string& what) {
  throw_error(ErrorCode::kInvalidArgument, "distribute", what);
}

}  // namespace

ReplicatedTrainer::ReplicatedTrainer(std::vector<Replica> replicas, nn::LossPtr loss,
                                     int threads_per_replica, AllReduceOptions options)
    : replicas_(std::move(replicas)),
      options_(options),
      syncs_(replicas_.size()),
      rows_seen_(replicas_.size(), 0.0),
      threads_(std::max<int>(1, int(replicas_.size()))),
      threads_per_replica_(threads_per_replica),
      world_(0) {
  if (replicas_.empty()) fail("a replicated trainer needs at least one replica");
  if (threads_per_replica < 0) {
    fail("threads_per_replica must be >= 0, got " + std::to_string(threads_per_replica));
  }
  if (options.bucket_bytes == 0) fail("bucket_bytes must be > 0, got 0");
  world_ = replicas_[0].collective ? replicas_[0].collective->world_size() : 0;
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& r = replicas_[i];
    if (!r.graph || !r.optimizer || !r.collective) {
      fail("replica " + std::to_string(i) + " lacks a graph, an optimizer or a collective");
    }
    if (r.collective->world_size() != world_) {
      fail("replica " + std::to_string(i) + "'s collective has world size " +
           std::to_string(r.collective->world_size()) + ", replica 0's has " + std::to_string(world_));
    }
    if (r.metrics.size() != replicas_[0].metrics.size()) {
      fail("every replica needs the same metrics");
    }
    auto trainer = std::make_unique<Trainer>(r.graph, loss, r.optimizer, r.metrics);
    // A captured device graph would replay without the all-reduce's host synchronization.
    trainer->set_jit_compile(JitCompile::kOff);
    syncs_[i].collective = r.collective.get();
    if (options.overlap) {
      overlaps_.push_back(std::make_unique<distribute::OverlappedAllReduce>(*r.collective, options.bucket_bytes));
      syncs_[i].overlap = overlaps_.back().get();
    }
    trainer->set_replica_sync(&syncs_[i]);
    trainers_.push_back(std::move(trainer));
  }
}

void ReplicatedTrainer::train_step(const std::vector<Tensor>& x, const Tensor& y) {
  if (x.empty() || !x[0].defined() || x[0].ndim() == 0) fail("inputs must have a batch dimension");
  const int64_t batch = x[0].dim(0);
  if (!y.defined() || y.ndim() == 0 || y.dim(0) != batch) {
    fail("inputs have " + std::to_string(batch) + " examples but labels do not; x and y must "
         "have the same first dimension");
  }
  // Callbacks (LearningRateScheduler, ReduceLROnPlateau) change replica 0's optimizer, the one
  // the user's model holds; every replica must step with the same rate.
  const double rate = replicas_[0].optimizer->learning_rate();
  for (size_t i = 1; i < replicas_.size(); ++i) {
    if (replicas_[i].optimizer->learning_rate() != rate) replicas_[i].optimizer->set_learning_rate(rate);
  }
  std::vector<int64_t> begin(replicas_.size()), end(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const int64_t rank = replicas_[i].collective->rank();
    begin[i] = batch * rank / world_;
    end[i] = batch * (rank + 1) / world_;
    syncs_[i].loss_weight = batch > 0 ? double(end[i] - begin[i]) / double(batch) : 0.0;
  }
  try {
    run_replicas(x, y, begin, end);
  } catch (...) {
    // Every replica thread has returned: the group can serve the next step (fit may go on
    // after a callback or the user handles the error).
    for (const Replica& replica : replicas_) distribute::reset_in_process_group(*replica.collective);
    throw;
  }
  for (size_t i = 0; i < replicas_.size(); ++i) rows_seen_[i] += double(end[i] - begin[i]);
}

void ReplicatedTrainer::run_replicas(const std::vector<Tensor>& x, const Tensor& y,
                                     const std::vector<int64_t>& begin,
                                     const std::vector<int64_t>& end) {
  threads_.run([&](int i) {
    thread_config::ThreadTeamOverride team(threads_per_replica_);
    const Replica& replica = replicas_[size_t(i)];
    try {
      if (end[i] > begin[i]) {
        std::vector<Tensor> xs;
        for (const Tensor& t : x) xs.push_back(rows_of(t, begin[i], end[i]));
        trainers_[size_t(i)]->train_step(xs, rows_of(y, begin[i], end[i]));
      } else {
        // A global batch smaller than the replica count leaves this replica no rows: it still
        // takes part in the all-reduce (with zeros) and applies the same update.
        GradModeGuard grad_off(false);
        const std::vector<Tensor> params = replica.graph->trainable_weights();
        // Undefined gradients count as zeros; with overlap the same buckets as the others'.
        std::vector<Tensor> grads(params.size());
        if (overlaps_.empty()) {
          distribute::all_reduce_gradients(*replica.collective, grads, params);
        } else {
          grads = overlaps_[size_t(i)]->all_reduce(grads, params, 1.0);
        }
        if (!params.empty()) replica.optimizer->apply_gradients(grads, params);
      }
    } catch (const std::exception& e) {
      // The other replicas would otherwise wait for this one in the all-reduce until timeout.
      distribute::abort_in_process_group(
          *replica.collective, "[distribute] replica " + std::to_string(replica.collective->rank()) +
                                   " failed: " + e.what());
      throw;
    }
  });
}

void ReplicatedTrainer::reset_metrics() {
  for (auto& trainer : trainers_) trainer->reset_metrics();
  std::fill(rows_seen_.begin(), rows_seen_.end(), 0.0);
}

std::vector<double> ReplicatedTrainer::local_sums_and_counts() {
  std::vector<double> out(2 * (1 + replicas_[0].metrics.size()), 0.0);
  for (size_t i = 0; i < trainers_.size(); ++i) {
    const auto results = trainers_[i]->results();
    out[0] += results.at(0).second * rows_seen_[i];
    out[1] += rows_seen_[i];
    for (size_t m = 0; m < replicas_[i].metrics.size(); ++m) {
      const double count = replicas_[i].metrics[m]->count();
      out[2 * (m + 1)] += results.at(m + 1).second * count;
      out[2 * (m + 1) + 1] += count;
    }
  }
  return out;
}

std::vector<std::pair<std::string, double>> ReplicatedTrainer::means(
    const std::vector<double>& sums_and_counts) const {
  std::vector<std::pair<std::string, double>> out;
  out.emplace_back("loss", nn::running_mean(sums_and_counts[0], sums_and_counts[1]));
  const auto& metrics = replicas_[0].metrics;
  for (size_t m = 0; m < metrics.size(); ++m) {
    out.emplace_back(metrics[m]->name(),
                     nn::running_mean(sums_and_counts[2 * (m + 1)], sums_and_counts[2 * (m + 1) + 1]));
  }
  return out;
}

std::vector<std::pair<std::string, double>> ReplicatedTrainer::results() {
  return means(local_sums_and_counts());
}

std::vector<std::pair<std::string, double>> ReplicatedTrainer::results_across_workers() {
  std::vector<double> local = local_sums_and_counts();
  if (world_ == int(replicas_.size())) return means(local);
  // Every local replica must take part in the collective; replica 0 carries this process's
  // sums, the others zeros.
  // float32, as Keras's metric totals are.
  const Shape shape{int64_t(local.size())};
  const std::vector<float> mine(local.begin(), local.end());
  const std::vector<float> none(local.size(), 0.0f);
  // On each replica's device, where its engine reduces (NCCL: device memory).
  std::vector<Tensor> buffers(replicas_.size());
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const std::vector<Tensor> weights = replicas_[i].graph->trainable_weights();
    const LogicalDevice device = weights.empty() ? LogicalDevice{} : weights[0].device();
    buffers[i] = from_host(i == 0 ? mine.data() : none.data(), shape, DType::kFloat32, device);
  }
  threads_.run([&](int i) { replicas_[size_t(i)].collective->all_reduce_sum({buffers[size_t(i)]}); });
  std::vector<float> reduced(local.size());
  backend_for(buffers[0].device()).copy_to_host(buffers[0].view(), reduced.data());
  return means(std::vector<double>(reduced.begin(), reduced.end()));
}

void ReplicatedTrainer::sync_weights() {
  GradModeGuard grad_off(false);
  const std::vector<Tensor> source = all_weights(*replicas_[0].graph);
  for (size_t i = 1; i < replicas_.size(); ++i) {
    const std::vector<Tensor> target = all_weights(*replicas_[i].graph);
    if (target.size() != source.size()) {
      fail("replica " + std::to_string(i) + " has " + std::to_string(target.size()) +
           " weights, replica 0 has " + std::to_string(source.size()));
    }
    for (size_t w = 0; w < source.size(); ++w) {
      const LogicalDevice& to = target[w].device();
      const bool same = source[w].device().type == to.type && source[w].device().index == to.index;
      copy_into(same ? source[w] : to_device(source[w], to), target[w]);
    }
  }
  if (world_ == int(replicas_.size())) return;
  check_workers_agree_on_options();
  threads_.run([&](int i) {
    const std::vector<Tensor> weights = all_weights(*replicas_[size_t(i)].graph);
    replicas_[size_t(i)].collective->broadcast(weights, 0);
    for (const Tensor& w : weights) w.bump_version();  // written in place
  });
}

void ReplicatedTrainer::check_workers_agree_on_options() {
  // Rank 0's options reach everyone; then the number of workers that differ is summed, so a
  // worker that agrees with rank 0 also learns that another does not.
  const std::vector<int64_t> mine = {options_.overlap ? 1 : 0, int64_t(options_.bucket_bytes)};
  std::vector<int64_t> rank0(mine.size());
  int64_t disagreeing = 0;
  threads_.run([&](int i) {
    const std::vector<Tensor> weights = replicas_[size_t(i)].graph->trainable_weights();
    const LogicalDevice device = weights.empty() ? LogicalDevice{} : weights[0].device();
    Tensor options = from_host(mine.data(), Shape{int64_t(mine.size())}, DType::kInt64, device);
    replicas_[size_t(i)].collective->broadcast({options}, 0);
    std::vector<int64_t> root(mine.size());
    backend_for(device).copy_to_host(options.view(), root.data());
    const int64_t differs = i == 0 && root != mine ? 1 : 0;
    Tensor count = from_host(&differs, Shape{1}, DType::kInt64, device);
    replicas_[size_t(i)].collective->all_reduce_sum({count});
    if (i == 0) {
      rank0 = root;
      backend_for(device).copy_to_host(count.view(), &disagreeing);
    }
  });
  if (disagreeing == 0) return;
  auto describe = [](const std::vector<int64_t>& o) {
    return std::string(o[0] ? "overlapped" : "blocking") + " all-reduce, buckets of " +
           std::to_string(o[1]) + " bytes";
  };
  throw_error(ErrorCode::kInvalidArgument, "distribute",
              std::to_string(disagreeing) + " worker(s) use other gradient all-reduce options than "
              "worker 0 (" + describe(rank0) + "; this worker: " + describe(mine) + "). Every "
              "worker must make the same collective calls: set GPUACCEL_ALL_REDUCE_OVERLAP and "
              "GPUACCEL_ALL_REDUCE_BUCKET_BYTES (or CommunicationOptions.bytes_per_pack) alike on "
              "every worker");
}

}  // namespace gpuaccel::train
