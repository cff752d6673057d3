// One Keras training or evaluation step for a whole batch, in C++ (predict: train/predictor.h):
// forward through the layer graph, the loss, the backward pass, the optimizer's fused update, and the running loss
// and metrics. The Python fit loop calls these once per batch with the GIL released.
//
// A step never waits for the device: the running loss, every metric's total and the label range
// checks accumulate in device scalars on the weights' device (ops only, no device-to-host copy,
// no synchronize), and results() reads them all with one copy when something asks for logs (a
// progress bar refresh, an epoch end, a callback that reads them), as Keras does with
// steps_per_execution. A bad label found inside a step raises at that read (docs/training.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "nn/layer_graph.h"
#include "nn/losses.h"
#include "nn/metrics.h"
#include "ops/deferred_checks.h"
#include "optim/optimizer.h"
#include "train/batch_placement.h"
#include "train/step_capture_policy.h"
#include "train/step_signature.h"

namespace gpuaccel::distribute {
class Collective;
class OverlappedAllReduce;
}

namespace gpuaccel::train {

class Trainer {
 public:
  // `optimizer` may be null for a model compiled only to evaluate (then train_step throws).
  Trainer(nn::LayerGraphPtr graph, nn::LossPtr loss, std::shared_ptr<optim::Optimizer> optimizer,
          std::vector<nn::MetricPtr> metrics);

  // Forward (training behaviour), loss, gradients of the trainable weights, optimizer update;
  // then the loss tracker and metrics absorb the batch. Returns the batch's loss, a float32
  // scalar left on the weights' device (reading it is the caller's choice, and a sync).
  // `sample_weight` (N,) (Keras's fit(sample_weight=/class_weight=)), when defined, weighs the
  // per-example losses (nn::Loss::weighted); such a step always runs eagerly (not captured).
  Tensor train_step(const std::vector<Tensor>& x, const Tensor& y,
                    const Tensor& sample_weight = Tensor());
  // Forward (inference behaviour), loss and metrics; no update. Returns the batch's loss as
  // train_step does.
  Tensor test_step(const std::vector<Tensor>& x, const Tensor& y,
                   const Tensor& sample_weight = Tensor());
  void reset_metrics();
  // ("loss", running mean weighted by batch size), then each metric's running result. Reads
  // every accumulator with one device-to-host copy (none before the first step); raises here
  // the InvalidArgumentError of a label range check that failed inside a step since the last
  // read (the check is then forgotten).
  std::vector<std::pair<std::string, double>> results();
  // How many times results() read from the device: the fit loop's tests count these.
  int64_t host_reads() const { return host_reads_; }

  // Keras's compile(jit_compile=...): whether train steps may be captured into device graphs
  // and replayed (train/step_capture_policy.h). Resets the policy and drops captured graphs.
  void set_jit_compile(JitCompile mode);
  const StepCapturePolicy& capture_policy() const { return *capture_; }

  // Data-parallel training (train/replicated_trainer.h): this replica's loss is weighted by its
  // share of the global batch and its gradients are summed across replicas by `collective`
  // before the update, so every replica applies the same update. Null (the default): a plain
  // step. The pointee is the caller's and must outlive the steps.
  // With `overlap` set, the all-reduce starts bucket by bucket during the backward pass
  // (distribute/overlapped_all_reduce.h); null: after it (the blocking path).
  struct ReplicaSync {
    distribute::Collective* collective = nullptr;
    distribute::OverlappedAllReduce* overlap = nullptr;
    double loss_weight = 1.0;
  };
  void set_replica_sync(const ReplicaSync* sync) { replica_sync_ = sync; }

  // Whether train_step and test_step upload host batches to a GPU on its copy stream
  // (train/batch_placement.h; on by default) or on the compute stream (to compare the two).
  void set_upload_on_copy_stream(bool on) { batches_.set_upload_on_copy_stream(on); }
  bool upload_on_copy_stream() const { return batches_.upload_on_copy_stream(); }
  int64_t copy_stream_uploads() const { return batches_.copy_stream_uploads(); }

  const nn::LayerGraphPtr& graph() const { return graph_; }
  const std::shared_ptr<optim::Optimizer>& optimizer() const { return optimizer_; }

 private:
  struct PlacedBatch {
    std::vector<Tensor> x;
    Tensor y;
    Tensor sample_weight;  // undefined when the step has none
  };
  // The step's inputs, labels and (optional) sample weights on the model's device.
  PlacedBatch place_batch(const std::vector<Tensor>& x_in, const Tensor& y_in,
                          const Tensor& sample_weight_in, const std::vector<Tensor>& params);
  // What train_step and test_step begin with: the model's trainable weights and the batch
  // placed for them; the upload's buffers go back when it goes out of scope (a step that
  // returns or throws), or earlier through release.now().
  struct StepBatch {
    StepBatch(Trainer& trainer, const std::vector<Tensor>& x_in, const Tensor& y_in,
              const Tensor& sample_weight_in);
    const std::vector<Tensor> params;
    const PlacedBatch placed;
    ReleasePlacedBatch release;  // last: made only once the batch is placed
  };
  void absorb(const Tensor& loss, int64_t batch, const Tensor& y, const Tensor& y_pred);
  // The step's device work and its host bookkeeping, as one function the capture policy runs
  // eagerly or under capture.
  Tensor run_train_step(const std::vector<Tensor>& x, const Tensor& y, int64_t batch,
                        const std::vector<Tensor>& params, const Tensor& sample_weight = Tensor());
  // The compiled loss (weighted when `sample_weight` is defined) plus the layers' added losses.
  Tensor compute_loss(const Tensor& y, const Tensor& y_pred, const Tensor& sample_weight) const;

  // What a step changes on the host besides launching work: a replayed graph changes none of
  // it, so the Trainer applies the difference a captured step made.
  struct HostCounters {
    double loss_count = 0;
    std::vector<double> metric_counts;
    int64_t iterations = 0;
  };
  HostCounters host_counters() const;
  // Restores counters from before a failed capture attempt (the optimizer's device-resident
  // counters restart from the restored count).
  void set_host_counters(const HostCounters& counters);
  // A captured step's inputs live in these buffers (a graph reads the addresses it was
  // captured with), with the loss tensor it writes and its host-counter increments.
  struct CapturedStep {
    std::vector<Tensor> inputs;  // x..., then y, on the weights' device
    Tensor loss;
    HostCounters increments;
  };

  nn::LayerGraphPtr graph_;
  nn::LossPtr loss_;
  std::shared_ptr<optim::Optimizer> optimizer_;
  std::vector<nn::MetricPtr> metrics_;
  Tensor loss_total_;  // sum of loss * batch size, float32 on the weights' device
  double loss_count_ = 0.0;
  DeferredChecks label_checks_;
  int64_t host_reads_ = 0;
  const ReplicaSync* replica_sync_ = nullptr;
  std::unique_ptr<StepCapturePolicy> capture_;
  std::unordered_map<StepSignature, CapturedStep, StepSignatureHash> captured_;
  BatchPlacement batches_;
};

}  // namespace gpuaccel::train
