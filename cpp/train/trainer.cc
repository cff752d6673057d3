// The per-batch steps of fit/evaluate/predict (Keras's train_step, test_step, predict_step).
#include "train/trainer.h"

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/elementwise.h"
#include "ops/shape_ops.h"

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

Trainer::Trainer(nn::LayerGraphPtr graph, nn::LossPtr loss,
                 std::shared_ptr<optim::Optimizer> optimizer, std::vector<nn::MetricPtr> metrics)
    : graph_(std::move(graph)),
      loss_(std::move(loss)),
      optimizer_(std::move(optimizer)),
      metrics_(std::move(metrics)) {
  if (!graph_) throw_error(ErrorCode::kInvalidArgument, "compile", "the model has no layer graph");
  if (!loss_) throw_error(ErrorCode::kInvalidArgument, "compile", "a loss is required");
}

Tensor Trainer::place(const Tensor& t, const std::vector<Tensor>& params) {
  if (params.empty() || !t.defined()) return t;
  const LogicalDevice& device = params[0].device();
  if (t.device().type == device.type && t.device().index == device.index) return t;
  return to_device(t, device);
}

std::vector<Tensor> Trainer::place(const std::vector<Tensor>& x, const std::vector<Tensor>& params) {
  std::vector<Tensor> out;
  out.reserve(x.size());
  for (const Tensor& t : x) out.push_back(place(t, params));
  return out;
}

double Trainer::train_step(const std::vector<Tensor>& x_in, const Tensor& y_in) {
  if (!optimizer_) {
    throw_error(ErrorCode::kFailedPrecondition, "fit",
                "the model was compiled without an optimizer; pass optimizer= to compile()");
  }
  const int64_t batch = batch_size_of(x_in);
  check_labels(y_in, batch);
  const std::vector<Tensor> params = graph_->trainable_weights();
  const std::vector<Tensor> x = place(x_in, params);
  const Tensor y = place(y_in, params);

  GradModeGuard grad_on(true);
  const std::vector<Tensor> outputs = graph_->forward(x, /*training=*/true);
  const Tensor loss = (*loss_)(y, outputs.at(0));
  std::vector<Tensor> grads;
  if (!params.empty()) {
    // Loss scaling (LossScaleOptimizer): backpropagate from loss * scale so small float16
    // gradients do not underflow; the optimizer unscales in its fused update. The reported loss
    // stays unscaled.
    const double scale = optimizer_->loss_scale();
    const Tensor target = scale != 1.0 ? mul(loss, scalar_like(scale, loss)) : loss;
    grads = compute_gradients({target}, {Tensor()}, params);
  }
  {
    GradModeGuard grad_off(false);
    if (!params.empty()) optimizer_->apply_gradients(grads, params);
  }
  const double value = nn::scalar_value(loss);
  absorb(value, batch, y, detach(outputs.at(0)));
  return value;
}

double Trainer::test_step(const std::vector<Tensor>& x_in, const Tensor& y_in) {
  const int64_t batch = batch_size_of(x_in);
  check_labels(y_in, batch);
  GradModeGuard grad_off(false);
  const std::vector<Tensor> params = graph_->trainable_weights();
  const std::vector<Tensor> outputs = graph_->forward(place(x_in, params), /*training=*/false);
  const Tensor y = place(y_in, params);
  const double value = nn::scalar_value((*loss_)(y, outputs.at(0)));
  absorb(value, batch, y, outputs.at(0));
  return value;
}

std::vector<Tensor> Trainer::predict_step(const std::vector<Tensor>& x) const {
  batch_size_of(x);
  GradModeGuard grad_off(false);
  return graph_->forward(place(x, graph_->trainable_weights()), /*training=*/false);
}

void Trainer::absorb(double loss, int64_t batch, const Tensor& y, const Tensor& y_pred) {
  loss_total_ += loss * double(batch);
  loss_count_ += double(batch);
  for (const nn::MetricPtr& metric : metrics_) metric->update(y, y_pred);
}

void Trainer::reset_metrics() {
  loss_total_ = 0.0;
  loss_count_ = 0.0;
  for (const nn::MetricPtr& metric : metrics_) metric->reset();
}

std::vector<std::pair<std::string, double>> Trainer::results() const {
  std::vector<std::pair<std::string, double>> out;
  out.emplace_back("loss", loss_count_ > 0 ? loss_total_ / loss_count_ : 0.0);
  for (const nn::MetricPtr& metric : metrics_) out.emplace_back(metric->name(), metric->result());
  return out;
}

}  // namespace gpuaccel::train
