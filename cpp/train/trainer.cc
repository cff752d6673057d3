// The per-batch steps of fit and evaluate (Keras's train_step, test_step; predict_step: predictor.cc).
#include "train/trainer.h"

#include "core/errors.h"
#include "distribute/gradient_all_reduce.h"
#include "distribute/overlapped_all_reduce.h"
#include "memory/memory_manager.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/host_read.h"
#include "ops/shape_ops.h"
#include "train/step_capture_blockers.h"

namespace gpuaccel::train {

namespace {

int64_t batch_size_of(const std::vector<Tensor>& x) {
  if (x.empty() || !x[0].defined() || x[0].ndim() == 0) {
    throw_error(ErrorCode::kInvalidArgument, "Model", "inputs must have a batch dimension");
  }
  return x[0].dim(0);
}

void check_labels(const Tensor& y, int64_t batch) {
  if (!y.defined()) throw_error(ErrorCode::kInvalidArgument, "Model", "labels (y) are missing");
  if (y.ndim() == 0 || y.dim(0) != batch) {
    throw_error(ErrorCode::kInvalidArgument, "Model",
                "inputs have " + std::to_string(batch) + " examples but labels have shape " +
                    shape_to_string(y.shape()) + "; x and y must have the same first dimension");
  }
}

}  // namespace

Trainer::PlacedBatch Trainer::place_batch(const std::vector<Tensor>& x_in, const Tensor& y_in,
                                          const Tensor& sample_weight_in,
                                          const std::vector<Tensor>& params) {
  // One placement for inputs, labels and weights, so they travel in one upload.
  std::vector<Tensor> tensors = x_in;
  tensors.push_back(y_in);
  if (sample_weight_in.defined()) tensors.push_back(sample_weight_in);
  PlacedBatch placed;
  placed.x = batches_.place(tensors, params);
  if (sample_weight_in.defined()) {
    placed.sample_weight = placed.x.back();
    placed.x.pop_back();
  }
  placed.y = placed.x.back();
  placed.x.pop_back();
  return placed;
}

Trainer::StepBatch::StepBatch(Trainer& trainer, const std::vector<Tensor>& x_in, const Tensor& y_in,
                              const Tensor& sample_weight_in)
    : params(trainer.graph_->trainable_weights()),
      placed(trainer.place_batch(x_in, y_in, sample_weight_in, params)),
      release(trainer.batches_) {}

Trainer::Trainer(nn::LayerGraphPtr graph, nn::LossPtr loss,
                 std::shared_ptr<optim::Optimizer> optimizer, std::vector<nn::MetricPtr> metrics)
    : graph_(std::move(graph)),
      loss_(std::move(loss)),
      optimizer_(std::move(optimizer)),
      metrics_(std::move(metrics)),
      capture_(std::make_unique<StepCapturePolicy>(JitCompile::kAuto)) {
  if (!graph_) throw_error(ErrorCode::kInvalidArgument, "compile", "the model has no layer graph");
  if (!loss_) throw_error(ErrorCode::kInvalidArgument, "compile", "a loss is required");
}

Tensor Trainer::compute_loss(const Tensor& y, const Tensor& y_pred, const Tensor& sample_weight) const {
  // Keras's compute_loss: the compiled loss plus the losses the layers added in this forward
  // pass (add_loss), which sample weights do not scale.
  Tensor total = sample_weight.defined() ? loss_->weighted(y, y_pred, sample_weight)
                                         : (*loss_)(y, y_pred);
  for (const Tensor& added : graph_->added_losses()) {
    total = add(total, added.dtype() == total.dtype() ? added : cast(added, total.dtype()));
  }
  return total;
}

Tensor Trainer::train_step(const std::vector<Tensor>& x_in, const Tensor& y_in,
                           const Tensor& sample_weight_in) {
  if (!optimizer_) {
    throw_error(ErrorCode::kFailedPrecondition, "fit",
                "the model was compiled without an optimizer; pass optimizer= to compile()");
  }
  const int64_t batch = batch_size_of(x_in);
  check_labels(y_in, batch);
  StepBatch step(*this, x_in, y_in, sample_weight_in);
  const std::vector<Tensor>& params = step.params;
  const auto& [x, y, sample_weight] = step.placed;
  if (sample_weight.defined()) return run_train_step(x, y, batch, params, sample_weight);
  const LogicalDevice& device = params.empty() ? x.at(0).device() : params[0].device();
  Backend& backend = backend_for(device);
  const std::string blocker = step_capture_blocker(*graph_, *optimizer_, device);
  if (!capture_->may_capture(backend, blocker)) return run_train_step(x, y, batch, params);

  // Capturable: the step reads its inputs from buffers that stay put for its signature.
  StepSignature signature;
  for (const Tensor& t : x) {
    signature.input_shapes.push_back(t.shape());
    signature.input_dtypes.push_back(t.dtype());
  }
  signature.input_shapes.push_back(y.shape());
  signature.input_dtypes.push_back(y.dtype());
  for (const Tensor& p : params) signature.state.push_back(p.data());
  signature.host_scalars.push_back(optimizer_->learning_rate());
  CapturedStep& captured = captured_[signature];
  if (captured.inputs.empty()) {
    for (const Tensor& t : x) captured.inputs.push_back(Tensor::empty(t.shape(), t.dtype(), t.device(), "StepInput"));
    captured.inputs.push_back(Tensor::empty(y.shape(), y.dtype(), y.device(), "StepInput"));
  }
  {
    GradModeGuard grad_off(false);
    for (size_t i = 0; i < x.size(); ++i) copy_into(x[i], captured.inputs[i]);
    copy_into(y, captured.inputs.back());
  }
  step.release.now();  // the graph reads its own input buffers, not the upload's
  const std::vector<Tensor> staged_x(captured.inputs.begin(), captured.inputs.end() - 1);
  const HostCounters before = host_counters();
  Tensor loss;
  const StepRun run = capture_->run(
      backend, signature, blocker,
      [&] { loss = run_train_step(staged_x, captured.inputs.back(), batch, params); },
      [&] { set_host_counters(before); });
  if (run == StepRun::kCaptured) {
    const HostCounters after = host_counters();
    captured.loss = loss;
    captured.increments.loss_count = after.loss_count - before.loss_count;
    captured.increments.iterations = after.iterations - before.iterations;
    for (size_t i = 0; i < after.metric_counts.size(); ++i) {
      captured.increments.metric_counts.push_back(after.metric_counts[i] - before.metric_counts[i]);
    }
  } else if (run == StepRun::kReplayed) {
    // The graph advanced the device-resident counters (Adam's t) itself: only the host's
    // counts follow.
    loss_count_ += captured.increments.loss_count;
    for (size_t i = 0; i < metrics_.size(); ++i) {
      metrics_[i]->set_count(metrics_[i]->count() + captured.increments.metric_counts.at(i));
    }
    optimizer_->count_replayed_steps(captured.increments.iterations);
    loss = captured.loss;
    // The replay wrote the weights (the update, moving statistics) without running the host
    // code that bumps their versions: bump them here, so derived copies are remade.
    for (const nn::LayerPtr& layer : graph_->layers()) {
      for (const nn::Weight& w : layer->weights()) w.value.bump_version();
    }
  }
  if (capture_->fell_back()) captured_.clear();  // eager for good: the staging buffers go
  return loss;
}

Tensor Trainer::run_train_step(const std::vector<Tensor>& x, const Tensor& y, int64_t batch,
                               const std::vector<Tensor>& params, const Tensor& sample_weight) {
  DeferredChecks::Scope deferred(label_checks_);
  GradModeGuard grad_on(true);
  const std::vector<Tensor> outputs = graph_->forward(x, /*training=*/true);
  const Tensor loss = compute_loss(y, outputs.at(0), sample_weight);
  std::vector<Tensor> grads;
  if (!params.empty()) {
    // Loss scaling (LossScaleOptimizer): backpropagate from loss * scale so small float16
    // gradients do not underflow; the optimizer unscales in its fused update. The reported loss
    // stays unscaled.
    const Tensor device_scale = optimizer_->device_loss_scale(loss.device());
    const double scale = device_scale.defined() ? 1.0 : optimizer_->loss_scale();
    const Tensor target = device_scale.defined() ? mul(loss, device_scale)
                          : scale != 1.0         ? mul(loss, scalar_like(scale, loss))
                                                 : loss;
    // A replica of a data-parallel step weighs its gradients by its share of the global
    // batch, so the all-reduced sum is the gradient of the global batch's mean loss.
    if (replica_sync_ != nullptr && replica_sync_->overlap != nullptr) {
      grads = replica_sync_->overlap->backward_and_all_reduce(target, params, replica_sync_->loss_weight);
    } else {
      grads = compute_gradients({target}, {Tensor()}, params);
      if (replica_sync_ != nullptr) {
        GradModeGuard grad_off(false);
        distribute::all_reduce_gradients(*replica_sync_->collective, grads, params,
                                         replica_sync_->loss_weight);
      }
    }
  }
  {
    GradModeGuard grad_off(false);
    if (!params.empty()) optimizer_->apply_gradients(grads, params);
  }
  GradModeGuard grad_off(false);
  const Tensor value = detach(loss);
  absorb(value, batch, y, detach(outputs.at(0)));
  return value;
}

Trainer::HostCounters Trainer::host_counters() const {
  HostCounters c;
  c.loss_count = loss_count_;
  for (const nn::MetricPtr& metric : metrics_) c.metric_counts.push_back(metric->count());
  c.iterations = optimizer_ ? optimizer_->steps_taken() : 0;
  return c;
}

void Trainer::set_host_counters(const HostCounters& c) {
  loss_count_ = c.loss_count;
  for (size_t i = 0; i < metrics_.size(); ++i) metrics_[i]->set_count(c.metric_counts.at(i));
  if (optimizer_) optimizer_->restore_steps_taken(c.iterations);
}

void Trainer::set_jit_compile(JitCompile mode) {
  captured_.clear();
  capture_ = std::make_unique<StepCapturePolicy>(mode);
}

Tensor Trainer::test_step(const std::vector<Tensor>& x_in, const Tensor& y_in,
                          const Tensor& sample_weight_in) {
  const int64_t batch = batch_size_of(x_in);
  check_labels(y_in, batch);
  GradModeGuard grad_off(false);
  DeferredChecks::Scope deferred(label_checks_);
  StepBatch step(*this, x_in, y_in, sample_weight_in);
  const auto& [x, y, sample_weight] = step.placed;
  const std::vector<Tensor> outputs = graph_->forward(x, /*training=*/false);
  const Tensor value = compute_loss(y, outputs.at(0), sample_weight);
  absorb(value, batch, y, outputs.at(0));
  return value;
}

void Trainer::absorb(const Tensor& loss, int64_t batch, const Tensor& y, const Tensor& y_pred) {
  // Keras's loss tracker: a Mean weighted by the batch size. An empty batch adds nothing: its
  // loss is a mean over no values (NaN), and NaN * 0 would turn the whole mean into NaN.
  if (batch > 0) {
    nn::accumulate(loss_total_, mul(loss, scalar_like(double(batch), loss)));
    loss_count_ += double(batch);
  }
  for (const nn::MetricPtr& metric : metrics_) metric->update(y, y_pred);
}

void Trainer::reset_metrics() {
  nn::zero_in_place(loss_total_);
  loss_count_ = 0.0;
  for (const nn::MetricPtr& metric : metrics_) metric->reset();
}

std::vector<std::pair<std::string, double>> Trainer::results() {
  // Everything accumulated on the device, packed into one read: the loss total, each metric's
  // total (when it has counted anything), then the pending label checks.
  std::vector<Tensor> scalars;
  if (loss_count_ > 0 && loss_total_.defined()) scalars.push_back(loss_total_);
  for (const nn::MetricPtr& metric : metrics_) {
    if (metric->count() > 0 && metric->total().defined()) scalars.push_back(metric->total());
  }
  const size_t accumulators = scalars.size();
  for (Tensor& t : label_checks_.scalars()) scalars.push_back(std::move(t));
  std::vector<double> values;
  if (!scalars.empty()) {
    values = read_scalars(scalars);
    ++host_reads_;
  }
  label_checks_.settle(std::vector<double>(values.begin() + long(accumulators), values.end()));

  std::vector<std::pair<std::string, double>> out;
  size_t next = 0;
  const bool has_loss = loss_count_ > 0 && loss_total_.defined();
  out.emplace_back("loss", has_loss ? nn::running_mean(values[next++], loss_count_) : 0.0);
  for (const nn::MetricPtr& metric : metrics_) {
    const bool has = metric->count() > 0 && metric->total().defined();
    out.emplace_back(metric->name(), has ? nn::running_mean(values[next++], metric->count()) : 0.0);
  }
  return out;
}

}  // namespace gpuaccel::train
