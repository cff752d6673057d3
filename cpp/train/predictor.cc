// See predictor.h.
#include "train/predictor.h"

#include <utility>

#include "core/errors.h"
#include "ops/autograd.h"
#include "ops/shape_ops.h"

namespace gpuaccel::train {

Predictor::Predictor(nn::LayerGraphPtr graph) : graph_(std::move(graph)) {
  if (!graph_) throw_error(ErrorCode::kInvalidArgument, "predict", "the model has no layer graph");
}

std::vector<Tensor> Predictor::predict_step(const std::vector<Tensor>& x_in) {
  if (x_in.empty() || !x_in[0].defined() || x_in[0].ndim() == 0)
    throw_error(ErrorCode::kInvalidArgument, "predict", "inputs must have a batch dimension");
  GradModeGuard grad_off(false);
  const std::vector<Tensor> x = batches_.place(x_in, graph_->trainable_weights());
  ReleasePlacedBatch release(batches_);
  std::vector<Tensor> outputs = graph_->forward(x, /*training=*/false);
  // An output that passes an input through (or views it) would be an upload buffer, which the
  // upload after next overwrites: it gets its own copy, queued before release().
  for (Tensor& out : outputs) {
    for (const Tensor& in : x) {
      if (out.defined() && in.defined() && out.storage() == in.storage()) {
        out = clone(out);
        break;
      }
    }
  }
  return outputs;
}

}  // namespace gpuaccel::train
