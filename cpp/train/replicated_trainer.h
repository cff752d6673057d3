// fit's step under MirroredStrategy / MultiWorkerMirroredStrategy: the global batch split
// across this process's replicas, each replica's forward and backward on its own thread (its
// own copy of the weights, its own optimizer state), gradients summed by an all-reduce, and the
// same update applied by every replica. Each replica is an ordinary Trainer with a ReplicaSync.
//
// Every replica, in every worker, sees the same global batch and takes the rows of its global
// rank: rows [B*rank/W, B*(rank+1)/W) of B for W replicas in all. Its loss is weighted by
// rows/B, as Keras divides per-example losses by the global batch size, so the summed gradient
// is one replica's gradient on the whole batch (up to float summation order).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "distribute/collective.h"
#include "distribute/gradient_buckets.h"
#include "distribute/overlapped_all_reduce.h"
#include "distribute/replica_threads.h"
#include "train/trainer.h"

namespace gpuaccel::train {

// How gradients are summed. `overlap`: bucket by bucket during the backward pass, on a
// communication thread per replica (distribute/overlapped_all_reduce.h); off: one blocking call
// after the backward pass. Every worker of a job must use the same options (they decide which
// collective calls each step makes).
struct AllReduceOptions {
  bool overlap = true;
  size_t bucket_bytes = distribute::kDefaultBucketBytes;
};

class ReplicatedTrainer {
 public:
  struct Replica {
    nn::LayerGraphPtr graph;
    std::shared_ptr<optim::Optimizer> optimizer;
    std::vector<nn::MetricPtr> metrics;
    std::shared_ptr<distribute::Collective> collective;  // rank = the replica's global rank
  };
  // `threads_per_replica`: each replica thread's OpenMP team (0: the process-wide setting).
  // Every collective must have the same world size; their ranks must be distinct.
  ReplicatedTrainer(std::vector<Replica> replicas, nn::LossPtr loss, int threads_per_replica,
                    AllReduceOptions options = AllReduceOptions());

  // One step on the global batch (the same batch on every worker). The loss stays in the
  // replicas' running means: results() reads it.
  void train_step(const std::vector<Tensor>& x, const Tensor& y);

  void reset_metrics();
  // ("loss", ...), then each metric: running means over every example this process's replicas
  // have seen since reset_metrics() (one host read per replica).
  std::vector<std::pair<std::string, double>> results();
  // The same over every worker's replicas: an all-reduce every worker must call together
  // (epoch ends). With one process it equals results().
  std::vector<std::pair<std::string, double>> results_across_workers();

  // Copies replica 0's weights into every other local replica (fit does this as it starts, so
  // set_weights/load_weights between fits reach every replica), then, with several workers,
  // checks that every worker uses the same AllReduceOptions (else every worker raises
  // InvalidArgumentError instead of mismatched collective calls hanging until the timeout) and
  // has replica 0 of the lowest rank broadcast the weights to the other workers.
  void sync_weights();

  int local_replicas() const { return int(replicas_.size()); }
  int world_replicas() const { return world_; }

 private:
  // Every replica's part of one step, on the replica threads.
  void run_replicas(const std::vector<Tensor>& x, const Tensor& y, const std::vector<int64_t>& begin,
                    const std::vector<int64_t>& end);
  // Sums and counts (loss first, then each metric) of this process's replicas.
  std::vector<double> local_sums_and_counts();
  std::vector<std::pair<std::string, double>> means(const std::vector<double>& sums_and_counts) const;

  // With several workers: raises on every worker unless all use this worker's options.
  void check_workers_agree_on_options();

  std::vector<Replica> replicas_;
  AllReduceOptions options_;
  std::vector<std::unique_ptr<distribute::OverlappedAllReduce>> overlaps_;  // empty: blocking
  std::vector<std::unique_ptr<Trainer>> trainers_;
  std::vector<Trainer::ReplicaSync> syncs_;
  std::vector<double> rows_seen_;  // per replica, since reset_metrics()
  distribute::ReplicaThreads threads_;
  int threads_per_replica_;
  int world_;
};

}  // namespace gpuaccel::train
